package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
)

// resumeCase is a small file of four f32 tensors of odd sizes (so that
// every tensor is followed by padding).
func resumeCase() (Metadata, []TensorInfo, [][]byte) {
	md := Metadata{{Key: "general.architecture", Value: StringValue("llama")}}
	var ts []TensorInfo
	var data [][]byte
	for i, n := range []int64{3, 17, 8, 5} {
		ts = append(ts, TensorInfo{Name: "t" + string(rune('a'+i)), Shape: []int64{n}, Type: formats.F32})
		b := make([]byte, 4*n)
		for j := range b {
			b[j] = byte(i*31 + j)
		}
		data = append(data, b)
	}
	return md, ts, data
}

// TestResume writes part of a file, detaches it, and resumes it at every
// tensor boundary, with junk after the last complete tensor (a tensor cut
// by a crash): the result is the file of one uninterrupted write.
func TestResume(t *testing.T) {
	md, ts, data := resumeCase()
	dir := t.TempDir()
	want := filepath.Join(dir, "want.gguf")
	w, err := Create(want, md, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		w.Write(d)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wantBytes, _ := os.ReadFile(want)

	for next := 0; next <= len(ts); next++ {
		out := filepath.Join(dir, "out.gguf")
		w, err := Create(out, md, ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range data[:next] {
			w.Write(d)
		}
		if next < len(ts) {
			w.Write(data[next][:3]) // part of the next tensor
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		tmp := w.TempPath()
		if err := w.Detach(); err != nil {
			t.Fatal(err)
		}
		if next%2 == 1 {
			// Left by another process with this one's id (a container's
			// process 1 before it was restarted).
			left := filepath.Join(dir, TempPrefix(out)+strconv.Itoa(os.Getpid())+"-left")
			if err := os.Rename(tmp, left); err != nil {
				t.Fatal(err)
			}
			tmp = left
		}
		if _, err := os.Stat(tmp); err != nil {
			t.Fatalf("detached file gone: %v", err)
		}
		r, err := Resume(out, tmp, md, ts, next, nil)
		if err != nil {
			t.Fatalf("resume at %d: %v", next, err)
		}
		if r.Next() != next || r.TempPath() == tmp || !strings.HasPrefix(filepath.Base(r.TempPath()), TempPrefix(out)) {
			t.Errorf("resumed at %d as %s (was %s)", r.Next(), r.TempPath(), tmp)
		}
		// The resumed file is this process's now.
		if tfs, err := TempFiles(out); err != nil || len(tfs) != 1 || tfs[0].Path != r.TempPath() || !tfs[0].Own {
			t.Errorf("resumed at %d: TempFiles = %+v, %v, want %s, own", next, tfs, err, r.TempPath())
		}
		for _, d := range data[next:] {
			if _, err := r.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("resumed at tensor %d: bytes differ", next)
		}
		os.Remove(out)
	}
}

func TestResumeRefusesOtherHeaders(t *testing.T) {
	md, ts, data := resumeCase()
	out := filepath.Join(t.TempDir(), "out.gguf")
	w, err := Create(out, md, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[0])
	tmp := w.TempPath()
	w.Detach()
	other := append([]TensorInfo(nil), ts...)
	other[2].Shape = []int64{9}
	if _, err := Resume(out, tmp, md, other, 1, nil); !errors.Is(err, ErrResume) || !strings.Contains(err.Error(), "header") {
		t.Errorf("other tensors: %v", err)
	}
	if _, err := Resume(out, tmp, md, ts, 3, nil); !errors.Is(err, ErrResume) {
		t.Errorf("past the end of the file: %v", err)
	}
	// Gone since it was chosen (another run of the same output continued
	// it under its own name): said so, not "no such file".
	if _, err := Resume(out, tmp+"-gone", md, ts, 1, nil); !errors.Is(err, ErrResume) || !strings.Contains(err.Error(), "another run of "+out+" took it over") {
		t.Errorf("a file gone: %v", err)
	}
	// Held by another writer: refused.
	held, err := os.Open(tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := lockFile(held); err != nil {
		t.Skip("no file locks here")
	}
	if _, err := Resume(out, tmp, md, ts, 1, nil); !errors.Is(err, ErrResume) {
		t.Errorf("locked file: %v", err)
	}
}

func TestRewindTensor(t *testing.T) {
	md, ts, data := resumeCase()
	dir := t.TempDir()
	want := filepath.Join(dir, "want.gguf")
	out := filepath.Join(dir, "out.gguf")
	a, _ := Create(want, md, ts, nil)
	b, _ := Create(out, md, ts, nil)
	for i, d := range data {
		a.Write(d)
		junk := bytes.Repeat([]byte{0xee}, len(d)-1)
		b.Write(junk)
		if err := b.RewindTensor(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			b.RewindTensor() // nothing written: a no-op
		}
		b.Write(d)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(want)
	y, _ := os.ReadFile(out)
	if !bytes.Equal(x, y) {
		t.Error("rewound file differs")
	}
}

// Resume keeps Create's options: NoReplace (Close refuses a file that
// appeared at the path meanwhile) and Perm (they were dropped).
func TestResumeKeepsOptions(t *testing.T) {
	md, ts, data := resumeCase()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	w, err := Create(out, md, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[0])
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	tmp := w.TempPath()
	if err := w.Detach(); err != nil {
		t.Fatal(err)
	}
	r, err := Resume(out, tmp, md, ts, 1, &CreateOptions{NoReplace: true, Perm: 0o640})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data[1:] {
		r.Write(d)
	}
	if st, err := os.Stat(r.TempPath()); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("resumed file: %v, %v; want mode 0640", st.Mode(), err)
	}
	if err := os.WriteFile(out, []byte("appeared meanwhile"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err == nil {
		t.Error("Close replaced a file that appeared at the path")
	}
	if got, _ := os.ReadFile(out); string(got) != "appeared meanwhile" {
		t.Errorf("the file at the path was replaced")
	}
}
