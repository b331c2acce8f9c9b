package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
)

// The tests of this file are the imatrix cases of issue 16.

const tinyModel = "../../testdata/tiny-deepseek2-bf16.gguf"

// rewriteModel writes a header-only copy of the tiny model with its
// metadata changed by edit.
func rewriteModel(t *testing.T, path string, edit func(*gguf.Metadata)) {
	t.Helper()
	m, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	md := m.Metadata.Clone()
	edit(&md)
	infos := make([]gguf.TensorInfo, len(m.Tensors))
	for i, tn := range m.Tensors {
		infos[i] = tn.TensorInfo
	}
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SkipRemaining(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Item 1: check --model with a wrong-typed model key fails naming the key
// and both types (it panicked).
func TestCheckWrongTypedModelKey(t *testing.T) {
	x := filepath.Join(t.TempDir(), "x.gguf")
	rewriteModel(t, x, func(md *gguf.Metadata) { md.Set("deepseek2.block_count", gguf.StringValue("3")) })
	dat := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	status, _, errOut := runCmd(t, "check", "--model", x, dat)
	if status != 1 {
		t.Fatalf("status %d, want 1: %s", status, errOut)
	}
	for _, want := range []string{"deepseek2.block_count", "str", "integer"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error %q does not say %q", errOut, want)
		}
	}
}

// Items 2 and 3: stats --svg over its input is refused; convert, merge and
// stats --svg refuse an existing output without --force, replace it with
// it, and never replace a read-only one.
func TestImatrixOutputs(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	dat := filepath.Join(dir, "imat.dat")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dat, raw, 0o644)
	if status, _, errOut := runCmd(t, "stats", dat, "--svg", dat); status == 0 || !strings.Contains(errOut, "is the input") {
		t.Errorf("stats --svg over its input: status %d %q", status, errOut)
	}
	if got, _ := os.ReadFile(dat); !bytes.Equal(got, raw) {
		t.Fatal("stats wrote over its input")
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"convert", []string{"convert", dat, "OUT"}},
		{"merge", []string{"merge", dat, dat, "-o", "OUT"}},
		{"stats", []string{"stats", dat, "--svg", "OUT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := func(force bool) []string {
				var a []string
				for _, s := range tc.args {
					a = append(a, strings.ReplaceAll(s, "OUT", out))
				}
				if force {
					a = append(a, "--force")
				}
				return a
			}
			old := []byte("older")
			os.WriteFile(out, old, 0o644)
			status, _, errOut := runCmd(t, args(false)...)
			if status == 0 || !strings.Contains(errOut, "--force") || !strings.Contains(errOut, out) {
				t.Errorf("existing output: status %d %q", status, errOut)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, old) {
				t.Fatal("replaced without --force")
			}
			mustRun(t, args(true)...)
			if got, _ := os.ReadFile(out); bytes.Equal(got, old) {
				t.Fatal("--force did not replace it")
			}
			os.WriteFile(out, old, 0o644)
			os.Chmod(out, 0o444)
			if status, _, errOut := runCmd(t, args(true)...); status == 0 || !strings.Contains(errOut, "read-only") {
				t.Errorf("read-only output: status %d %q", status, errOut)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, old) {
				t.Fatal("a read-only output was replaced")
			}
		})
	}
}

// Item 14: .dat, GGUF and .svg outputs follow the umask.
func TestImatrixOutputsFollowUmask(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dat, gg, svg := filepath.Join(dir, "a.dat"), filepath.Join(dir, "a.gguf"), filepath.Join(dir, "a.svg")
	mustRun(t, "convert", src, gg)
	mustRun(t, "convert", gg, dat)
	mustRun(t, "stats", src, "--svg", svg)
	for _, p := range []string{dat, gg, svg} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v with umask 027, want 0640", p, st.Mode().Perm())
		}
	}
}

// Item 13: entry names reach the terminal escaped.
func TestEntryNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	dat := filepath.Join(dir, "evil.dat")
	m := &imatrix.Matrix{Entries: []imatrix.Entry{{Name: "blk.0.\x1b[2Jffn_up\u009b.weight", Sums: []float32{1, 2}, Counts: []float64{1}}},
		Datasets: []string{"data\x1b]0;x\x07"}}
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dat, buf.Bytes(), 0o644)
	for _, args := range [][]string{{"inspect", dat}, {"stats", dat}, {"convert", dat, filepath.Join(dir, "x.gguf")}} {
		_, out, errOut := runCmd(t, args...)
		for _, r := range out + errOut {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x80 && r <= 0x9f {
				t.Errorf("imatrix %s wrote %q:\n%s%s", args[0], r, out, errOut)
				break
			}
		}
	}
}

// Item 12: a named pipe as input is refused at once.
func TestNonRegularImatrixInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	for _, args := range [][]string{
		{"inspect", fifo}, {"stats", fifo}, {"convert", fifo, filepath.Join(dir, "x.dat")},
		{"merge", fifo, fifo, "-o", filepath.Join(dir, "m.dat")}, {"check", "--model", fifo, fifo},
	} {
		done := make(chan string, 1)
		go func() {
			status, _, errOut := runCmd(t, args...)
			done <- fmt.Sprintf("%d %s", status, errOut)
		}()
		select {
		case res := <-done:
			if strings.HasPrefix(res, "0 ") || !strings.Contains(res, "not a regular file") {
				t.Errorf("imatrix %s: %s", strings.Join(args, " "), res)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("imatrix %s hangs on a named pipe", strings.Join(args, " "))
		}
	}
}

// Item 15: --chunk-size must be positive.
func TestChunkSizeMustBePositive(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	for _, args := range [][]string{
		{"convert", "--chunk-size", "-1", src, filepath.Join(dir, "x.gguf")},
		{"merge", "--chunk-size", "0", src, "-o", filepath.Join(dir, "m.gguf")},
	} {
		status, _, errOut := runCmd(t, args...)
		if status != 2 || !strings.Contains(errOut, "--chunk-size") {
			t.Errorf("imatrix %s: status %d %q", strings.Join(args, " "), status, errOut)
		}
	}
}
