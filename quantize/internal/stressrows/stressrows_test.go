package stressrows_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/stressrows"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

func TestToBF16(t *testing.T) {
	for _, c := range []struct {
		in, want uint32
	}{
		{0x00000000, 0x00000000},
		{0x80000000, 0x80000000}, // -0 keeps its sign
		{0x3f800000, 0x3f800000}, // 1
		{0x3f808000, 0x3f800000}, // 1 + 2^-8: a tie, to the even 1
		{0x3f818000, 0x3f820000}, // a tie, to the even 1 + 2^-6
		{0x3f808001, 0x3f810000}, // just above a tie
		{0x3f807fff, 0x3f800000}, // just below a tie
		{0xbf808001, 0xbf810000}, // negative values round by magnitude
		{0x00008000, 0x00000000}, // a subnormal tie, to the even 0
		{0x00018000, 0x00020000},
		{0x7f800000, 0x7f800000}, // +Inf
		{0xff800000, 0xff800000}, // -Inf
		{0x7f7fffff, 0x7f800000}, // the largest float32 rounds up to +Inf
	} {
		if got := math.Float32bits(stressrows.ToBF16(math.Float32frombits(c.in))); got != c.want {
			t.Errorf("ToBF16(%#08x) = %#08x, want %#08x", c.in, got, c.want)
		}
	}
	// NaNs whose payload would carry into the exponent (0x7fffffff) or
	// vanish (0x7f800001) under plain rounding.
	for _, in := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff, 0xffffffff} {
		got := stressrows.ToBF16(math.Float32frombits(in))
		if b := math.Float32bits(got); got == got || b&0xffff != 0 {
			t.Errorf("ToBF16(%#08x) = %#08x, want a bf16 NaN", in, b)
		}
	}
}

// TestStress fills a row of every recipe twice from one seed and wants the
// same bf16 values both times and, by digest, the rows the recipes made
// when the packages' testdata/refcases were made from them.
func TestStress(t *testing.T) {
	// In the stress README's order.
	want := []struct{ name, digest string }{
		{"normal", "34486aaabe18cd3a"},
		{"student-t", "7094b0d509a8d8f5"},
		{"outlier-channels", "4fe1d778a36ae29b"},
		{"thirds", "3cd6932d48cf0911"},
		{"tiny", "d5da857ad9ac638e"},
		{"large", "ff6be1b4909cc5c5"},
		{"ternary", "4dc08e6dbaae2d91"},
		{"huge", "247163274ed96af3"},
		{"scale-jumps", "e9b9ad70f458eb06"},
		{"one-signed", "7d5bf3d8895e6db6"},
		{"sparse", "9f5d2c8708164330"},
		{"uniform", "5f05dc3826e80b8a"},
		{"outlier", "0501c48e591ba530"},
		{"laplace", "e34e8a6806362061"},
		{"grid", "db6d816287a93023"},
		{"offset", "671a1b4f624a575c"},
	}
	if len(stressrows.Stress) != len(want) {
		t.Fatalf("%d stress recipes, want %d", len(stressrows.Stress), len(want))
	}
	const cols = 512
	for i, k := range stressrows.Stress {
		a, b := make([]float32, cols), make([]float32, cols)
		stressrows.MakeRow(k, rand.New(rand.NewPCG(2024, uint64(i))), a)
		stressrows.MakeRow(k, rand.New(rand.NewPCG(2024, uint64(i))), b)
		da, db := testrows.Digest(testrows.Float32Bytes(a)), testrows.Digest(testrows.Float32Bytes(b))
		if da != db {
			t.Errorf("recipe %d (%s): two rows from one seed differ", i, k.Name)
		}
		if k.Name != want[i].name || da != want[i].digest {
			t.Errorf("recipe %d: %s, row digest %s; want %s, %s", i, k.Name, da, want[i].name, want[i].digest)
		}
		for j, v := range a {
			if math.Float32bits(v)&0xffff != 0 || math.IsInf(float64(v), 0) || v != v {
				t.Errorf("recipe %d (%s): value %d is %g, not a finite bf16", i, k.Name, j, v)
				break
			}
		}
	}
}

// TestMakeRowF32 wants a kind with F32 left as Make wrote it.
func TestMakeRowF32(t *testing.T) {
	k := stressrows.Kind{Name: "third", F32: true, Make: func(_ *rand.Rand, row []float32) { stressrows.Fill(row, 1.0/3) }}
	row := make([]float32, 32)
	stressrows.MakeRow(k, nil, row)
	if row[0] != 1.0/3 {
		t.Errorf("F32 row: %g, want %g", row[0], float32(1.0/3))
	}
	k.F32 = false
	stressrows.MakeRow(k, nil, row)
	if row[0] != stressrows.ToBF16(1.0/3) {
		t.Errorf("bf16 row: %g, want %g", row[0], stressrows.ToBF16(1.0/3))
	}
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.tsv", "# type\timatrix\trow\thash\n\niq2_xs\timat\t3\tabcd\n# a comment\nq4_K\tplain\t0\tabort\n\n")
	cases, err := stressrows.ReadManifest(good, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []stressrows.Case{
		{Type: formats.IQ2_XS, Row: 3, Fields: []string{"iq2_xs", "imat", "3", "abcd"}},
		{Type: formats.Q4_K, Row: 0, Fields: []string{"q4_K", "plain", "0", "abort"}},
	}
	if !slices.EqualFunc(cases, want, func(a, b stressrows.Case) bool {
		return a.Type == b.Type && a.Row == b.Row && slices.Equal(a.Fields, b.Fields)
	}) {
		t.Errorf("ReadManifest: %v, want %v", cases, want)
	}
	lines, err := stressrows.ReadTSV(good, 4)
	if err != nil || len(lines) != 2 || lines[1][3] != "abort" {
		t.Errorf("ReadTSV: %q, %v", lines, err)
	}

	for _, c := range []struct {
		name, text string
		want       string // in the error, after the file's name
	}{
		{"fields", "# comment\n\nq4_K\tplain\t0\tabcd\nq4_K\tplain\t1\n", ":4: 3 fields, want 4"},
		{"type", "q4_K\tplain\t0\tabcd\nq9_Z\tplain\t1\tabcd\n", ":2: "},
		{"row", "q4_K\tplain\tx\tabcd\n", ":1: row: "},
	} {
		p := write(c.name+".tsv", c.text)
		_, err := stressrows.ReadManifest(p, 4, 2)
		if err == nil || !strings.HasPrefix(err.Error(), p+c.want) {
			t.Errorf("%s: error %v, want one starting %q", c.name, err, p+c.want)
		}
	}
	if _, err := stressrows.ReadTSV(filepath.Join(dir, "fields.tsv"), 4); err == nil || !strings.Contains(err.Error(), "fields.tsv:4:") {
		t.Errorf("ReadTSV of a short line: error %v", err)
	}
	if _, err := stressrows.ReadManifest(filepath.Join(dir, "absent.tsv"), 4, 2); err == nil {
		t.Error("ReadManifest of a missing file: no error")
	}
}

func TestF32RoundTrip(t *testing.T) {
	v := []float32{0, float32(math.Copysign(0, -1)), 1.5, -3e-40, float32(math.Inf(1)), math.MaxFloat32}
	p := filepath.Join(t.TempDir(), "v.f32")
	if err := stressrows.WriteF32(p, v); err != nil {
		t.Fatal(err)
	}
	got := stressrows.ReadF32(t, p)
	if !slices.EqualFunc(got, v, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
		t.Errorf("read %v, wrote %v", got, v)
	}
}
