package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzJournal gives --resume a fuzzed progress record beside the real
// temporary file of an interrupted run. Whatever the record says, a
// resumed run writes the bytes of an uninterrupted one, or FindResumable
// refuses the file; nothing panics. The record is what a crash, a full
// disk or another program may have left, and resuming trusts the bytes it
// names as done.
func FuzzJournal(f *testing.F) {
	dir := f.TempDir()
	out := filepath.Join(dir, "out.gguf")
	in, plan := tinyQ8Plan(f, out)
	ctx := context.Background()
	if err := Run(ctx, in, plan.Outputs, Options{}); err != nil {
		f.Fatal(err)
	}
	want, _ := os.ReadFile(out)
	os.Remove(out)
	os.Remove(SidecarPath(out))

	// The interrupted run: stopped after half its tensors, kept.
	stopped, cancel := context.WithCancel(ctx)
	err := Run(stopped, in, plan.Outputs, Options{Keep: true, Threads: 1, Progress: cancelAtHalf(cancel)})
	cancel()
	if err != context.Canceled {
		f.Fatalf("interrupted run: %v", err)
	}
	tmp := keptTemp(f, out)
	kept, _ := os.ReadFile(tmp)
	record, _ := os.ReadFile(journalPath(tmp))
	if res, err := FindResumable(ctx, in, plan.Outputs, func(string) {}); err != nil || res[0] == nil || res[0].Done == 0 {
		f.Fatalf("the interrupted run's own record is not resumed: %v", err)
	}
	f.Add(record)
	lines := bytes.SplitAfter(record, []byte("\n"))
	f.Add(bytes.Join(lines[:len(lines)/2], nil))
	if len(lines) > 4 {
		f.Add(bytes.Join([][]byte{lines[0], lines[2], lines[1], lines[3]}, nil))
	}
	f.Add(bytes.Replace(record, []byte(`"offset":`), []byte(`"offset":1`), 1))
	f.Add(bytes.Replace(record, []byte(`"size":`), []byte(`"size":-`), 2))
	f.Add(append(append([]byte{}, record...), lines[len(lines)-2]...))

	f.Fuzz(func(t *testing.T, rec []byte) {
		if err := os.WriteFile(tmp, kept, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(journalPath(tmp), rec, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, p := range []string{out, SidecarPath(out), tmp, journalPath(tmp)} {
				os.Remove(p)
			}
		}()
		res, err := FindResumable(ctx, in, plan.Outputs, func(string) {})
		if err != nil {
			return
		}
		if err := Run(ctx, in, plan.Outputs, Options{Resume: res}); err != nil {
			t.Fatalf("resuming with the fuzzed record: %v", err)
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("resumed with the fuzzed record, the output differs from an uninterrupted run (%v)", err)
		}
	})
}
