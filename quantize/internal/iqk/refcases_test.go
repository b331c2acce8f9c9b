package iqk

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// refquant, when set, makes TestRefCases rewrite testdata/refcases from the
// reference build's refquant (see testdata/refcases/README.md).
var refquant = flag.String("refquant", "", "path of a refquant that passes llama-quantize's default user data: rewrite testdata/refcases with its output")

// refquantSlow is the refquant that -refquant needs beside it for the
// variants of --slow-iq2ks: one that passes no user data.
var refquantSlow = flag.String("refquant-slow", "", "with -refquant: path of a refquant that passes no user data (the slow iq2_ks search)")

// refTypes are the types whose reference hashes testdata/refcases holds:
// every type of the package, in id order.
func refTypes() []formats.Type {
	var ts []formats.Type
	for t := range Kernels(kernel.Options{}) {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// refVariants are the variants of a type in every set: no importance, and
// the set's importance vector; for iq2_ks both also with --slow-iq2ks.
func refVariants(typ formats.Type) []string {
	if typ == formats.IQ2_KS {
		return []string{"plain", "imat", "plain-slow", "imat-slow"}
	}
	return []string{"plain", "imat"}
}

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
// rowKind; rows so large that the searches overflow to infinities and NaNs
// (normal times 1e17, 1e20, 1e30 and 1e38, clamped to the float32 range);
// and the stress rows that once differed (s101 rows 25 and 43, columns
// 0..2047, whose iq2_ks and iq2_k scales rounded a product that the
// reference fuses; reg-iq4k row 5, columns 768..1023, the same in iq4_k).
func makeRefSets(t *testing.T) []refSet {
	const cols = 512
	r := rand.New(rand.NewPCG(2025, 15))
	special := refSet{name: "special", cols: cols, imatrix: makeImatrix(r, cols)}
	row := make([]float32, cols)
	for _, k := range rowKinds {
		stressrows.MakeRow(k, r, row)
		special.input = append(special.input, row...)
		special.kinds = append(special.kinds, k.Name)
	}
	overflow := refSet{name: "overflow", cols: 256, imatrix: makeImatrix(r, 256)}
	for _, sigma := range []float64{1e17, 1e20, 1e30, 1e38} {
		row := make([]float32, overflow.cols)
		for i := range row {
			row[i] = float32(max(-math.MaxFloat32, min(math.MaxFloat32, sigma*r.NormFloat64())))
		}
		overflow.input = append(overflow.input, row...)
		overflow.kinds = append(overflow.kinds, fmt.Sprintf("normal-%g", sigma))
	}
	cut := func(name, set string, rows []int, c0, c1 int) refSet {
		in, w := golden.Input(t, filepath.Join("stress", set))
		s := refSet{name: name, cols: c1 - c0, imatrix: w[c0:c1]}
		for _, r := range rows {
			s.input = append(s.input, in[r*len(w)+c0:r*len(w)+c1]...)
			s.kinds = append(s.kinds, fmt.Sprintf("%s-row-%d", set, r))
		}
		return s
	}
	return []refSet{special, overflow, cut("s101-head", "s101", []int{25, 43}, 0, 2048), cut("reg-iq4k-row5", "reg-iq4k", []int{5}, 768, 1024)}
}

// runRefquant runs the reference (the binary bin) on rows x cols values of
// input (a file) and returns its bytes.
func runRefquant(t *testing.T, bin string, typ formats.Type, rows, cols int, input, imatrix string) ([]byte, error) {
	out := filepath.Join(t.TempDir(), "out.bin")
	cmd := exec.Command(bin, typ.String(), strconv.Itoa(rows), strconv.Itoa(cols), input, imatrix, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, msg)
	}
	return os.ReadFile(out)
}

// writeRefSet runs the reference on the set for every type and variant and
// writes the set's folder. Where the reference aborts on the call (an
// assertion on some rows), it runs each row group alone and marks those it
// aborts on.
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
	if err := os.WriteFile(filepath.Join(dir, "kinds.txt"), []byte(strings.Join(s.kinds, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := len(s.input) / s.cols
	var m bytes.Buffer
	m.WriteString("# type\tvariant\trow\tsha256[:16] of the reference's row group, or abort\n")
	for _, typ := range refTypes() {
		n := typ.Interleave()
		if rows%n != 0 {
			continue
		}
		rs, err := typ.RowSize(int64(s.cols))
		if err != nil {
			t.Fatal(err)
		}
		gb := n * int(rs)
		for _, variant := range refVariants(typ) {
			w := "-"
			if strings.HasPrefix(variant, "imat") {
				w = imatrix
			}
			bin := *refquant
			if strings.HasSuffix(variant, "-slow") {
				bin = *refquantSlow
			}
			b, err := runRefquant(t, bin, typ, rows, s.cols, input, w)
			hashes := make([]string, rows/n)
			switch {
			case err == nil && len(b) == rows*int(rs):
				for g := range hashes {
					hashes[g] = testrows.Digest(b[g*gb : (g+1)*gb])
				}
			case err == nil:
				t.Fatalf("%s %s: the reference wrote %d bytes, want %d", typ, variant, len(b), rows*int(rs))
			default:
				one := filepath.Join(t.TempDir(), "group.f32")
				for g := range hashes {
					if err := stressrows.WriteF32(one, s.input[g*n*s.cols:(g+1)*n*s.cols]); err != nil {
						t.Fatal(err)
					}
					b, err := runRefquant(t, bin, typ, n, s.cols, one, w)
					if err != nil {
						hashes[g] = "abort"
						continue
					}
					hashes[g] = testrows.Digest(b)
				}
			}
			for g, h := range hashes {
				fmt.Fprintf(&m, "%s\t%s\t%d\t%s\n", typ, variant, g*n, h)
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
	variant string
	row     int    // first row of the group
	hash    string // or "abort"
}

func readManifest(t *testing.T, path string) []refCase {
	t.Helper()
	lines, err := stressrows.ReadManifest(path, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	for _, l := range lines {
		cases = append(cases, refCase{typ: l.Type, variant: l.Fields[1], row: l.Row, hash: l.Fields[3]})
	}
	return cases
}

// quantizeGroups runs k over rows x cols of input one row group
// (interleave rows) at a time and returns the bytes and, per group, whether
// the kernel returned a *kernel.OverflowError (where the searches
// overflow); err is the first other error.
func quantizeGroups(k kernel.Func, rowBytes, interleave, rows, cols int, input, w []float32) (out []byte, overflowed []bool, err error) {
	out = make([]byte, rows*rowBytes)
	gb := interleave * rowBytes
	for g := 0; g < rows/interleave; g++ {
		e := k(out[g*gb:(g+1)*gb], input[g*interleave*cols:(g+1)*interleave*cols], interleave, cols, w)
		var o *kernel.OverflowError
		overflowed = append(overflowed, errors.As(e, &o))
		if e != nil && o == nil && err == nil {
			err = e
		}
	}
	return out, overflowed, err
}

// TestRefCases quantizes the rows of every set of testdata/refcases with the
// portable code and the assembly and compares each row group with the
// reference's (by hash). Where the reference aborts (it stops on an
// assertion where the searches overflow), we may return a
// *kernel.OverflowError or write any encoding. With -refquant it first
// rewrites the sets.
func TestRefCases(t *testing.T) {
	if *refquant != "" {
		if *refquantSlow == "" {
			t.Fatal("-refquant needs -refquant-slow too (see testdata/refcases/README.md)")
		}
		for _, s := range makeRefSets(t) {
			writeRefSet(t, s)
		}
	}
	manifests, err := filepath.Glob(filepath.Join("testdata", "refcases", "*", "manifest.tsv"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no reference sets in testdata/refcases: %v", err)
	}
	kernels := map[bool]kernel.Set{false: Kernels(kernel.Options{}), true: Kernels(kernel.Options{SlowIQ2KS: true})}
	for _, mpath := range manifests {
		dir := filepath.Dir(mpath)
		input, imatrix := stressrows.ReadF32(t, filepath.Join(dir, "input.f32")), stressrows.ReadF32(t, filepath.Join(dir, "imatrix.f32"))
		cols := len(imatrix)
		rows := len(input) / cols
		cases := readManifest(t, mpath)
		kb, err := os.ReadFile(filepath.Join(dir, "kinds.txt"))
		if err != nil {
			t.Fatal(err)
		}
		kinds := strings.Split(strings.TrimSpace(string(kb)), "\n")
		if len(kinds) != rows {
			t.Fatalf("%s: %d row kinds for %d rows", dir, len(kinds), rows)
		}
		for _, typ := range refTypes() {
			for _, variant := range refVariants(typ) {
				var want []refCase
				for _, c := range cases {
					if c.typ == typ && c.variant == variant {
						want = append(want, c)
					}
				}
				if rows%typ.Interleave() != 0 {
					continue
				}
				if len(want) != rows/typ.Interleave() {
					t.Fatalf("%s: %d %s %s row groups in the manifest, %d in the input", dir, len(want), typ, variant, rows/typ.Interleave())
				}
				var w []float32
				if strings.HasPrefix(variant, "imat") {
					w = imatrix
				}
				slow := strings.HasSuffix(variant, "-slow")
				rs, err := typ.RowSize(int64(cols))
				if err != nil {
					t.Fatal(err)
				}
				gb := typ.Interleave() * int(rs)
				for _, asm := range assemblyModes() {
					restore := setAssembly(asm)
					got, overflowed, err := quantizeGroups(kernels[slow][typ], int(rs), typ.Interleave(), rows, cols, input, w)
					restore()
					if err != nil {
						t.Fatalf("%s %s %s: %v", dir, typ, variant, err)
					}
					for _, c := range want {
						g := c.row / typ.Interleave()
						if c.hash == "abort" {
							continue
						}
						if overflowed[g] {
							t.Errorf("%s %s %s asm level %d: row %d (%s): the kernel overflowed, the reference did not", filepath.Base(dir), typ, variant, asm, c.row, kinds[c.row])
						} else if testrows.Digest(got[g*gb:(g+1)*gb]) != c.hash {
							t.Errorf("%s %s %s asm level %d: row %d (%s) differs from the reference", filepath.Base(dir), typ, variant, asm, c.row, kinds[c.row])
						}
					}
				}
			}
		}
	}
}
