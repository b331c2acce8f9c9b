package legacy

import (
	"errors"
	"math"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// TestKernelsCheckFinite puts an infinity or a NaN at places that each code
// path reads differently (first value, inside a SIMD block, the last value
// of a row and of the call) into the input of every kernel listed by
// ChecksFinite, with the assembly and with the portable code, and demands
// ErrNotFinite; finite input, up to the largest float32, must pass.
func TestKernelsCheckFinite(t *testing.T) {
	withPortable(t, testKernelsCheckFinite)
}

func testKernelsCheckFinite(t *testing.T) {
	const rows, cols = 16, 512
	kernels := Kernels(kernel.Options{})
	for typ := range checksFinite {
		f := kernels[typ]
		if f == nil {
			t.Fatalf("%s is listed as checking finiteness but has no kernel", typ)
		}
		rs, err := typ.RowSize(cols)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, rows*int(rs))
		src := make([]float32, rows*cols)
		for i := range src {
			src[i] = float32(i%97) - 48
		}
		src[5*cols+3] = math.MaxFloat32
		src[6*cols+7] = -math.MaxFloat32
		if err := f(dst, src, rows, cols, nil); err != nil {
			t.Fatalf("%s: finite input: %v", typ, err)
		}
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
			math.Float32frombits(0xffffffff), math.Float32frombits(0x7f800001)} {
			for _, at := range []int{0, 1, 37, cols - 1, 3*cols + 200, 9*cols + 31, rows*cols - 1} {
				x := append([]float32(nil), src...)
				x[at] = bad
				if err := f(dst, x, rows, cols, nil); !errors.Is(err, ErrNotFinite) {
					t.Errorf("%s: %v at %d: error %v, want ErrNotFinite", typ, bad, at, err)
				}
			}
		}
	}
}
