package iquant

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
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
var refquant = flag.String("refquant", "", "path of the reference build's refquant: rewrite testdata/refcases with its output")

// refSet is one folder of testdata/refcases: rows quantized by the
// reference in one call per type and variant.
type refSet struct {
	name    string
	cols    int
	input   []float32 // rows x cols
	imatrix []float32 // cols
	kinds   []string  // per row
	types   []formats.Type
	// block, when set, takes the reference's bytes from the golden stress
	// file of each type instead of refquant: the set is one super-block of
	// a stress row.
	block *stressBlock
}

// stressBlock is super-block blk of row row of stress set set.
type stressBlock struct {
	set      string
	row, blk int
}

// refquantDiffers lists the types for which /work/refbuild's refquant does
// not write the golden bytes (its verify.log: the golden build's GCC made
// other floating-point contraction choices in ggml-quants.c's iq1_s, iq1_m
// and iq2_s code; for iq1_s, e.g., its clone of iq1s_process_1block for
// quantize_iq1_s fuses the plus shift's last sum q*q product, the golden
// build's does not). For them the sets keep only where the reference aborts
// (a decision, not a rounding): the row hashes are "-".
var refquantDiffers = map[formats.Type]bool{
	formats.IQ1_S: true, formats.IQ1_M: true, formats.IQ1_S_R4: true, formats.IQ1_M_R4: true,
	formats.IQ2_S: true, formats.IQ2_S_R4: true,
}

// allTypes lists the package's types in id order; baseTypes those that are
// not interleaved (for sets of one row).
func allTypes() []formats.Type {
	var out []formats.Type
	for t := range Kernels(kernel.Options{}) {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func baseTypes() []formats.Type {
	var out []formats.Type
	for _, t := range allTypes() {
		if t.Interleave() == 1 {
			out = append(out, t)
		}
	}
	return out
}

// makeRefSets builds the sets that -refquant writes: one row of every
// rowKind, and single super-blocks of ../shared/golden/stress where we once
// differed from the reference (with the slice of the importance vector of
// their columns).
func makeRefSets(t *testing.T) []refSet {
	const cols = 512
	r := rand.New(rand.NewPCG(2024, 15))
	special := refSet{name: "special", cols: cols, imatrix: makeImatrix(r, cols, false), types: allTypes()}
	row := make([]float32, cols)
	for _, k := range rowKinds {
		stressrows.MakeRow(k, r, row)
		special.input = append(special.input, row...)
		special.kinds = append(special.kinds, k.Name)
	}
	// Zero importance on whole blocks, in a set of its own: the reference
	// aborts on many of these rows (iq1_s, iq2_xxs), and finding which
	// takes one run per row.
	zero := refSet{name: "zero-importance-blocks", cols: cols, imatrix: makeImatrix(r, cols, true), types: allTypes()}
	for _, name := range zeroBlockKinds {
		stressrows.MakeRow(kindByName(name), r, row)
		zero.input = append(zero.input, row...)
		zero.kinds = append(zero.kinds, name)
	}
	// Eight rows of 768 of a real-shaped attn_q_b (the medium model's
	// layer 0, rows 555, 1237, 1920, 2603 and 556-559) with its importance
	// vector: in the first four an iq4_xs sub-block scale id*scales[ib] is
	// an exact half in float32, and the reference's nearest_int rounds the
	// fused product instead (found by whole runs against llama-quantize).
	// The set keeps its own input.
	ties := refSet{name: "q_b-768-scale-ties", cols: 768, types: []formats.Type{formats.IQ4_NL, formats.IQ4_XS, formats.IQ4_XS_R8}}
	ties.input = stressrows.ReadF32(t, filepath.Join("testdata", "refcases", ties.name, "input.f32"))
	ties.imatrix = stressrows.ReadF32(t, filepath.Join("testdata", "refcases", ties.name, "imatrix.f32"))
	for range 4 {
		ties.kinds = append(ties.kinds, "iq4_xs-scale-tie")
	}
	for range 4 {
		ties.kinds = append(ties.kinds, "real")
	}
	sets := []refSet{special, zero, ties}
	for _, b := range []struct {
		stressBlock
		why string
	}{
		// iq2_s: the second group's trial levels fuse id*x-1.
		{stressBlock{"s202", 21, 14}, "iq2_s-fused-levels"},
		{stressBlock{"s303", 37, 2}, "iq2_s-fused-levels"},
	} {
		in, w := golden.Input(t, filepath.Join("stress", b.set))
		o := b.row*len(w) + b.blk*qkK
		sets = append(sets, refSet{
			name:    fmt.Sprintf("%s-row%d-block%d", b.set, b.row, b.blk),
			cols:    qkK,
			input:   slices.Clone(in[o : o+qkK]),
			imatrix: slices.Clone(w[b.blk*qkK : (b.blk+1)*qkK]),
			kinds:   []string{b.why},
			types:   baseTypes(),
			block:   &b.stressBlock,
		})
	}
	return sets
}

// runRefquant runs the reference on rows of cols values; ok is false when
// it stopped (an abort) instead of writing its output.
func runRefquant(t *testing.T, typ formats.Type, rows []float32, cols int, imatrix string) (out []byte, ok bool) {
	dir := t.TempDir()
	input, output := filepath.Join(dir, "in.f32"), filepath.Join(dir, "out.bin")
	if err := stressrows.WriteF32(input, rows); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(*refquant, typ.String(), strconv.Itoa(len(rows)/cols), strconv.Itoa(cols), input, imatrix, output)
	// No PATH: ggml_abort's backtrace would attach gdb, which takes long.
	cmd.Env = []string{"PATH="}
	if msg, err := cmd.CombinedOutput(); err != nil {
		if !strings.Contains(string(msg), "Oops") && !strings.Contains(string(msg), "GGML_ASSERT") {
			t.Fatalf("%s: %v\n%s", typ, err, msg)
		}
		return nil, false
	}
	b, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// refRowHashes returns the reference's hash of every row of a call, or
// "abort" for the rows on which it stops. The kernels quantize rows (and row
// groups) independently, so a call that aborts is split in halves until the
// groups it aborts on are found.
func refRowHashes(t *testing.T, typ formats.Type, input []float32, cols int, imatrix string) []string {
	rs, err := typ.RowSize(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	n := typ.Interleave()
	hashes := make([]string, len(input)/cols)
	var walk func(first, rows int)
	walk = func(first, rows int) {
		out, ok := runRefquant(t, typ, input[first*cols:(first+rows)*cols], cols, imatrix)
		switch {
		case ok:
			if len(out) != rows*int(rs) {
				t.Fatalf("%s: the reference wrote %d bytes, want %d", typ, len(out), rows*int(rs))
			}
			for r := 0; r < rows; r++ {
				hashes[first+r] = testrows.Digest(out[r*int(rs) : (r+1)*int(rs)])
			}
		case rows == n:
			for r := first; r < first+n; r++ {
				hashes[r] = "abort"
			}
		default:
			half := rows / n / 2 * n
			walk(first, half)
			walk(first+half, rows-half)
		}
	}
	walk(0, len(hashes))
	return hashes
}

// writeRefSet runs the reference on the set for every type, plain (where the
// reference quantizes without an importance vector) and with it, and writes
// the set's folder.
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
	imatrix, err := filepath.Abs(imatrix)
	if err != nil {
		t.Fatal(err)
	}
	var rows bytes.Buffer
	rows.WriteString("# row\tkind\n")
	for i, k := range s.kinds {
		fmt.Fprintf(&rows, "%d\t%s\n", i, k)
	}
	if err := os.WriteFile(filepath.Join(dir, "rows.tsv"), rows.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	m.WriteString("# type\tvariant\trow\tsha256[:16] of the reference's row, abort where it stops, - where refquant is not the reference\n")
	for _, typ := range s.types {
		info, _ := typ.Info()
		for _, variant := range []string{"plain", "imat"} {
			w := "-"
			if variant == "imat" {
				w = imatrix
			} else if info.NeedsImatrix {
				continue
			}
			var hashes []string
			fromGolden := false
			if s.block != nil {
				hashes = goldenBlockHashes(t, *s.block, typ, variant)
				fromGolden = hashes != nil
			}
			if !fromGolden {
				hashes = refRowHashes(t, typ, s.input, s.cols, w)
			}
			for i, h := range hashes {
				if h != "abort" && refquantDiffers[typ] && !fromGolden {
					h = "-"
				}
				fmt.Fprintf(&m, "%s\t%s\t%d\t%s\n", typ, variant, i, h)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.tsv"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenBlockHashes returns the hash of the golden bytes of super-block b
// (one row of one block) for typ, or nil where the reference aborted on the
// whole case (the golden data has no bytes).
func goldenBlockHashes(t *testing.T, b stressBlock, typ formats.Type, variant string) []string {
	set := filepath.Join("stress", b.set)
	for _, c := range golden.Manifest(t, set) {
		if c.Type != typ.String() || c.Imatrix != (variant == "imat") {
			continue
		}
		if c.File == "abort" {
			return nil
		}
		data := golden.ReadFile(t, set, c.File)
		rs, _ := typ.RowSize(int64(c.Cols))
		bs, _ := typ.RowSize(qkK)
		o := b.row*int(rs) + b.blk*int(bs)
		return []string{testrows.Digest(data[o : o+int(bs)])}
	}
	t.Fatalf("no golden %s %s case in %s", typ, variant, set)
	return nil
}

// refCase is one line of a set's manifest.tsv.
type refCase struct {
	typ     formats.Type
	imatrix bool
	row     int
	hash    string // "abort" where the reference stops, "-" where unknown
}

// readTSV is stressrows.ReadTSV, failing t on an error.
func readTSV(t *testing.T, path string, n int) [][]string {
	t.Helper()
	lines, err := stressrows.ReadTSV(path, n)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func readManifest(t *testing.T, path string) []refCase {
	t.Helper()
	lines, err := stressrows.ReadManifest(path, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	for _, l := range lines {
		cases = append(cases, refCase{typ: l.Type, imatrix: l.Fields[1] == "imat", row: l.Row, hash: l.Fields[3]})
	}
	return cases
}

// TestRefCases quantizes the rows of every set of testdata/refcases with the
// assembly and the portable paths and compares each row with the
// reference's (by hash); rows where the reference aborts must be exactly the
// rows our kernel reports as written by its fallback. With -refquant it
// first rewrites the sets.
func TestRefCases(t *testing.T) {
	if *refquant != "" {
		for _, s := range makeRefSets(t) {
			writeRefSet(t, s)
		}
	}
	manifests, err := filepath.Glob(filepath.Join("testdata", "refcases", "*", "manifest.tsv"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no reference sets in testdata/refcases: %v", err)
	}
	defer setAsm(true)
	for _, mpath := range manifests {
		dir := filepath.Dir(mpath)
		input, imatrix := stressrows.ReadF32(t, filepath.Join(dir, "input.f32")), stressrows.ReadF32(t, filepath.Join(dir, "imatrix.f32"))
		cols := len(imatrix)
		rows := len(input) / cols
		var kinds []string
		for _, f := range readTSV(t, filepath.Join(dir, "rows.tsv"), 2) {
			kinds = append(kinds, f[1])
		}
		if len(kinds) != rows {
			t.Fatalf("%s: %d rows in rows.tsv, %d in the input", dir, len(kinds), rows)
		}
		type key struct {
			typ  formats.Type
			imat bool
		}
		byCall := map[key][]refCase{}
		var calls []key
		for _, c := range readManifest(t, mpath) {
			k := key{c.typ, c.imatrix}
			if byCall[k] == nil {
				calls = append(calls, k)
			}
			byCall[k] = append(byCall[k], c)
		}
		for _, k := range calls {
			want := byCall[k]
			if len(want) != rows {
				t.Fatalf("%s: %d %s rows in the manifest, %d in the input", dir, len(want), k.typ, rows)
			}
			var w []float32
			if k.imat {
				w = imatrix
			}
			rs, err := k.typ.RowSize(int64(cols))
			if err != nil {
				t.Fatal(err)
			}
			var aborts []int
			for _, c := range want {
				if c.hash == "abort" {
					aborts = append(aborts, c.row)
				}
			}
			for _, asm := range asmLevels {
				name := fmt.Sprintf("%s %s imatrix %v assembly level %d", filepath.Base(dir), k.typ, k.imat, asm)
				setAsmLevel(asm)
				got := make([]byte, rows*int(rs))
				err := Kernels(kernel.Options{})[k.typ](got, input, rows, cols, w)
				var fb *FallbackError
				var fellBack []int
				if errors.As(err, &fb) {
					fellBack, err = fb.Rows, nil
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !slices.Equal(fellBack, aborts) {
					t.Errorf("%s: fallback rows %v, want the rows where the reference aborts, %v", name, fellBack, aborts)
				}
				for _, c := range want {
					if c.hash == "abort" || c.hash == "-" {
						continue
					}
					if h := testrows.Digest(got[c.row*int(rs) : (c.row+1)*int(rs)]); h != c.hash {
						t.Errorf("%s: row %d (%s) differs from the reference", name, c.row, kinds[c.row])
					}
				}
			}
		}
	}
}

// stressAbortFile holds, for every case of ../shared/golden/stress whose
// manifest says abort (the reference stopped and wrote nothing) and whose
// type is this package's, the reference's hash of every row it does quantize
// and abort for the rows it stops on, found by quantizing parts of the set.
const stressAbortFile = "testdata/stress-abort.tsv"

// stressAbortCases returns the set and case of every stress case of this
// package whose manifest says abort.
func stressAbortCases(t *testing.T) (sets []string, cases []golden.KernelCase) {
	for _, set := range golden.StressSets(t) {
		for _, c := range golden.Manifest(t, set) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			if c.File == "abort" && Kernels(kernel.Options{})[typ] != nil {
				sets, cases = append(sets, set), append(cases, c)
			}
		}
	}
	return sets, cases
}

func writeStressAbort(t *testing.T) {
	var m bytes.Buffer
	m.WriteString("# set\ttype\tvariant\trow\trecipe\tsha256[:16] of the reference's row, or abort\n")
	sets, cases := stressAbortCases(t)
	for i, c := range cases {
		typ, _ := formats.ParseType(c.Type)
		input, _ := golden.Input(t, sets[i])
		w := "-"
		variant := "plain"
		if c.Imatrix {
			w, variant = golden.Path(t, sets[i], "imatrix.f32"), "imat"
		}
		for r, h := range refRowHashes(t, typ, input, c.Cols, w) {
			fmt.Fprintf(&m, "%s\t%s\t%s\t%d\t%d\t%s\n", filepath.Base(sets[i]), typ, variant, r, r%16, h)
		}
	}
	if err := os.WriteFile(stressAbortFile, m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStressAbortRows quantizes every stress case on which the reference
// aborts, with the assembly and the portable paths: every row the reference
// quantizes on its own must be its bytes, and the rows it stops on must be
// exactly those our kernel reports as written by its fallback. With
// -refquant it first rewrites testdata/stress-abort.tsv.
func TestStressAbortRows(t *testing.T) {
	if *refquant != "" {
		writeStressAbort(t)
	}
	want := map[string][]string{} // "set/type/variant" -> hash per row
	for _, p := range readTSV(t, stressAbortFile, 6) {
		k := p[0] + "/" + p[1] + "/" + p[2]
		if r, _ := strconv.Atoi(p[3]); r != len(want[k]) {
			t.Fatalf("%s: rows of %s out of order", stressAbortFile, k)
		}
		want[k] = append(want[k], p[5])
	}
	defer setAsm(true)
	sets, cases := stressAbortCases(t)
	if len(cases) == 0 {
		t.Fatal("no stress case of this package aborts in the reference")
	}
	for i, c := range cases {
		typ, _ := formats.ParseType(c.Type)
		input, imatrix := golden.Input(t, sets[i])
		key := filepath.Base(sets[i]) + "/" + c.Name()
		hashes := want[key]
		if len(hashes) != c.Rows {
			t.Fatalf("%s: %d rows in %s, want %d", key, len(hashes), stressAbortFile, c.Rows)
		}
		if !c.Imatrix {
			imatrix = nil
		}
		var aborts []int
		for r, h := range hashes {
			if h == "abort" {
				aborts = append(aborts, r)
			}
		}
		rs, _ := typ.RowSize(int64(c.Cols))
		for _, asm := range asmLevels {
			setAsmLevel(asm)
			got := make([]byte, c.Rows*int(rs))
			err := Kernels(kernel.Options{})[typ](got, input, c.Rows, c.Cols, imatrix)
			var fb *FallbackError
			var fellBack []int
			if errors.As(err, &fb) {
				fellBack, err = fb.Rows, nil
			}
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if !slices.Equal(fellBack, aborts) {
				t.Errorf("%s assembly level %d: fallback rows %v, want the rows where the reference aborts, %v", key, asm, fellBack, aborts)
			}
			for r, h := range hashes {
				if h != "abort" && testrows.Digest(got[r*int(rs):(r+1)*int(rs)]) != h {
					t.Errorf("%s assembly level %d: row %d (recipe %d) differs from the reference", key, asm, r, r%16)
				}
			}
		}
	}
}
