package quantize_test

import (
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// TestTinyImportanceNaN holds the descriptors' TinyImportanceNaN to the
// kernels: exactly the types marked write non-finite scales for rows whose
// importance weights are all zero or subnormal, and UniformWhereNotFinite
// makes every such row finite, leaving the others as the kernel wrote them.
func TestTinyImportanceNaN(t *testing.T) {
	const rows, cols = 8, 512
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32((i*37)%29-14) / 700
	}
	for _, w := range []float32{0, math.SmallestNonzeroFloat32} {
		im := make([]float32, cols)
		for i := range im {
			im[i] = w
		}
		for _, typ := range quantize.SupportedTypes() {
			if info, _ := typ.Info(); !info.Quantized {
				continue
			}
			n := rows - rows%typ.Interleave()
			out, err := quantize.QuantizeRows(typ, n, cols, x[:n*cols], im)
			if err != nil {
				continue // a type that cannot take these rows or this importance
			}
			deq := make([]float32, n*cols)
			if err := formats.DequantizeRows(typ, cols, out, deq); err != nil {
				t.Fatal(err)
			}
			nan := formats.FirstNonFinite(deq) >= 0
			if nan != quantize.TinyImportanceNaN(typ) && !(w != 0 && !nan) {
				t.Errorf("%s, importance %g: non-finite %v, descriptor says %v", typ, w, nan, quantize.TinyImportanceNaN(typ))
			}
			redone, finite, err := quantize.Options{}.UniformWhereNotFinite(out, typ, n, cols, x[:n*cols], make([]float32, typ.Interleave()*cols))
			if err != nil || !finite || (len(redone) > 0) != nan {
				t.Errorf("%s, importance %g: redone %v, finite %v, %v", typ, w, redone, finite, err)
			}
		}
	}
}
