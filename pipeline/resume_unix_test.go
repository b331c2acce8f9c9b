//go:build unix

package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A progress record is live while its temporary file is locked, even where
// the writer's process cannot be seen (a run on another machine, or in
// another PID namespace with this process's id): FindResumable on the same
// output neither resumes nor removes either, so the writer's work can
// still be resumed after it is killed.
func TestFindResumableKeepsLiveRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
	}{
		{"process not seen", 4194305}, // above the largest pid_max
		{"this process's id, another namespace", os.Getpid()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.gguf")
			m, cfg := q4kmConfig(t, out)
			plan, err := Build(m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(dir, fmt.Sprintf(".out.gguf.tmp-%d-abc", tc.pid))
			if err := os.WriteFile(tmp, []byte("GGUF"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(journalPath(tmp), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// Locked through an open file of its own, as its writer would.
			f, err := os.Open(tmp)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			var n notes
			res, err := FindResumable(context.Background(), m, plan.Outputs, n.add)
			if err != nil || res[0] != nil {
				t.Errorf("FindResumable: %v %+v; notes %s", err, res, n.String())
			}
			for _, p := range []string{tmp, journalPath(tmp)} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s removed: %v; notes %s", p, err, n.String())
				}
			}
		})
	}
}
