package iquant

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// TestAsmMatchesPortable quantizes seeded random rows of every kind of
// rowKinds (the stress recipes and the edge cases) with every kernel of the
// package, plain and with an importance vector that has zero columns and zero
// blocks, with the portable Go and with each assembly level this CPU runs
// (AVX2, AVX-512), and requires the same bytes, and the same fallback rows,
// from all.
func TestAsmMatchesPortable(t *testing.T) {
	if !hasAsm {
		t.Skip("no assembly in this build or on this CPU")
	}
	defer setAsm(true)
	const cols = 512
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	types := slices.Sorted(func(yield func(formats.Type) bool) {
		for t := range Kernels(kernel.Options{}) {
			if !yield(t) {
				return
			}
		}
	})
	for seed := 0; seed < seeds; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0x1b))
		// One call per type and variant over every kind's row, padded to a
		// multiple of 8 rows for the interleaved types.
		var src []float32
		row := make([]float32, cols)
		for _, k := range rowKinds {
			stressrows.MakeRow(k, r, row)
			src = append(src, row...)
		}
		for len(src)/cols%8 != 0 {
			stressrows.MakeRow(rowKinds[r.IntN(16)], r, row)
			src = append(src, row...)
		}
		nrows := len(src) / cols
		imatrix := makeImatrix(r, cols, true)
		for _, typ := range types {
			rs, err := typ.RowSize(cols)
			if err != nil {
				t.Fatal(err)
			}
			info, _ := typ.Info()
			for _, w := range [][]float32{nil, imatrix} {
				if w == nil && info.NeedsImatrix {
					continue // the quantize package refuses these
				}
				name := fmt.Sprintf("seed %d %s imatrix %v", seed, typ, w != nil)
				var out [3][]byte
				var rows [3][]int
				for i, level := range asmLevels {
					setAsmLevel(level)
					out[i] = make([]byte, nrows*int(rs))
					err := Kernels(kernel.Options{})[typ](out[i], src, nrows, cols, w)
					var fb *FallbackError
					if errors.As(err, &fb) {
						rows[i], err = fb.Rows, nil
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				for _, level := range asmLevels[1:] {
					if !slices.Equal(rows[0], rows[level]) {
						t.Errorf("%s: fallback rows %v portable, %v assembly level %d", name, rows[0], rows[level], level)
					}
					if bytes.Equal(out[0], out[level]) {
						continue
					}
					for i := 0; i < nrows; i++ {
						a, b := out[0][i*int(rs):(i+1)*int(rs)], out[level][i*int(rs):(i+1)*int(rs)]
						if !bytes.Equal(a, b) {
							kind := "padding"
							if i < len(rowKinds) {
								kind = rowKinds[i].Name
							}
							t.Errorf("%s: row %d (%s, or its row group) differs between the portable and the assembly level %d", name, i, kind, level)
						}
					}
				}
			}
		}
	}
}
