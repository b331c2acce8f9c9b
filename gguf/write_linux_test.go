package gguf

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// writeData writes what f.Write writes, from the file's offset on, and
// fails as f.Write fails, with the same error.
func TestWriteDataLikeWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(1, 2))
	var want []byte
	for _, n := range []int{0, 1, 4095, 3 << 20, 17} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if m, err := writeData(f, p); m != n || err != nil {
			t.Fatalf("writeData of %d bytes: %d, %v", n, m, err)
		}
		want = append(want, p...)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes (%v), want the %d written", len(got), err, len(want))
	}

	for _, tc := range []struct {
		name, path string
		flag       int
		errno      syscall.Errno
	}{
		{"read-only handle", path, os.O_RDONLY, syscall.EBADF},
		{"full device", "/dev/full", os.O_WRONLY, syscall.ENOSPC},
	} {
		g, err := os.OpenFile(tc.path, tc.flag, 0)
		if err != nil {
			t.Logf("%s not tried: %v", tc.name, err)
			continue
		}
		_, wantErr := g.Write([]byte("abc"))
		n, gotErr := writeData(g, []byte("abc"))
		g.Close()
		if n != 0 || !errors.Is(gotErr, tc.errno) || wantErr == nil || gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: writeData gave %d, %v; f.Write gave %v", tc.name, n, gotErr, wantErr)
		}
	}
}
