package repack

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestProgramsMatchFormats compiles every interleaver both ways for a few
// row lengths and checks the program against formats on random groups
// (beyond the checks compile makes itself), and that the compilable types
// are compiled: a program that silently stopped compiling would only show
// as a slowdown.
func TestProgramsMatchFormats(t *testing.T) {
	// Conversions that compute something rather than move bits, so they
	// stay on the formats converters: q8_KV keeps a per-row sum of the
	// quants, which de-interleaving recomputes; the _r4 forms of iq2_xxs,
	// iq2_xs and iq3_xxs store their signs through a lookup table.
	notCompilable := map[string]bool{
		"q8_KV_r8/undo": true,
		"iq2_xxs_r4":    true, "iq2_xxs_r4/undo": true,
		"iq2_xs_r4": true, "iq2_xs_r4/undo": true,
		"iq3_xxs_r4": true, "iq3_xxs_r4/undo": true,
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, base := range formats.RepackableTypes() {
		target, _ := formats.RepackTarget(base)
		if !formats.CanInterleave(target) {
			continue
		}
		for _, undo := range []bool{false, true} {
			name := target.String()
			if undo {
				name += "/undo"
			}
			t.Run(name, func(t *testing.T) {
				for _, ne0 := range []int{256, 1024, 2816} {
					if formats.Interleave(target, ne0, nil, nil) != nil {
						continue
					}
					bRow, _ := base.RowSize(int64(ne0))
					tRow, _ := target.RowSize(int64(ne0))
					k := target.Interleave()
					in, out := int(bRow)*k, int(tRow)*k
					f := func(dst, src []byte) error { return formats.Interleave(target, ne0, dst, src) }
					if undo {
						in, out = out, in
						f = func(dst, src []byte) error { return formats.Deinterleave(target, ne0, dst, src) }
					}
					p := compile(f, in, out, []int{target.TypeSize() * k, base.TypeSize()})
					if p == nil {
						if !notCompilable[name] {
							t.Errorf("ne0 %d: not compiled", ne0)
						}
						continue
					}
					if notCompilable[name] {
						t.Errorf("ne0 %d: compiled, though listed as not compilable", ne0)
					}
					src := make([]byte, 3*in)
					got, want := make([]byte, 3*out), make([]byte, 3*out)
					for range 3 {
						for i := range src {
							src[i] = byte(rng.Uint32())
						}
						if err := f(want, src); err != nil {
							t.Fatal(err)
						}
						g := &groupConverter{groupIn: in, groupOut: out, prog: p}
						if err := g.convert(got, src); err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("ne0 %d: program and formats differ", ne0)
						}
					}
				}
			})
		}
	}
}
