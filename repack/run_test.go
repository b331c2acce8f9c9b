package repack

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// TestRunReadFailure cuts the input short after it was opened, so that a
// tensor read fails part way while the next tensor's stream is already
// started: Run must fail with the short read, not hang, and leave no
// output behind.
func TestRunReadFailure(t *testing.T) {
	q4km := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	data, err := os.ReadFile(q4km)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := NewPlan(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Cut in the middle of the second converted tensor that directly
	// follows another converted one.
	cut, seen := int64(-1), 0
	for i := 1; i < len(p.Tensors) && cut < 0; i++ {
		if p.Tensors[i].Converted() && p.Tensors[i-1].Converted() {
			if seen++; seen == 2 {
				_, off := m.TensorFile(i)
				cut = off + p.Tensors[i].InBytes/2
			}
		}
	}
	if cut < 0 {
		t.Fatal("no two converted tensors in a row")
	}
	if err := os.Truncate(in, cut); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.gguf")
	errc := make(chan error, 1)
	go func() {
		_, err := Run(m, p, out)
		errc <- err
	}()
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		t.Fatal("Run hangs after a failed read")
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "in.gguf" {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// TestConverterBoundsShufflers: no more shuffling goroutines than buffer
// sets, whatever Options.Threads asks (--threads 100000 started that many
// per tensor, and a few million ran out of memory).
func TestConverterBoundsShufflers(t *testing.T) {
	for _, threads := range []int{1, 2, 16, 1000, 1 << 24} {
		c := newConverter(threads)
		if c.threads < 1 || c.threads > cap(c.free) || c.threads > threads {
			t.Errorf("Threads %d: %d shufflers for %d buffer sets", threads, c.threads, cap(c.free))
		}
	}
}
