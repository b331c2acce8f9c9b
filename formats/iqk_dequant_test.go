package formats_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/internal/tables"
)

// iqkBaseTypes are the IQK types whose golden outputs come with a reference
// dequantization (kernels/<type>.<variant>.deq.f32).
var iqkBaseTypes = map[string]bool{
	"iq2_k": true, "iq3_k": true, "iq4_k": true, "iq5_k": true, "iq6_k": true,
	"iq2_ks": true, "iq2_kl": true, "iq3_ks": true, "iq4_ks": true, "iq4_kss": true, "iq5_ks": true,
}

// TestIQKDequantizeGolden dequantizes the reference's quantized bytes and
// compares with the reference's own dequantization, bit for bit.
func TestIQKDequantizeGolden(t *testing.T) {
	for _, c := range golden.Kernels(t) {
		if !iqkBaseTypes[c.Type] || c.Dequant == "" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			src := golden.ReadFile(t, "kernels", c.File)
			want := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			got := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, src, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("row %d column %d: got %v (%#08x), want %v (%#08x)", i/c.Cols, i%c.Cols,
						got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		})
	}
}

// TestIQKTables checks the value grids against properties the quantizers and
// the reference's lookup tables rely on: each half strictly increasing, the
// shifted half a constant step above the plain one, the iq6_k grid equal to
// its cubic rounded, and iq2_kl pairs drawn from the plain iq3 grid.
func TestIQKTables(t *testing.T) {
	grids := []struct {
		name   string
		values []int8
		shift  int8 // shifted half minus plain half
	}{
		{"iq2nl", tables.IQ2NLValues[:], 5},
		{"iq3nl", tables.IQ3NLValues[:], 4},
		{"iq4k", tables.IQ4KValues[:], 4},
		{"iq5nl", tables.IQ5NLValues[:], 2},
		{"iq6nl", tables.IQ6NLValues[:], 1},
	}
	for _, g := range grids {
		half := len(g.values) / 2
		for i := 0; i < half; i++ {
			if i > 0 && g.values[i] <= g.values[i-1] {
				t.Errorf("%s not increasing at %d: %d after %d", g.name, i, g.values[i], g.values[i-1])
			}
			if d := g.values[half+i] - g.values[i]; d != g.shift {
				t.Errorf("%s[%d]: shifted value %d is %d above plain, want %d", g.name, i, g.values[half+i], d, g.shift)
			}
		}
	}
	if tables.IQ4KValues[0] != -127 || tables.IQ4KValues[15] != 113 || tables.IQ2NLValues[0] != -31 || tables.IQ5NLValues[31] != 121 {
		t.Error("grid end points differ from ggml-common.h")
	}
	for q := 0; q < 64; q++ {
		for s := 0; s < 2; s++ {
			v := formats.IQ6KValue(q, s == 1)
			if want := float32(tables.IQ6NLValues[64*s+q]); math.Abs(float64(v-want)) > 0.5 {
				t.Errorf("iq6 value %d shifted=%d: cubic %v, table %v", q, s, v, want)
			}
		}
	}
	inGrid := map[int8]bool{}
	for _, v := range tables.IQ3NLValues[:8] {
		inGrid[v] = true
	}
	seen := map[uint16]bool{}
	for i, p := range tables.IQ2KLValues {
		if !inGrid[int8(p)] || !inGrid[int8(p>>8)] || seen[p] {
			t.Errorf("iq2kl entry %d (%#04x) is not a new pair of iq3 grid points", i, p)
		}
		seen[p] = true
	}
}
