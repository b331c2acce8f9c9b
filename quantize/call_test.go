package quantize_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// TestQuantizeRowsInCall splits q2_K calls without importance data into
// pieces: with the call scanned first, the pieces' bytes are those of the
// whole call, including calls where a piece on its own would decide the
// ternary check otherwise (which a plain split gets wrong).
func TestQuantizeRowsInCall(t *testing.T) {
	const ne0, rows = 512, 24
	r := rand.New(rand.NewPCG(5, 6))
	ternary := func(x []float32, m float32) {
		for i := range x {
			x[i] = m*float32(r.IntN(3)-1) + float32(r.NormFloat64())*m*0.01
		}
	}
	normal := func(x []float32, s float32) {
		for i := range x {
			x[i] = float32(r.NormFloat64()) * s
		}
	}
	for _, tc := range []struct {
		name string
		fill func(x []float32)
	}{
		// Ternary, and the largest magnitude lies in the last rows: each
		// piece alone takes its own m.
		{"ternary", func(x []float32) {
			ternary(x, 0.02)
			x[len(x)-5] = 0.0213
		}},
		// Ternary rows, then normal ones that outweigh them: the first
		// pieces alone would be ternary, the call is not.
		{"mixed", func(x []float32) {
			ternary(x[:8*ne0], 0.02)
			normal(x[8*ne0:], 0.05)
		}},
		{"normal", func(x []float32) { normal(x, 0.02) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := make([]float32, rows*ne0)
			tc.fill(src)
			want, err := quantize.QuantizeRows(formats.Q2_K, rows, ne0, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := quantize.NewCallState(formats.Q2_K, false)
			for at := 0; at < rows; at += 5 {
				c.ScanMax(src[at*ne0 : min(at+5, rows)*ne0])
			}
			for at := 0; at < rows; at += 3 {
				c.ScanSums(src[at*ne0 : min(at+3, rows)*ne0])
			}
			if c.Matters() != (tc.name == "ternary") {
				t.Errorf("Matters() = %v", c.Matters())
			}
			rs := len(want) / rows
			var got, plain []byte
			for at := 0; at < rows; at += 8 {
				x := src[at*ne0 : (at+8)*ne0]
				dst := make([]byte, 8*rs)
				if _, err := (quantize.Options{}).QuantizeRowsInCall(dst, formats.Q2_K, 8, ne0, x, nil, c); err != nil {
					t.Fatal(err)
				}
				got = append(got, dst...)
				alone, err := quantize.QuantizeRows(formats.Q2_K, 8, ne0, x, nil)
				if err != nil {
					t.Fatal(err)
				}
				plain = append(plain, alone...)
			}
			if !bytes.Equal(got, want) {
				t.Error("the pieces differ from the whole call")
			}
			if bytes.Equal(plain, want) == (tc.name != "normal") {
				t.Errorf("pieces quantized alone equal the call: %v", bytes.Equal(plain, want))
			}
		})
	}
	if quantize.NewCallState(formats.Q2_K, true) != nil || quantize.NewCallState(formats.Q3_K, false) != nil {
		t.Error("a CallState for a type whose calls split freely")
	}
}
