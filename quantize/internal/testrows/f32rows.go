package testrows

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// F32BelowFull lists the cases of ../../testdata/f32rows (type/none or
// type/imatrix) whose bytes do not yet match the reference's, with the
// share of identical row groups reached; every other case must match
// exactly, and a case that does better than its share fails too, so the
// table is kept exact. See that folder's README.md for why each is here.
var F32BelowFull = map[string]float64{
	// The reference outputs come from the golden build's flags with -fPIC
	// (the shared library a default CMake build makes), which reproduces
	// every golden case. There GCC inlines make_qkx3_quants into q2_K's
	// row function and set_weights into the trellis types' quantize_iq*_kt,
	// and contracts other products into FMAs than the out-of-line functions
	// of a build without -fPIC; gquant follows the PIC build's
	// (kernel.FusedProducts, trellis' roundSq), and every case matches.
}

// F32Case is one reference output for the float32 rows of
// ../../testdata/f32rows: one ggml_quantize_chunk call over all of them.
type F32Case struct {
	Type    formats.Type
	Imatrix bool
	Groups  []string // Digest of each row group of the reference's output
}

// Name is "type/none" or "type/imatrix", the key of F32BelowFull.
func (c F32Case) Name() string {
	if c.Imatrix {
		return c.Type.String() + "/imatrix"
	}
	return c.Type.String() + "/none"
}

// F32Rows are the rows, importance vector and reference cases of
// ../../testdata/f32rows.
type F32Rows struct {
	Rows, Cols int
	X, Imatrix []float32
	Cases      []F32Case
}

// f32RowsDir is the folder of the float32 rows, found from this file.
func f32RowsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "f32rows")
}

// ReadFloat32s reads a file of little-endian float32 values, as the
// reference's harness writes rows and importance vectors.
func ReadFloat32s(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// LoadF32Rows reads ../../testdata/f32rows.
func LoadF32Rows(t testing.TB) *F32Rows {
	t.Helper()
	dir := f32RowsDir()
	f := &F32Rows{Cols: 1024}
	f.X = ReadFloat32s(t, filepath.Join(dir, "input.f32"))
	f.Imatrix = ReadFloat32s(t, filepath.Join(dir, "imatrix.f32"))
	if len(f.Imatrix) != f.Cols || len(f.X)%f.Cols != 0 {
		t.Fatalf("%s: %d values and %d importance weights for rows of %d", dir, len(f.X), len(f.Imatrix), f.Cols)
	}
	f.Rows = len(f.X) / f.Cols
	ref, err := os.ReadFile(filepath.Join(dir, "reference.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	input := Digest(append(Float32Bytes(f.X), Float32Bytes(f.Imatrix)...))
	sc := bufio.NewScanner(bytes.NewReader(ref))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) == 2 && fields[0] == "input" {
			if fields[1] != input {
				t.Fatalf("reference.tsv was made from other rows (input %s, the files give %s): remake it (README.md)", fields[1], input)
			}
			input = ""
			continue
		}
		if len(fields) != 3 {
			t.Fatalf("reference.tsv line %d: want TYPE, none|imatrix and digests", n)
		}
		typ, err := formats.ParseType(fields[0])
		if err != nil {
			t.Fatalf("reference.tsv line %d: %v", n, err)
		}
		c := F32Case{Type: typ, Imatrix: fields[1] == "imatrix", Groups: strings.Fields(fields[2])}
		if len(c.Groups)*typ.Interleave() != f.Rows {
			t.Fatalf("reference.tsv line %d: %d row groups of %d rows for %d rows", n, len(c.Groups), typ.Interleave(), f.Rows)
		}
		f.Cases = append(f.Cases, c)
	}
	if input != "" {
		t.Fatal("reference.tsv has no input line")
	}
	return f
}

// F32Quantize quantizes nrows rows of cols values to typ with importance
// weights imatrix or nil, as QuantizeRows or a family's kernel.
type F32Quantize func(typ formats.Type, x []float32, nrows, cols int, imatrix []float32) ([]byte, error)

// Check runs quantize for each case whose type has include (nil: every
// case) as a subtest named by the case and prefix, and holds its bytes to
// the reference's at the share F32BelowFull gives (1 where it gives none).
// It returns how many cases it compared.
func (f *F32Rows) Check(t *testing.T, prefix string, include func(formats.Type) bool, quantize F32Quantize) int {
	t.Helper()
	n := 0
	for _, c := range f.Cases {
		if include != nil && !include(c.Type) {
			continue
		}
		n++
		t.Run(prefix+c.Name(), func(t *testing.T) {
			var w []float32
			if c.Imatrix {
				w = f.Imatrix
			}
			got, err := quantize(c.Type, f.X, f.Rows, f.Cols, w)
			if err != nil {
				t.Fatal(err)
			}
			digests := GroupDigests(got, len(c.Groups))
			same, first := 0, -1
			for i, d := range digests {
				if d == c.Groups[i] {
					same++
				} else if first < 0 {
					first = i
				}
			}
			share := float64(same) / float64(len(digests))
			want, partial := F32BelowFull[c.Name()]
			if !partial {
				want = 1
			}
			switch {
			case share < want:
				t.Fatalf("%.4f of row groups identical, want %.4f (first difference in row group %d)", share, want, first)
			case share > want:
				t.Errorf("%.4f of row groups identical, better than the %.4f in F32BelowFull: update the table", share, want)
			}
		})
	}
	return n
}

// KernelQuantize is an F32Quantize calling the kernels of set; accepted
// says which kernel errors still leave bytes to compare (a family's
// fallback substitutions), nil none.
func KernelQuantize(set kernel.Set, accepted func(error) bool) F32Quantize {
	return func(typ formats.Type, x []float32, nrows, cols int, w []float32) ([]byte, error) {
		rs, err := typ.RowSize(int64(cols))
		if err != nil {
			return nil, err
		}
		got := make([]byte, nrows*int(rs))
		err = set[typ](got, x, nrows, cols, w)
		if err != nil && accepted != nil && accepted(err) {
			err = nil
		}
		return got, err
	}
}

// CheckF32Levels holds the kernels of a family (kernels(options)) to the
// reference's bytes for the float32 rows at each assembly level of levels
// (all the levels this build and CPU run, portable first, selected with
// setLevel) below the highest, which the quantize package's TestF32Rows
// runs; at level 0 it also makes package kernel's searches portable. It
// leaves the highest level selected, and skips in -short mode.
func CheckF32Levels(t *testing.T, kernels func(kernel.Options) kernel.Set, levels []int, setLevel func(int), accepted func(error) bool) {
	t.Helper()
	if len(levels) < 2 {
		t.Skip("no assembly level below the highest here")
	}
	if testing.Short() {
		t.Skip("the float32 rows take seconds per level")
	}
	rows := LoadF32Rows(t)
	defer setLevel(levels[len(levels)-1])
	compared := 0
	for _, level := range levels[:len(levels)-1] {
		setLevel(level)
		set := kernels(kernel.Options{Portable: level == 0})
		compared += rows.Check(t, fmt.Sprintf("level%d/", level), func(typ formats.Type) bool { return set[typ] != nil }, KernelQuantize(set, accepted))
	}
	if compared == 0 {
		t.Fatal("no case of these kernels' types was compared")
	}
}
