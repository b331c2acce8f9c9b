//go:build unix

package gguf

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// lockAsOther creates path and locks it through an open file of its own,
// as another process would (flock locks belong to the open file, so
// lockedByOther sees this one), until the test ends.
func lockAsOther(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
}

// In containers every gquant may be process 1 of its own PID namespace,
// on a shared directory: a temporary file is this process's when this
// process named it, not when its name has this process's id; one with
// this id that another process locks is live, one nothing locks is
// stale. A progress record lives as long as its temporary file's lock,
// even where its writer's process cannot be seen.
func TestTempFilesOwnership(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")
	prefix := filepath.Join(dir, TempPrefix(out))
	pid := strconv.Itoa(os.Getpid())
	const gone = "4194305" // above the largest pid_max: no such process

	own, err := CreateTemp(out)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	staged := "." + filepath.Base(prefix) + NewTempToken() + tempMarker + pid + "-s2"
	cases := []struct {
		name, path string
		locked     bool // by another open file
		own, live  bool
	}{
		{"created here", own.Name(), false, true, true},
		{"created here, progress record", own.Name() + ".progress", false, true, true},
		{"staged shard named here", staged, false, true, true},
		{"this id, locked by another process", prefix + pid + "-other", true, false, true},
		{"its progress record", prefix + pid + "-other.progress", false, false, true},
		{"this id, not locked", prefix + pid + "-left", false, false, false},
		{"its progress record, alone", prefix + pid + "-left.progress", false, false, false},
		{"staged shard of this id, not named here", "." + filepath.Base(prefix) + pid + "-s" + tempMarker + pid + "-s2", false, false, false},
		{"process not seen, locked", prefix + gone + "-far", true, false, true},
		{"its progress record, not seen", prefix + gone + "-far.progress", false, false, true},
		{"process gone, progress record", prefix + gone + "-dead.progress", false, false, false},
	}
	for i, tc := range cases {
		if !filepath.IsAbs(tc.path) {
			cases[i].path = filepath.Join(dir, tc.path)
		}
		if tc.locked {
			lockAsOther(t, cases[i].path)
		} else if _, err := os.Stat(cases[i].path); err != nil {
			if err := os.WriteFile(cases[i].path, []byte("GGUF"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tfs, err := TempFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tfs) != len(cases) {
		t.Errorf("%d files listed, want %d: %+v", len(tfs), len(cases), tfs)
	}
	for _, tc := range cases {
		found := false
		for _, tf := range tfs {
			if tf.Path == tc.path {
				found = true
				if tf.Own != tc.own || tf.Live != tc.live {
					t.Errorf("%s (%s): Own %v Live %v, want %v %v", tc.name, tf.Path, tf.Own, tf.Live, tc.own, tc.live)
				}
			}
		}
		if !found {
			t.Errorf("%s (%s) not listed", tc.name, tc.path)
		}
	}
}
