package repack

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/splitter"
)

// onFirstWrite is a Plan's Log that calls do once, on the first tensor's
// line: every output is then created and none is complete, so what do
// changes at the final paths is met by the commit and by nothing before it.
type onFirstWrite struct {
	once sync.Once
	do   func()
}

func (w *onFirstWrite) Write(b []byte) (int, error) {
	w.once.Do(w.do)
	return len(b), nil
}

// nonEmptyDir puts a directory holding a file at path, which no rename can
// replace and no os.Remove can remove.
func nonEmptyDir(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Error(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), []byte("x"), 0o644); err != nil {
		t.Error(err)
	}
}

// TestRunCommit writes a three-shard set over older files with their
// sidecars and makes one final path or sidecar unusable while the shards
// are written. A commit that stops part way must keep every complete file
// (in place or under its temporary name), leave no old sidecar beside a new
// file and name every file in its error; the sidecars go before their files.
func TestRunCommit(t *testing.T) {
	q4km := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	m, err := gguf.Open(q4km)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	side := func(path string) string { return path + ".side" }
	for _, tc := range []struct {
		name      string
		overwrite bool
		old       bool                             // older outputs and sidecars are there
		spoil     func(t *testing.T, out []string) // run while the shards are written
		placed    []int                            // shards new and in place
		failed    int                              // -1: the commit succeeds
		exist     bool                             // the error wraps os.ErrExist
	}{
		{name: "replaced, sidecars removed", overwrite: true, old: true, failed: -1, placed: []int{0, 1, 2}},
		{name: "new, over stray sidecars", old: false, failed: -1, placed: []int{0, 1, 2},
			spoil: func(t *testing.T, out []string) {
				for _, p := range out {
					os.WriteFile(side(p), []byte("stray"), 0o644)
				}
			}},
		{name: "later final path a directory", overwrite: true, old: true, failed: 1, placed: []int{0},
			spoil: func(t *testing.T, out []string) { nonEmptyDir(t, out[1]) }},
		{name: "later final path appears", old: false, failed: 1, placed: []int{0}, exist: true,
			spoil: func(t *testing.T, out []string) { os.WriteFile(out[1], []byte("theirs"), 0o644) }},
		// The first sidecar cannot be removed: its file must not be
		// replaced, nor any after it.
		{name: "first sidecar stays", overwrite: true, old: true, failed: 0,
			spoil: func(t *testing.T, out []string) { nonEmptyDir(t, side(out[0])) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log := &onFirstWrite{}
			p, err := NewPlan(m, Options{Threads: 2, Overwrite: tc.overwrite, Split: &splitter.Limits{MaxTensors: 30},
				Log: log, Beside: func(path string) []string { return []string{side(path)} }})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			finals := p.Outputs(out)
			if len(finals) != 3 {
				t.Fatalf("%d outputs, want 3", len(finals))
			}
			sizes, err := p.FileSizes(m, out)
			if err != nil {
				t.Fatal(err)
			}
			if tc.old {
				for _, path := range finals {
					if err := os.WriteFile(path, []byte("old "+path), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(side(path), []byte("describes old "+path), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			// What is at the final paths once spoiled, as the commit finds
			// it.
			before := map[string][]byte{}
			log.do = func() {
				if tc.spoil != nil {
					tc.spoil(t, finals)
				}
				for _, path := range finals {
					for _, q := range []string{path, side(path)} {
						before[q], _ = os.ReadFile(q)
					}
				}
			}

			paths, err := Run(m, p, out)
			var ce *gguf.CommitError
			if tc.failed < 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(paths, finals) {
					t.Errorf("Run returned %v, want %v", paths, finals)
				}
			} else {
				if !errors.As(err, &ce) {
					t.Fatalf("got %v, want a *gguf.CommitError", err)
				}
				if tc.exist && !errors.Is(err, os.ErrExist) {
					t.Errorf("got %v, want os.ErrExist", err)
				}
				if want := finals[:len(tc.placed)]; !slices.Equal(ce.Placed, want) {
					t.Errorf("placed %v, want %v", ce.Placed, want)
				}
				if ce.Failed != finals[tc.failed] {
					t.Errorf("failed %s, want %s", ce.Failed, finals[tc.failed])
				}
				var kept []string
				for _, s := range ce.Kept {
					kept = append(kept, s.Final)
				}
				if want := finals[tc.failed:]; !slices.Equal(kept, want) {
					t.Errorf("kept %v, want %v", kept, want)
				}
				msg := err.Error()
				for _, path := range finals {
					if !strings.Contains(msg, path) {
						t.Errorf("the error does not name %s: %s", path, msg)
					}
				}
				for _, s := range ce.Kept {
					if !strings.Contains(msg, s.Temp) {
						t.Errorf("the error does not name the kept %s: %s", s.Temp, msg)
					}
				}
			}
			for i, path := range finals {
				if slices.Contains(tc.placed, i) {
					st, err := os.Stat(path)
					if err != nil || st.Size() != sizes[i] {
						t.Errorf("%s is not the new file (%v)", path, err)
					}
					if _, err := os.Lstat(side(path)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s is beside the new %s (%v)", side(path), path, err)
					}
					continue
				}
				// Not put in place: as it was just before the commit (a
				// sidecar removed before a rename that then failed only
				// makes its file untrusted), and its new file kept whole.
				if got, _ := os.ReadFile(path); string(got) != string(before[path]) {
					t.Errorf("%s was changed", path)
				}
				if got, _ := os.ReadFile(side(path)); i > tc.failed && string(got) != string(before[side(path)]) {
					t.Errorf("%s was changed", side(path))
				}
				temp := ce.Kept[i-tc.failed].Temp
				if st, err := os.Stat(temp); err != nil || st.Size() != sizes[i] {
					t.Errorf("the new %s is not kept whole as %s (%v)", path, temp, err)
				}
			}
		})
	}
}
