package gguf

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// A shard that cannot be opened because the process has no file
// descriptor left is reported as that (EMFILE), not as a file that is not
// GGUF: this process's limit is lowered until one descriptor is left, and
// the second shard's open fails.
func TestOpenTooManyFiles(t *testing.T) {
	paths := copyShardSet(t)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	low := old
	low.Cur = uint64(len(entries)) + 16
	if low.Cur >= old.Cur {
		t.Skip("the limit is already low")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Skip(err)
			}
			break
		}
		held = append(held, f)
	}
	if len(held) == 0 {
		t.Skip("no descriptor to free")
	}
	held[len(held)-1].Close()
	held = held[:len(held)-1]
	m, err := Open(paths[0])
	if err == nil {
		m.Close()
		t.Fatal("opened both shards with one descriptor free")
	}
	if !errors.Is(err, syscall.EMFILE) || errors.Is(err, ErrNotGGUF) {
		t.Errorf("got %v, want EMFILE and not ErrNotGGUF", err)
	}
}
