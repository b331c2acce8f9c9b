package ternary

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	"github.com/gquant/gquant/quantize/internal/kernel"
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
var rowKinds = []struct {
	name string
	make func(r *rand.Rand, row []float32)
}{
	{"normal", func(r *rand.Rand, row []float32) { normal(r, row, 0.02) }},
	{"zero", func(r *rand.Rand, row []float32) { clear(row) }},
	{"negative-zeros", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(math.Copysign(0, float64(r.IntN(2)-1)))
		}
	}},
	{"constant", func(r *rand.Rand, row []float32) { fill(row, 0.05) }},
	{"constant-negative", func(r *rand.Rand, row []float32) { fill(row, -1e-3) }},
	{"one-value", func(r *rand.Rand, row []float32) {
		clear(row)
		row[r.IntN(len(row))] = -0.7
	}},
	{"ternary", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(3)-1) * 0.03
		}
	}},
	{"at-threshold", func(r *rand.Rand, row []float32) {
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
	{"grid", func(r *rand.Rand, row []float32) {
		for i := range row {
			row[i] = float32(r.IntN(7)-3) * 0.01
		}
	}},
	{"outlier", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		row[r.IntN(len(row))] = 20
	}},
	{"sparse", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i := range row {
			if r.IntN(10) != 0 {
				row[i] = 0
			}
		}
	}},
	{"one-signed", func(r *rand.Rand, row []float32) {
		normal(r, row, 0.02)
		for i, v := range row {
			row[i] = float32(math.Abs(float64(v)))
		}
	}},
	{"fp16-overflow", func(r *rand.Rand, row []float32) { normal(r, row, 1e5) }},
	{"fp16-max-tie", func(r *rand.Rand, row []float32) {
		// The largest magnitude halfway between two fp16 values (1 + 2^-11).
		normal(r, row, 0.1)
		row[r.IntN(len(row))] = 1 + 1.0/2048
	}},
	{"fp16-subnormal", func(r *rand.Rand, row []float32) { normal(r, row, 1e-6) }},
	{"fp16-underflow", func(r *rand.Rand, row []float32) { normal(r, row, 1e-9) }},
	{"subnormal", func(r *rand.Rand, row []float32) { normal(r, row, 1e-40) }},
	{"huge", func(r *rand.Rand, row []float32) { normal(r, row, 1e30) }},
}

func normal(r *rand.Rand, row []float32, sigma float64) {
	for i := range row {
		row[i] = float32(sigma * r.NormFloat64())
	}
}

func fill(row []float32, v float32) {
	for i := range row {
		row[i] = v
	}
}

// makeRows is two rows of every kind (a multiple of four rows, for
// iq2_bn_r4), with their kind names.
func makeRows(r *rand.Rand, cols int) ([]float32, []string) {
	var src []float32
	var kinds []string
	row := make([]float32, cols)
	for _, k := range rowKinds {
		for n := 0; n < 2; n++ {
			k.make(r, row)
			src = append(src, row...)
			kinds = append(kinds, k.name)
		}
	}
	for len(kinds)%4 != 0 {
		normal(r, row, 0.02)
		src = append(src, row...)
		kinds = append(kinds, "normal")
	}
	return src, kinds
}

func rowHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
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
	b := make([]byte, 4*len(src))
	for i, v := range src {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(input, b, 0o644); err != nil {
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
			fmt.Fprintf(&m, "%s\t%d\t%s\t%s\n", typ, i, kinds[i], rowHash(q[i*int(rs):(i+g)*int(rs)]))
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
	raw, err := os.ReadFile(filepath.Join(dir, "input.f32"))
	if err != nil {
		t.Fatal(err)
	}
	src := make([]float32, len(raw)/4)
	for i := range src {
		src[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	rows := len(src) / refCols
	f, err := os.Open(filepath.Join(dir, "manifest.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[formats.Type]map[int][2]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 4 {
			t.Fatalf("manifest.tsv: bad line %q", line)
		}
		typ, err := formats.ParseType(fs[0])
		if err != nil {
			t.Fatal(err)
		}
		row, err := strconv.Atoi(fs[1])
		if err != nil {
			t.Fatal(err)
		}
		if want[typ] == nil {
			want[typ] = map[int][2]string{}
		}
		want[typ][row] = [2]string{fs[2], fs[3]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
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
				if h := rowHash(got[i*int(rs) : (i+g)*int(rs)]); h != w[1] {
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
