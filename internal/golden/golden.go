// Package golden finds and reads the reference outputs kept beside the
// repository in ../shared/golden (see its README.md for how they were made).
// Tests call Dir; it skips where the folder is absent (a user's own clone) but
// fails in CI, where the folder is always present.
package golden

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Dir returns the absolute path of shared/golden, skipping the test where it
// does not exist and failing it when running in CI.
func Dir(t testing.TB) string {
	t.Helper()
	dir := sharedDir()
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("golden data missing in CI at %s: %v", dir, err)
		}
		t.Skipf("golden data not found at %s (it lives beside the repository as ../shared/golden; set GQUANT_GOLDEN to point elsewhere)", dir)
	}
	return dir
}

// Path joins elements below the golden folder.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}

// KernelCase is one line of kernels/manifest.tsv: one reference
// ggml_quantize_chunk call over the whole of kernels/input.f32.
type KernelCase struct {
	Type    string // reference type name, exact case
	TypeID  int
	Rows    int
	Cols    int
	Imatrix bool   // quantized with kernels/imatrix.f32
	File    string // quantized bytes, relative to kernels/
	Bytes   int64
	Dequant string // reference dequantization of File, "" if none
}

// Name is a test name for the case, like "q4_K/imat".
func (c KernelCase) Name() string {
	if c.Imatrix {
		return c.Type + "/imat"
	}
	return c.Type + "/plain"
}

// Kernels reads kernels/manifest.tsv.
func Kernels(t testing.TB) []KernelCase {
	t.Helper()
	return Manifest(t, "kernels")
}

// StressSets lists the folders of stress/ (s101, ..., reg-iq4k), relative
// to the golden folder, each with the layout of kernels/.
func StressSets(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(Path(t, "stress"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join("stress", e.Name()))
		}
	}
	if len(out) == 0 {
		t.Fatal("no stress sets below", Path(t, "stress"))
	}
	return out
}

// Manifest reads the manifest.tsv of a folder in the layout of kernels/
// (dir relative to the golden folder). A File of "abort" means the reference
// aborted on that case and wrote nothing.
func Manifest(t testing.TB, dir string) []KernelCase {
	t.Helper()
	return ReadManifest(t, Path(t, dir))
}

// Vendored returns the absolute path of testdata/golden at the repository
// root: a small subset of ../shared/golden kept in the repository (its
// README.md says which), so that a clone without ../shared still checks the
// byte-for-byte promise. It is always present.
func Vendored() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// Present reports whether the golden folder is there, without skipping.
func Present() bool {
	_, err := os.Stat(filepath.Join(sharedDir(), "README.md"))
	return err == nil
}

// sharedDir is ../shared/golden beside the repository, or $GQUANT_GOLDEN.
func sharedDir() string {
	if env := os.Getenv("GQUANT_GOLDEN"); env != "" {
		return env
	}
	_, file, _, _ := runtime.Caller(0)
	// internal/golden/golden.go -> repository root -> ../shared/golden
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "golden")
}

// ReadManifest reads the manifest.tsv of the folder dir (an absolute path),
// which is in the layout of kernels/.
func ReadManifest(t testing.TB, dir string) []KernelCase {
	t.Helper()
	path := filepath.Join(dir, "manifest.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []KernelCase
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 8 {
			t.Fatalf("%s:%d: %d fields", path, line, len(c))
		}
		atoi := func(s string) int {
			v, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			return v
		}
		k := KernelCase{Type: c[0], TypeID: atoi(c[1]), Rows: atoi(c[2]), Cols: atoi(c[3]),
			Imatrix: c[4] == "1", File: c[5], Bytes: int64(atoi(c[6]))}
		if c[7] != "-" {
			k.Dequant = c[7]
		}
		out = append(out, k)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Input returns a folder's input.f32 and imatrix.f32.
func Input(t testing.TB, dir string) (input, imatrix []float32) {
	t.Helper()
	return F32(ReadFile(t, dir, "input.f32")), F32(ReadFile(t, dir, "imatrix.f32"))
}

// ReadFile reads a file below the golden folder.
func ReadFile(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(Path(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// F32 decodes little-endian float32 values.
func F32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// KernelInput returns kernels/input.f32 (16 rows x 1024 columns) and kernels/imatrix.f32.
func KernelInput(t testing.TB) (input, imatrix []float32) {
	t.Helper()
	return Input(t, "kernels")
}

// BlockShare compares got with want in units of blockBytes and returns the
// share of identical blocks (1 when equal) and a description of the first
// difference.
func BlockShare(got, want []byte, blockBytes int) (share float64, firstDiff string) {
	if len(got) != len(want) {
		return 0, fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	if blockBytes <= 0 {
		blockBytes = len(want)
	}
	n, same := 0, 0
	for off := 0; off < len(want); off += blockBytes {
		end := min(off+blockBytes, len(want))
		n++
		if string(got[off:end]) == string(want[off:end]) {
			same++
		} else if firstDiff == "" {
			firstDiff = fmt.Sprintf("block at byte %d differs", off)
		}
	}
	if n == 0 {
		return 1, ""
	}
	return float64(same) / float64(n), firstDiff
}
