package ternary

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// refquant, when set, makes TestRefCases rewrite testdata/refcases from the
// reference build's refquant (see testdata/refcases/README.md).
var refquant = flag.String("refquant", "", "path of the reference build's refquant: rewrite testdata/refcases with its output")

var refTypes = []formats.Type{formats.IQ1_BN, formats.IQ2_BN, formats.IQ2_BN_R4}

// refCols is the row length of the reference set: four blocks of 64.
const refCols = 256

// rowKinds are rows the ternary quantizers may treat specially: all depends
// on the row's largest magnitude m (stored as fp16 by iq1_bn, float32 by
// iq2_bn) and on comparisons with m/2.
var rowKinds = []stressrows.Kind{
	{Name: "normal", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 0.02) }},
	{Name: "zero", Make: func(r *rand.Rand, row []float32) { clear(row) }},
	{Name: "negative-zeros", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(math.Copysign(0, float64(r.IntN(2)-1)))
		}
	}},
	{Name: "constant", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, 0.05) }},
	{Name: "constant-negative", Make: func(r *rand.Rand, row []float32) { stressrows.Fill(row, -1e-3) }},
	{Name: "one-value", Make: func(r *rand.Rand, row []float32) {
		clear(row)
		row[r.IntN(len(row))] = -0.7
	}},
	{Name: "ternary", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(3)-1) * 0.03
		}
	}},
	{Name: "at-threshold", Make: func(r *rand.Rand, row []float32) {
		// Values m/2 and just below and above it, of both signs.
		for i := range row {
			v := []float32{1, 0.5, math.Nextafter32(0.5, 0), math.Nextafter32(0.5, 1), 0.25, 0}[r.IntN(6)]
			if r.IntN(2) == 0 {
				v = -v
			}
			row[i] = v
		}
		row[r.IntN(len(row))] = -1
	}},
	{Name: "grid", Make: func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(7)-3) * 0.01
		}
	}},
	{Name: "outlier", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{Name: "sparse", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		for i := range row {
			if r.IntN(10) != 0 {
				row[i] = 0
			}
		}
	}},
	{Name: "one-signed", Make: func(r *rand.Rand, row []float32) {
		stressrows.Normal(r, row, 0.02)
		for i, v := range row {
			row[i] = float32(math.Abs(float64(v)))
		}
	}},
	{Name: "fp16-overflow", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e5) }},
	{Name: "fp16-max-tie", Make: func(r *rand.Rand, row []float32) {
		// The largest magnitude halfway between two fp16 values (1 + 2^-11).
		stressrows.Normal(r, row, 0.1)
		row[r.IntN(len(row))] = 1 + 1.0/2048
	}},
	{Name: "fp16-subnormal", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-6) }},
	{Name: "fp16-underflow", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-9) }},
	{Name: "subnormal", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e-40) }},
	{Name: "huge", Make: func(r *rand.Rand, row []float32) { stressrows.Normal(r, row, 1e30) }},
}

// makeRows is two rows of every kind (a multiple of four rows, for
// iq2_bn_r4), with their kind names.
func makeRows(r *rand.Rand, cols int) ([]float32, []string) {
	var src []float32
	var kinds []string
	row := make([]float32, cols)
	for _, k := range rowKinds {
		for n := 0; n < 2; n++ {
			k.Make(r, row)
			src = append(src, row...)
			kinds = append(kinds, k.Name)
		}
	}
	for len(kinds)%4 != 0 {
		stressrows.Normal(r, row, 0.02)
		src = append(src, row...)
		kinds = append(kinds, "normal")
	}
	return src, kinds
}

// groupRows is the number of rows one hashed group holds: four for the
// interleaved type, whose rows share their bytes.
func groupRows(t formats.Type) int {
	if t == formats.IQ2_BN_R4 {
		return 4
	}
	return 1
}

// writeRefSet runs the reference on src for every type and writes
// testdata/refcases: input.f32 and manifest.tsv (type, first row of the
// group, its kind, hash of the group's bytes).
func writeRefSet(t *testing.T, src []float32, kinds []string) {
	dir := filepath.Join("testdata", "refcases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "input.f32")
	if err := stressrows.WriteF32(input, src); err != nil {
		t.Fatal(err)
	}
	rows := len(kinds)
	var m bytes.Buffer
	m.WriteString("# type\trow\tkind\tsha256[:16] of the reference's row (iq2_bn_r4: of the four rows from there)\n")
	for _, typ := range refTypes {
		rs, err := typ.RowSize(refCols)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out.bin")
		cmd := exec.Command(*refquant, typ.String(), strconv.Itoa(rows), strconv.Itoa(refCols), input, "-", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", typ, err, msg)
		}
		q, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) != rows*int(rs) {
			t.Fatalf("%s: the reference wrote %d bytes, want %d", typ, len(q), rows*int(rs))
		}
		g := groupRows(typ)
		for i := 0; i < rows; i += g {
			fmt.Fprintf(&m, "%s\t%d\t%s\t%s\n", typ, i, kinds[i], testrows.Digest(q[i*int(rs):(i+g)*int(rs)]))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.tsv"), m.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRefCases quantizes the rows of testdata/refcases with the assembly
// and the portable loops and compares each row (group of four for
// iq2_bn_r4) with the reference's, by hash. With -refquant it first
// rewrites the set.
func TestRefCases(t *testing.T) {
	if *refquant != "" {
		src, kinds := makeRows(rand.New(rand.NewPCG(2024, 16)), refCols)
		writeRefSet(t, src, kinds)
	}
	dir := filepath.Join("testdata", "refcases")
	src := stressrows.ReadF32(t, filepath.Join(dir, "input.f32"))
	rows := len(src) / refCols
	lines, err := stressrows.ReadManifest(filepath.Join(dir, "manifest.tsv"), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[formats.Type]map[int][2]string{}
	for _, l := range lines {
		if want[l.Type] == nil {
			want[l.Type] = map[int][2]string{}
		}
		want[l.Type][l.Row] = [2]string{l.Fields[2], l.Fields[3]}
	}
	paths := []bool{false}
	if useAVX2 {
		paths = append(paths, true)
	}
	for _, typ := range refTypes {
		g := groupRows(typ)
		if len(want[typ]) != rows/g {
			t.Fatalf("%s: %d groups in the manifest, want %d", typ, len(want[typ]), rows/g)
		}
		rs, err := typ.RowSize(refCols)
		if err != nil {
			t.Fatal(err)
		}
		for _, asm := range paths {
			got := make([]byte, rows*int(rs))
			saved := useAVX2
			useAVX2 = asm
			err := Kernels(kernel.Options{})[typ](got, src, rows, refCols, nil)
			useAVX2 = saved
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < rows; i += g {
				w := want[typ][i]
				if h := testrows.Digest(got[i*int(rs) : (i+g)*int(rs)]); h != w[1] {
					t.Errorf("%s assembly %v: row %d (%s) differs from the reference", typ, asm, i, w[0])
				}
			}
		}
	}
}

// TestKernelsPortable quantizes seeded random rows of every kind with the
// assembly and the portable loops and wants the same bytes.
func TestKernelsPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for trial := 0; trial < 20; trial++ {
		cols := 64 * (1 + r.IntN(8))
		src, kinds := makeRows(r, cols)
		rows := len(kinds)
		for _, typ := range refTypes {
			rs, err := typ.RowSize(int64(cols))
			if err != nil {
				t.Fatal(err)
			}
			asm, portable := make([]byte, rows*int(rs)), make([]byte, rows*int(rs))
			if err := Kernels(kernel.Options{})[typ](asm, src, rows, cols, nil); err != nil {
				t.Fatal(err)
			}
			useAVX2 = false
			err = Kernels(kernel.Options{})[typ](portable, src, rows, cols, nil)
			useAVX2 = true
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < rows; i++ {
				if a, p := asm[i*int(rs):(i+1)*int(rs)], portable[i*int(rs):(i+1)*int(rs)]; !slices.Equal(a, p) {
					t.Errorf("trial %d %s row %d (%s, %d columns): the portable loops give other bytes", trial, typ, i, kinds[i], cols)
				}
			}
		}
	}
}
