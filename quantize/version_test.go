package quantize

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestSwitchesCoverEveryType quantizes rows of every type with each switch
// off and on: where the bytes differ, Switches must name the switch for
// that type, or records of the bytes would match bytes of other options.
func TestSwitchesCoverEveryType(t *testing.T) {
	defer SetOptions(CurrentOptions())
	const ne0, rows = 256, 16
	src := make([]float32, ne0*rows)
	for i := range src {
		src[i] = float32(math.Sin(float64(i)*0.37)) * 0.02 * float32(1+i%7)
	}
	im := make([]float32, ne0)
	for i := range im {
		im[i] = 0.5 + float32(i%5)
	}
	for _, sw := range []struct {
		name string
		on   Options
	}{{"symmetric-q40", Options{SymmetricQ40: true}}, {"slow-iq2ks", Options{SlowIQ2KS: true}}} {
		for _, typ := range SupportedTypes() {
			if _, err := typ.RowSize(ne0); err != nil || rows%typ.Interleave() != 0 {
				continue
			}
			for _, imat := range [][]float32{nil, im} {
				SetOptions(Options{})
				off, err := QuantizeRows(typ, rows, ne0, src, imat)
				if err != nil {
					continue // needs importance data
				}
				SetOptions(sw.on)
				on, err := QuantizeRows(typ, rows, ne0, src, imat)
				if err != nil {
					t.Fatalf("%s with %s: %v", typ, sw.name, err)
				}
				listed := slices.Contains(sw.on.Switches(typ), sw.name)
				if changed := !bytes.Equal(off, on); changed && !listed {
					t.Errorf("%s changes the bytes of %s (importance %v) but Switches does not list it", sw.name, typ, imat != nil)
				}
			}
			if sw.on.Switches(typ) != nil && !slices.Contains([]formats.Type{formats.Q4_0, formats.IQ2_KS}, typ) {
				t.Errorf("Switches lists %v for %s", sw.on.Switches(typ), typ)
			}
		}
	}
	// And both switches must matter where they are listed.
	for _, c := range []struct {
		typ formats.Type
		o   Options
	}{{formats.Q4_0, Options{SymmetricQ40: true}}, {formats.IQ2_KS, Options{SlowIQ2KS: true}}} {
		SetOptions(Options{})
		off, _ := QuantizeRows(c.typ, rows, ne0, src, im)
		SetOptions(c.o)
		on, _ := QuantizeRows(c.typ, rows, ne0, src, im)
		if bytes.Equal(off, on) {
			t.Errorf("%s: %v does not change the bytes of the test rows", c.typ, c.o.Switches(c.typ))
		}
	}
}
