//go:build amd64 && !purego

package iqk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// TestAssemblyMatchesPortableRows quantizes seeded random rows of every
// rowKind (the stress recipes and the edge cases), at random lengths and
// magnitudes, with every base type of the package, plain and with an
// importance vector that has zero and tiny blocks, at every assembly level
// this CPU runs and with the portable code, and requires the same bytes.
func TestAssemblyMatchesPortableRows(t *testing.T) {
	if len(assemblyModes()) < 2 {
		t.Skip("no AVX2+FMA")
	}
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	var types []formats.Type
	for typ := range Kernels(kernel.Options{}) {
		if typ.Interleave() == 1 { // the _r4 forms only interleave these
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	kernels := Kernels(kernel.Options{})
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 77))
		for _, k := range rowKinds {
			cols := 256 * (1 + r.IntN(4))
			row := make([]float32, cols)
			stressrows.MakeRow(k, r, row)
			if r.IntN(3) == 0 {
				scale := float32(math.Pow(10, 16*r.Float64()-8))
				for i := range row {
					row[i] *= scale
				}
			}
			imatrix := makeImatrix(r, cols)
			for _, typ := range types {
				rs, err := typ.RowSize(int64(cols))
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range [][]float32{nil, imatrix} {
					levels := assemblyModes()
					out := make([][]byte, len(levels))
					for i, level := range levels {
						out[i] = make([]byte, rs)
						restore := setAssembly(level)
						err := kernels[typ](out[i], row, 1, cols, w)
						restore()
						if err != nil {
							t.Fatalf("%s %s: %v", typ, k.Name, err)
						}
					}
					for i, level := range levels[1:] {
						if !bytes.Equal(out[0], out[1+i]) {
							t.Errorf("seed %d %s row %s (%d columns) imatrix %v: asm level %d and portable code differ", seed, typ, k.Name, cols, w != nil, level)
						}
					}
				}
			}
		}
	}
}
