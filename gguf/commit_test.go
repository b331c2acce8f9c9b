package gguf

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
)

// stage writes a complete temporary file of final holding content.
func stage(t *testing.T, final, content string) Staged {
	t.Helper()
	f, err := CreateTemp(final)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return Staged{Temp: f.Name(), Final: final}
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

// A commit that fails part way over the user's files (--force) removes
// nothing: the files already renamed replaced the old ones, so they stay,
// and the rest stay under their temporary names; the error says which is
// which, and no sidecar describes a file that was replaced.
func TestCommitFailureKeepsEveryFile(t *testing.T) {
	dir := t.TempDir()
	var files []Staged
	for i, name := range []string{"a", "b", "c"} {
		final := filepath.Join(dir, name+".gguf")
		if err := os.WriteFile(final, []byte("old "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(final+".side", []byte("describes old "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		s := stage(t, final, "new "+name)
		s.Replace, s.Beside = true, []string{final + ".side"}
		if i == 2 {
			// A rename onto a directory that is not empty fails.
			os.Remove(final)
			if err := os.MkdirAll(filepath.Join(final, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		files = append(files, s)
	}
	err := Commit(files)
	var ce *CommitError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCommit) {
		t.Fatalf("got %v, want a *CommitError", err)
	}
	t.Log(err)
	a, b, c := files[0].Final, files[1].Final, files[2].Final
	if !slices.Equal(ce.Placed, []string{a, b}) || ce.Failed != c || len(ce.Kept) != 1 || ce.Kept[0].Temp != files[2].Temp {
		t.Errorf("error says placed %q, failed %q, kept %+v", ce.Placed, ce.Failed, ce.Kept)
	}
	for _, want := range []string{a, b, c, files[2].Temp} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s", want)
		}
	}
	wantContent(t, a, "new a")
	wantContent(t, b, "new b")
	wantContent(t, files[2].Temp, "new c")
	for _, gone := range []string{a + ".side", b + ".side"} {
		if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still describes a file that was replaced", gone)
		}
	}
}

// A Writer whose rename fails keeps its complete file under the temporary
// name and says so.
func TestWriterCloseKeepsCompleteFile(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.gguf")
	if err := os.MkdirAll(filepath.Join(final, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Create(final, nil, []TensorInfo{{Name: "a", Shape: []int64{8}, Type: formats.F32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	var ce *CommitError
	if !errors.As(err, &ce) || len(ce.Kept) != 1 || ce.Kept[0].Temp != w.TempPath() {
		t.Fatalf("got %v, want a *CommitError keeping %s", err, w.TempPath())
	}
	if _, err := Open(w.TempPath()); err != nil {
		t.Errorf("the kept file: %v", err)
	}
	w.Abort()
	if _, err := os.Stat(w.TempPath()); err != nil {
		t.Errorf("Abort after the failed Close: %v", err)
	}
}

// Without Replace, a file at the final name, even one created after the
// caller checked, is never replaced: the commit fails with os.ErrExist and
// keeps the new file. renameNoReplace and its fallback for file systems
// without renameat2 behave the same.
func TestCommitNoReplace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rename func(old, new string) error
	}{{"renameNoReplace", renameNoReplace}, {"linkNoReplace", linkNoReplace}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			final := filepath.Join(dir, "out.gguf")
			s := stage(t, final, "new")
			if err := os.WriteFile(final, []byte("user data"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.rename(s.Temp, final); !errors.Is(err, os.ErrExist) || !strings.Contains(err.Error(), final) {
				t.Errorf("got %v, want os.ErrExist naming %s", err, final)
			}
			wantContent(t, final, "user data")
			wantContent(t, s.Temp, "new")
			os.Remove(final)
			if err := tc.rename(s.Temp, final); err != nil {
				t.Fatal(err)
			}
			wantContent(t, final, "new")
			if _, err := os.Lstat(s.Temp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary name stays: %v", err)
			}
		})
	}
	t.Run("Commit", func(t *testing.T) {
		dir := t.TempDir()
		final := filepath.Join(dir, "out.gguf")
		s := stage(t, final, "new")
		os.WriteFile(final, []byte("user data"), 0o644)
		err := Commit([]Staged{s})
		var ce *CommitError
		if !errors.Is(err, os.ErrExist) || !errors.As(err, &ce) || ce.Failed != final || !strings.Contains(err.Error(), s.Temp) {
			t.Errorf("got %v, want os.ErrExist naming %s and %s", err, final, s.Temp)
		}
		wantContent(t, final, "user data")
		wantContent(t, s.Temp, "new")
	})
	t.Run("Writer", func(t *testing.T) {
		dir := t.TempDir()
		final := filepath.Join(dir, "out.gguf")
		w, err := Create(final, nil, []TensorInfo{{Name: "a", Shape: []int64{8}, Type: formats.F32}}, &CreateOptions{NoReplace: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(make([]byte, 32))
		os.WriteFile(final, []byte("user data"), 0o644)
		if err := w.Close(); !errors.Is(err, os.ErrExist) {
			t.Errorf("got %v, want os.ErrExist", err)
		}
		wantContent(t, final, "user data")
		if _, err := os.Stat(w.TempPath()); err != nil {
			t.Errorf("the complete file: %v", err)
		}
	})
}

// Even with Replace (--force), a file made read-only after the caller's
// checks is never replaced: the commit fails with a permission error, the
// file and its sidecar stay, and the new file is kept.
func TestCommitNeverReplacesReadOnly(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "o.gguf")
	side := final + ".gquant.json"
	for _, p := range []string{final, side} {
		if err := os.WriteFile(p, []byte("user's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := stage(t, final, "new")
	s.Replace, s.Beside = true, []string{side}
	if err := os.Chmod(final, 0o444); err != nil {
		t.Fatal(err)
	}
	err := Commit([]Staged{s})
	var ce *CommitError
	if !errors.Is(err, os.ErrPermission) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("got %v, want a permission error", err)
	}
	wantContent(t, final, "user's")
	wantContent(t, side, "user's")
	wantContent(t, s.Temp, "new")
}

// Placed runs as soon as its file is in place, before the next is renamed
// (a run killed between two renames must find each file in place already
// described), and not for a file the commit did not place.
func TestCommitPlacedBeforeNext(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Mkdir(b, 0o755); err != nil { // b's rename fails
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sa, sb := stage(t, a, "a"), stage(t, b, "b")
	var calls []string
	sa.Placed = func() {
		calls = append(calls, "a")
		wantContent(t, a, "a")
		wantContent(t, sb.Temp, "b")
	}
	sb.Placed = func() { calls = append(calls, "b") }
	if err := Commit([]Staged{sa, sb}); err == nil {
		t.Fatal("the commit over a directory succeeded")
	}
	if !slices.Equal(calls, []string{"a"}) {
		t.Errorf("Placed ran for %v, want [a]", calls)
	}
}
