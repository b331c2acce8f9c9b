package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
)

// syncBuffer is a bytes.Buffer safe for the watcher goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A command that stops by itself after the signal (its context is
// cancelled): Finish gives 128 + the signal and says what is unwritten.
func TestInterruptStopsCommand(t *testing.T) {
	dir := t.TempDir()
	f := &Files{}
	f.Write(filepath.Join(dir, "a.gguf"), -1)
	f.Write(filepath.Join(dir, "b.gguf"), -1)
	if err := f.Check(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	it := f.catchInterrupts("prog", &log, time.Minute, func(int) { t.Error("hard exit") })
	// b.gguf completes before the signal; a.gguf has a temporary file.
	os.WriteFile(filepath.Join(dir, "b.gguf"), []byte("done"), 0o644)
	tmp, err := gguf.CreateTemp(filepath.Join(dir, "a.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-it.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	status, interrupted := it.Finish()
	if !interrupted || status != 143 {
		t.Errorf("Finish: %d, %v; want 143, true", status, interrupted)
	}
	for _, want := range []string{"prog: interrupted by SIGTERM", "not written: " + filepath.Join(dir, "a.gguf"), "complete before the interrupt: " + filepath.Join(dir, "b.gguf")} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("%q does not say %q", log.String(), want)
		}
	}
	if _, err := os.Stat(tmp.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Error("temporary file left")
	}
}

// A command that does not stop: after the grace time (or at once) the
// temporary files go and the process exits with 128 + the signal.
func TestInterruptHardExit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
		sig   syscall.Signal
		want  int
	}{
		{"grace", 50 * time.Millisecond, syscall.SIGINT, 130},
		{"at once", AtOnce, syscall.SIGHUP, 129},
		{"closed pipe", AtOnce, syscall.SIGPIPE, 141},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "x.gguf")
			f := &Files{}
			f.Write(out, -1)
			if err := f.Check(&bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			tmp, err := gguf.CreateTemp(out)
			if err != nil {
				t.Fatal(err)
			}
			defer tmp.Close()
			exited := make(chan int, 1)
			var log syncBuffer
			it := f.catchInterrupts("prog", &log, tc.grace, func(code int) { exited <- code })
			defer it.Stop()
			syscall.Kill(os.Getpid(), tc.sig)
			select {
			case code := <-exited:
				if code != tc.want {
					t.Errorf("exit %d, want %d", code, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no exit")
			}
			if _, err := os.Stat(tmp.Name()); !errors.Is(err, os.ErrNotExist) {
				t.Error("temporary file left")
			}
			if !strings.Contains(log.String(), "not written: "+out) {
				t.Errorf("message %q", log.String())
			}
		})
	}
}

// Without a signal Finish reports nothing.
func TestInterruptNone(t *testing.T) {
	f := &Files{}
	it := f.CatchInterrupts("prog", &bytes.Buffer{}, DefaultGrace)
	if status, interrupted := it.Finish(); interrupted || status != 0 {
		t.Errorf("Finish without a signal: %d, %v", status, interrupted)
	}
	it.Stop() // twice is fine
}

// With Keep (quantize --resume) an interrupt keeps this process's
// temporary files, stopped in time or not, and says how to continue; a
// sweep spares the files the command continues (Continue) and removes a
// stale progress record silently with its temporary file.
func TestInterruptKeeps(t *testing.T) {
	for _, grace := range []time.Duration{time.Minute, AtOnce} {
		dir := t.TempDir()
		out := filepath.Join(dir, "x.gguf")
		f := &Files{Keep: true}
		f.Write(out, -1)
		if err := f.Check(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		tmp, err := gguf.CreateTemp(out)
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Close()
		exited := make(chan int, 1)
		var log syncBuffer
		it := f.catchInterrupts("prog", &log, grace, func(code int) { exited <- code })
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		if grace == AtOnce {
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatal("no exit")
			}
			it.Stop()
		} else {
			<-it.Context().Done()
			if status, interrupted := it.Finish(); !interrupted || status != 130 {
				t.Errorf("Finish: %d, %v", status, interrupted)
			}
		}
		if _, err := os.Stat(tmp.Name()); err != nil {
			t.Errorf("grace %v: temporary file removed", grace)
		}
		if !strings.Contains(log.String(), "temporary files kept") || !strings.Contains(log.String(), "--resume") {
			t.Errorf("message %q", log.String())
		}
	}
}

func TestSweepSparesContinued(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	// Two stale files of a process that is gone (pid 2^22+1 is above the
	// usual pid_max), each with a progress record.
	var stale []string
	for _, r := range []string{"aaa", "bbb"} {
		p := filepath.Join(dir, ".x.gguf.tmp-4194305-"+r)
		os.WriteFile(p, []byte("x"), 0o644)
		os.WriteFile(p+".progress", []byte("{}\n"), 0o644)
		stale = append(stale, p)
	}
	var log bytes.Buffer
	f := &Files{Continue: stale[:1]}
	f.Write(out, -1)
	if err := f.Check(&log); err != nil {
		t.Fatal(err)
	}
	for i, p := range stale {
		for _, q := range []string{p, p + ".progress"} {
			_, err := os.Stat(q)
			if kept := err == nil; kept != (i == 0) {
				t.Errorf("%s kept: %v", q, kept)
			}
		}
	}
	if strings.Contains(log.String(), ".progress") || !strings.Contains(log.String(), "removed "+stale[1]) {
		t.Errorf("log %q", log.String())
	}
}
