package iquant

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// TestFallbackBlocks builds, for each type with a fallback, a call of four
// rows in which rows 1 and 3 hold a block of 32 that the reference aborts on
// (for iq2_xxs: its only non-zero value has importance 0; for iq1_s: its
// importance is all 0) and checks that the kernel writes every row, reports
// exactly rows 1 and 3, writes the same bytes on every path and every call,
// and writes those rows as the same rows quantized with uniform importance
// on that block, which the reference does not abort on; rows 0 and 2 (zero
// on that block for iq1_s) get the bytes they get on their own.
func TestFallbackBlocks(t *testing.T) {
	const cols = 2 * qkK
	const bad = 32 * 9 // the block of 32 at columns 288..319
	for _, typ := range []formats.Type{formats.IQ2_XXS, formats.IQ1_S} {
		t.Run(typ.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(typ)))
			imatrix := makeImatrix(r, cols, false)
			src := make([]float32, 4*cols)
			stressrows.Normal(r, src, 0.02)
			for i := range src {
				src[i] = stressrows.ToBF16(src[i])
			}
			for row := 0; row < 4; row++ {
				b := src[row*cols+bad : row*cols+bad+32]
				switch {
				case typ == formats.IQ2_XXS && row%2 == 1:
					clear(b)
					b[8] = 0.036
				case typ == formats.IQ1_S && row%2 == 0:
					clear(b) // negligible: the reference writes it
				}
			}
			fixed := slices.Clone(imatrix)
			if typ == formats.IQ2_XXS {
				imatrix[bad+8] = 0
			} else {
				clear(imatrix[bad : bad+32])
			}
			for i := bad; i < bad+32; i++ {
				fixed[i] = 1
			}
			rs, _ := typ.RowSize(cols)
			quantize := func(src, w []float32) ([]byte, []int) {
				t.Helper()
				out := make([]byte, len(src)/cols*int(rs))
				err := Kernels(kernel.Options{})[typ](out, src, len(src)/cols, cols, w)
				var fb *FallbackError
				if errors.As(err, &fb) {
					if fb.Type != typ || !strings.Contains(fb.Reason, "uniform importance") {
						t.Errorf("fallback %+v", fb)
					}
					return out, fb.Rows
				}
				if err != nil {
					t.Fatal(err)
				}
				return out, nil
			}
			defer setAsm(true)
			var first []byte
			for _, asm := range asmLevels {
				setAsmLevel(asm)
				got, rows := quantize(src, imatrix)
				if !slices.Equal(rows, []int{1, 3}) {
					t.Fatalf("assembly level %d: fallback rows %v, want [1 3]", asm, rows)
				}
				if again, _ := quantize(src, imatrix); !bytes.Equal(again, got) {
					t.Errorf("assembly level %d: a second call wrote other bytes", asm)
				}
				if first != nil && !bytes.Equal(got, first) {
					t.Errorf("assembly level %d and the portable path differ", asm)
				}
				first = got
				for _, row := range []int{0, 1, 2, 3} {
					w := imatrix
					if row%2 == 1 {
						w = fixed
					}
					want, rows := quantize(src[row*cols:(row+1)*cols], w)
					if rows != nil {
						t.Fatalf("row %d alone: fallback rows %v", row, rows)
					}
					if !bytes.Equal(got[row*int(rs):(row+1)*int(rs)], want) {
						t.Errorf("assembly level %d: row %d is not the row quantized with uniform importance on the block", asm, row)
					}
				}
			}
		})
	}
}
