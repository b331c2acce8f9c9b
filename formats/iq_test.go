package formats_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/internal/tables"
)

// iqTypes are the IQ grid types and their interleaved forms (iq_*.go).
var iqTypes = map[string]bool{
	"iq1_s": true, "iq1_m": true, "iq2_xxs": true, "iq2_xs": true, "iq2_s": true, "iq3_xxs": true, "iq3_s": true,
	"iq4_nl": true, "iq4_xs": true, "iq1_s_r4": true, "iq1_m_r4": true, "iq2_xxs_r4": true, "iq2_xs_r4": true,
	"iq2_s_r4": true, "iq3_xxs_r4": true, "iq3_s_r4": true, "iq4_nl_r4": true, "iq4_xs_r8": true,
}

// TestIQDequantizeGolden checks DequantizeRows against the reference's own
// dequantization of its quantized bytes (kernels/*.deq.f32), bit for bit.
func TestIQDequantizeGolden(t *testing.T) {
	for _, c := range golden.Kernels(t) {
		if !iqTypes[c.Type] || c.Dequant == "" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			want := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			got := make([]float32, c.Rows*c.Cols)
			if err := formats.DequantizeRows(typ, c.Cols, golden.ReadFile(t, "kernels", c.File), got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("weight %d (row %d col %d): got %v, want %v", i, i/c.Cols, i%c.Cols, got[i], want[i])
				}
			}
		})
	}
}

// TestIQDeinterleaveGolden checks that the reference's interleaved outputs
// are its base-type outputs repacked. The imatrix variants quantize with
// per-block weights that the repacking quantizer replaces where the block's
// importance is negligible (QHelper in iqk_quantize.cpp); on the golden input
// that changes no block, so all comparisons are exact.
func TestIQDeinterleaveGolden(t *testing.T) {
	base := map[string]golden.KernelCase{}
	cases := golden.Kernels(t)
	for _, c := range cases {
		base[c.Name()] = c
	}
	for _, c := range cases {
		if !iqTypes[c.Type] {
			continue
		}
		typ, err := formats.ParseType(c.Type)
		if err != nil {
			t.Fatal(err)
		}
		if !typ.IsInterleaved() || !formats.CanInterleave(typ) {
			continue
		}
		b, ok := base[strings.Replace(c.Name(), c.Type, typ.Base().String(), 1)]
		if !ok {
			continue // the base type has no output without an imatrix
		}
		t.Run(c.Name(), func(t *testing.T) {
			group := golden.ReadFile(t, "kernels", c.File)
			want := golden.ReadFile(t, "kernels", b.File)
			got := make([]byte, len(want))
			if err := formats.Deinterleave(typ, c.Cols, got, group); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				share, diff := golden.BlockShare(got, want, typ.Base().TypeSize())
				t.Fatalf("deinterleaved %s differs from %s: %.4f of blocks equal, %s", c.File, b.File, share, diff)
			}
			again := make([]byte, len(group))
			if err := formats.Interleave(typ, c.Cols, again, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, group) {
				t.Fatalf("interleaving %s does not give %s", b.File, c.File)
			}
		})
	}
}

// TestIQInterleaveRoundTrip interleaves random bytes and back. Every bit of
// these layouts is significant, so the round trip must be the identity.
func TestIQInterleaveRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []formats.Type{formats.IQ4_NL_R4, formats.IQ4_XS_R8, formats.IQ2_XXS_R4, formats.IQ2_XS_R4,
		formats.IQ2_S_R4, formats.IQ3_XXS_R4, formats.IQ3_S_R4} {
		t.Run(typ.String(), func(t *testing.T) {
			const ne0 = 512
			rs, err := typ.Base().RowSize(ne0)
			if err != nil {
				t.Fatal(err)
			}
			base := make([]byte, int(rs)*typ.Interleave()*2)
			for i := range base {
				base[i] = byte(rng.Uint32())
			}
			group := make([]byte, len(base))
			if err := formats.Interleave(typ, ne0, group, base); err != nil {
				t.Fatal(err)
			}
			back := make([]byte, len(base))
			if err := formats.Deinterleave(typ, ne0, back, group); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, base) {
				t.Fatal("deinterleave(interleave(x)) != x")
			}
		})
	}
}

// TestIQGridTables checks the quantizer's level-index grids against the
// dequantizer's value grids: entry k of both must describe the same point,
// with the levels mapped to the values in increasing order.
func TestIQGridTables(t *testing.T) {
	type grid struct {
		name   string
		n      int
		dim    int // values per entry
		bits   int // bits per level index
		index  func(k int) uint16
		value  func(k, i int) int
		levels []int
	}
	u64 := func(g []uint64) func(k, i int) int { return func(k, i int) int { return int(uint8(g[k] >> (8 * i))) } }
	u32 := func(g []uint32) func(k, i int) int { return func(k, i int) int { return int(uint8(g[k] >> (8 * i))) } }
	idx := func(g []uint16) func(k int) uint16 { return func(k int) uint16 { return g[k] } }
	grids := []grid{
		{"iq2_xxs", 256, 8, 2, idx(tables.KGrid2Bit256[:]), u64(tables.IQ2XXSGrid[:]), []int{8, 25, 43}},
		{"iq2_xs", 512, 8, 2, idx(tables.KGrid2Bit512[:]), u64(tables.IQ2XSGrid[:]), []int{8, 25, 43}},
		{"iq2_s", 1024, 8, 2, idx(tables.KGrid2Bit1024[:]), u64(tables.IQ2SGrid[:]), []int{8, 25, 43}},
		{"iq1_s", 2048, 8, 2, idx(tables.KGrid1Bit2048[:]), func(k, i int) int { return int(int8(tables.IQ1SGrid[k] >> (8 * i))) }, []int{-1, 0, 1}},
		{"iq3_xxs", 256, 4, 3, idx(tables.KGrid3Bit256[:]), u32(tables.IQ3XXSGrid[:]), []int{4, 12, 20, 28, 36, 44, 52, 62}},
		{"iq3_s", 512, 4, 3, idx(tables.KGrid3Bit512[:]), u32(tables.IQ3SGrid[:]), []int{1, 3, 5, 7, 9, 11, 13, 15}},
	}
	for _, g := range grids {
		for k := 0; k < g.n; k++ {
			for i := 0; i < g.dim; i++ {
				l := int(g.index(k)>>(g.bits*i)) & (1<<g.bits - 1)
				if l >= len(g.levels) || g.levels[l] != g.value(k, i) {
					t.Fatalf("%s entry %d value %d: level %d, value grid says %d", g.name, k, i, l, g.value(k, i))
				}
			}
		}
	}
	for s, v := range tables.ScrambledSign {
		if int(tables.ScrambledSign[s]) >= 128 {
			t.Fatalf("ScrambledSign[%d] = %d", s, v)
		}
	}
	seen := map[uint8]bool{}
	for _, v := range tables.ScrambledSign {
		seen[v] = true
	}
	if len(seen) != 128 {
		t.Fatalf("ScrambledSign is not a permutation: %d distinct values", len(seen))
	}
	for i, s := range tables.KSignsIQ2XS {
		if int(s)&127 != i || popcount(s)%2 != 0 {
			t.Fatalf("KSignsIQ2XS[%d] = %d: low 7 bits must be the index and the parity even", i, s)
		}
	}
}

func popcount(b uint8) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}
