package trellis

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// refquant, when set, makes TestRefCases rewrite testdata/refcases from the
// reference build's refquant (see testdata/refcases/README.md).
var refquant = flag.String("refquant", "", "path of the reference build's refquant: rewrite testdata/refcases with its output")

// refTypes are the types whose reference hashes testdata/refcases holds.
var refTypes = []formats.Type{formats.IQ1_KT, formats.IQ2_KT, formats.IQ3_KT, formats.IQ4_KT}

// refSet is one folder of testdata/refcases: rows quantized by the
// reference in one call per type and variant.
type refSet struct {
	name    string
	cols    int
	input   []float32 // rows x cols
	imatrix []float32 // cols
	kinds   []string  // per row
}

// makeRefSets builds the sets that -refquant writes: one row of every
// rowKind, and the stress rows with one huge outlier (recipe 12) of s404,
// whose row 60 our iq3_kt row-scale fit once quantized differently.
func makeRefSets(t *testing.T) []refSet {
	const cols = 512
	r := rand.New(rand.NewPCG(2024, 15))
	special := refSet{name: "special", cols: cols, imatrix: makeImatrix(r, cols)}
	row := make([]float32, cols)
	for _, k := range rowKinds {
		stressrows.MakeRow(k, r, row)
		special.input = append(special.input, row...)
		special.kinds = append(special.kinds, k.Name)
	}
	in, w := golden.Input(t, filepath.Join("stress", "s404"))
	stress := refSet{name: "s404-outlier", cols: len(w), imatrix: w}
	for _, r := range []int{12, 28, 44, 60} {
		stress.input = append(stress.input, in[r*len(w):(r+1)*len(w)]...)
		stress.kinds = append(stress.kinds, fmt.Sprintf("s404-row-%d", r))
	}
	return []refSet{special, stress}
}

// writeRefSet runs the reference on the set for every type, plain and with
// the importance vector, and writes the set's folder.
func writeRefSet(t *testing.T, s refSet) {
	dir := filepath.Join("testdata", "refcases", s.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	input, imatrix := filepath.Join(dir, "input.f32"), filepath.Join(dir, "imatrix.f32")
	if err := stressrows.WriteF32(input, s.input); err != nil {
		t.Fatal(err)
	}
	if err := stressrows.WriteF32(imatrix, s.imatrix); err != nil {
		t.Fatal(err)
	}
	rows := len(s.input) / s.cols
	var m bytes.Buffer
	m.WriteString("# type\tvariant\trow\tkind\tsha256[:16] of the reference's row\n")
	for _, typ := range refTypes {
		rs, err := typ.RowSize(int64(s.cols))
		if err != nil {
			t.Fatal(err)
		}
		for _, variant := range []string{"plain", "imat"} {
			w := "-"
			if variant == "imat" {
				w = imatrix
			}
			out := filepath.Join(t.TempDir(), "out.bin")
			cmd := exec.Command(*refquant, typ.String(), strconv.Itoa(rows), strconv.Itoa(s.cols), input, w, out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", typ, variant, err, msg)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != rows*int(rs) {
				t.Fatalf("%s %s: the reference wrote %d bytes, want %d", typ, variant, len(b), rows*int(rs))
			}
			for i := 0; i < rows; i++ {
				fmt.Fprintf(&m, "%s\t%s\t%d\t%s\t%s\n", typ, variant, i, s.kinds[i], testrows.Digest(b[i*int(rs):(i+1)*int(rs)]))
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.tsv"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// refCase is one line of a set's manifest.tsv.
type refCase struct {
	typ     formats.Type
	imatrix bool
	row     int
	kind    string
	hash    string
}

func readManifest(t *testing.T, path string) []refCase {
	t.Helper()
	lines, err := stressrows.ReadManifest(path, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	for _, l := range lines {
		cases = append(cases, refCase{typ: l.Type, imatrix: l.Fields[1] == "imat", row: l.Row, kind: l.Fields[3], hash: l.Fields[4]})
	}
	return cases
}

// TestRefCases quantizes the rows of every set of testdata/refcases at every
// assembly level (see asmLevels) and compares each row with the
// reference's (by hash). With -refquant it first rewrites the sets.
func TestRefCases(t *testing.T) {
	if *refquant != "" {
		for _, s := range makeRefSets(t) {
			writeRefSet(t, s)
		}
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "refcases", "*", "manifest.tsv"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no reference sets in testdata/refcases: %v", err)
	}
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	for _, mpath := range dirs {
		dir := filepath.Dir(mpath)
		input, imatrix := stressrows.ReadF32(t, filepath.Join(dir, "input.f32")), stressrows.ReadF32(t, filepath.Join(dir, "imatrix.f32"))
		cols := len(imatrix)
		rows := len(input) / cols
		cases := readManifest(t, mpath)
		for _, typ := range refTypes {
			for _, imat := range []bool{false, true} {
				var want []refCase
				for _, c := range cases {
					if c.typ == typ && c.imatrix == imat {
						want = append(want, c)
					}
				}
				if len(want) != rows {
					t.Fatalf("%s: %d %s rows in the manifest, %d in the input", dir, len(want), typ, rows)
				}
				var w []float32
				if imat {
					w = imatrix
				}
				rs, err := typ.RowSize(int64(cols))
				if err != nil {
					t.Fatal(err)
				}
				for _, level := range asmLevels {
					got := make([]byte, rows*int(rs))
					setAsmLevel(level)
					err := Kernels(kernel.Options{})[typ](got, input, rows, cols, w)
					if err != nil {
						t.Fatalf("%s %s: %v", dir, typ, err)
					}
					for _, c := range want {
						if h := testrows.Digest(got[c.row*int(rs) : (c.row+1)*int(rs)]); h != c.hash {
							t.Errorf("%s %s imatrix %v assembly level %d: row %d (%s) differs from the reference", filepath.Base(dir), typ, imat, level, c.row, c.kind)
						}
					}
				}
			}
		}
	}
}
