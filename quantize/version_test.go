package quantize

import (
	"bytes"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestSwitchesCoverEveryType quantizes rows of every type with each switch
// off and on: where the bytes differ, Switches must name the switch for
// that type, or records of the bytes would match bytes of other options.
func TestSwitchesCoverEveryType(t *testing.T) {
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
				off, err := QuantizeRows(typ, rows, ne0, src, imat)
				if err != nil {
					continue // needs importance data
				}
				on, err := sw.on.QuantizeRows(typ, rows, ne0, src, imat)
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
		off, _ := QuantizeRows(c.typ, rows, ne0, src, im)
		on, _ := c.o.QuantizeRows(c.typ, rows, ne0, src, im)
		if bytes.Equal(off, on) {
			t.Errorf("%s: %v does not change the bytes of the test rows", c.typ, c.o.Switches(c.typ))
		}
	}
}

// TestOptionsConcurrent: callers with different options quantize at the
// same time and each gets its own options' bytes, as a call alone does
// (run with -race: no state is shared).
func TestOptionsConcurrent(t *testing.T) {
	const ne0, rows = 256, 8
	src := make([]float32, ne0*rows)
	for i := range src {
		src[i] = float32(math.Sin(float64(i)*0.37)) * 0.02 * float32(1+i%7)
	}
	im := make([]float32, ne0)
	for i := range im {
		im[i] = 0.5 + float32(i%5)
	}
	type call struct {
		o   Options
		typ formats.Type
	}
	var calls []call
	for _, o := range []Options{{}, {SymmetricQ40: true}, {SlowIQ2KS: true}, {SymmetricQ40: true, SlowIQ2KS: true}} {
		for _, typ := range []formats.Type{formats.Q4_0, formats.IQ2_KS, formats.Q4_K} {
			calls = append(calls, call{o, typ})
		}
	}
	want := make([][]byte, len(calls))
	for i, c := range calls {
		var err error
		if want[i], err = c.o.QuantizeRows(c.typ, rows, ne0, src, im); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Equal(want[0], want[3]) || bytes.Equal(want[1], want[7]) {
		t.Fatal("the switches change nothing on the test rows")
	}
	got := make([][][]byte, 4)
	var wg sync.WaitGroup
	for g := range got {
		got[g] = make([][]byte, len(calls))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range calls {
				i := (k + g*5) % len(calls) // each goroutine in another order
				got[g][i], _ = calls[i].o.QuantizeRows(calls[i].typ, rows, ne0, src, im)
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for i, c := range calls {
			if !bytes.Equal(got[g][i], want[i]) {
				t.Errorf("goroutine %d: %s with %+v differs from the call alone", g, c.typ, c.o)
			}
		}
	}
}
