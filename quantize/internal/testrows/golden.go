package testrows

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// CheckGoldenLevels runs every golden kernel and stress case of the types
// in kernels at each assembly level between the portable Go and the
// highest of levels (all the levels this build and CPU run, portable
// first), which a family package selects with setLevel, and holds the bytes
// to the reference's; it leaves the highest level selected. The quantize
// package's golden tests run only the highest level this CPU has (and the
// portable Go with -tags purego); this holds the levels between, which
// other machines run. It skips without such a level, and in -short mode.
// accepted says which kernel errors still leave bytes to compare (a
// family's fallback substitutions); nil accepts none.
func CheckGoldenLevels(t *testing.T, kernels kernel.Set, levels []int, setLevel func(int), accepted func(error) bool) {
	t.Helper()
	if len(levels) < 3 {
		t.Skip("no assembly level below the highest here")
	}
	if testing.Short() {
		t.Skip("the golden sets take seconds per level")
	}
	defer setLevel(levels[len(levels)-1])
	levels = levels[1 : len(levels)-1]
	compared := 0
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
				setLevel(level)
				got := make([]byte, len(want))
				err := kernels[typ](got, input[:c.Rows*c.Cols], c.Rows, c.Cols, w)
				if err != nil && (accepted == nil || !accepted(err)) {
					t.Fatalf("%s: %v", name, err)
				}
				compared++
				if !bytes.Equal(got, want) {
					_, diff := golden.BlockShare(got, want, len(want)/c.Rows)
					t.Errorf("%s: differs from the reference (%s)", name, diff)
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no golden case of these kernels' types was compared")
	}
}
