package iqk

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// TestGoldenAsmLevels runs the golden kernel and stress cases of this
// package's types at each assembly level between the portable Go and the
// highest level this CPU runs: the highest runs in the quantize package's
// TestGoldenKernels and TestGoldenStress, the portable Go there with -tags
// purego. On an AVX-512 machine this holds the AVX2 kernels, which other
// machines run, to the reference's bytes too.
func TestGoldenAsmLevels(t *testing.T) {
	levels := assemblyModes()
	if len(levels) < 3 {
		t.Skip("no assembly level below the highest here")
	}
	if testing.Short() {
		t.Skip("the golden sets take seconds per level")
	}
	levels = levels[1 : len(levels)-1]
	kernels := Kernels(kernel.Options{})
	for _, set := range append([]string{"kernels"}, golden.StressSets(t)...) {
		input, imatrix := golden.Input(t, set)
		for _, c := range golden.Manifest(t, set) {
			typ, err := formats.ParseType(c.Type)
			if err != nil || kernels[typ] == nil || c.File == "abort" {
				continue
			}
			want := golden.ReadFile(t, set, c.File)
			var w []float32
			if c.Imatrix {
				w = imatrix
			}
			for _, level := range levels {
				name := fmt.Sprintf("%s/%s level %d", set, c.Name(), level)
				got := make([]byte, len(want))
				restore := setAssembly(level)
				err := kernels[typ](got, input[:c.Rows*c.Cols], c.Rows, c.Cols, w)
				restore()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(got, want) {
					_, diff := golden.BlockShare(got, want, len(want)/c.Rows)
					t.Errorf("%s: differs from the reference (%s)", name, diff)
				}
			}
		}
	}
}
