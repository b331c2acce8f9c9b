package legacy

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ8KVRowsMatchSlow checks quantizeQ8KV over many rows (the kernel
// prefetches the next row) against q8KVSlow row
// by row, for row lengths around the kernel's 4096-value chunks, with the
// edge rows (zero, subnormal, tiny and huge scales, ties) mixed in.
func TestQ8KVRowsMatchSlow(t *testing.T) { withPortable(t, testQ8KVRowsMatchSlow) }

func testQ8KVRowsMatchSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, ne0 := range []int{32, 64, 96, 4064, 4096, 4128, 8192 + 32} {
		rows := edgeRows(ne0)
		for range 6 {
			x := make([]float32, ne0)
			sigma := math.Pow(10, float64(r.IntN(60)-40))
			for i := range x {
				x[i] = float32(sigma * r.NormFloat64())
			}
			rows = append(rows, x)
		}
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		var src []float32
		for _, x := range rows {
			src = append(src, x...)
		}
		rowSize := 8 + ne0
		got := make([]byte, len(rows)*rowSize)
		want := make([]byte, len(rows)*rowSize)
		if err := quantizeQ8KV(got, src, len(rows), ne0, nil); err != nil {
			t.Fatalf("ne0 %d: %v", ne0, err)
		}
		for i, x := range rows {
			q8KVSlow(want[i*rowSize:], x)
		}
		for i := range rows {
			if g, w := got[i*rowSize:(i+1)*rowSize], want[i*rowSize:(i+1)*rowSize]; !bytes.Equal(g, w) {
				t.Errorf("ne0 %d row %d: differs at byte %d", ne0, i, firstDiff(g, w))
			}
		}
	}
}

// TestQ8KVRowsNotFinite checks that an infinity or NaN in any row, first,
// middle or last, makes quantizeQ8KV report ErrNotFinite.
func TestQ8KVRowsNotFinite(t *testing.T) { withPortable(t, testQ8KVRowsNotFinite) }

func testQ8KVRowsNotFinite(t *testing.T) {
	const nrows, ne0 = 5, 256
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		for _, row := range []int{0, 2, nrows - 1} {
			src := make([]float32, nrows*ne0)
			for i := range src {
				src[i] = float32(i%17) - 8
			}
			src[row*ne0+ne0-1] = bad
			dst := make([]byte, nrows*(8+ne0))
			if err := quantizeQ8KV(dst, src, nrows, ne0, nil); !errors.Is(err, ErrNotFinite) {
				t.Errorf("%v in row %d: got %v, want ErrNotFinite", bad, row, err)
			}
		}
	}
}

// BenchmarkQ8KVKernel times the q8_KV kernels on 64 rows of 4096 values:
// "l1" (the row kernel), "pass2l1" (the general quantizeQ8SIMD) and
// "absmaxl1" work on one row (in L1) 64 times, "absmax" takes the maxima of
// all rows, "stream" is quantizeQ8KV.
func BenchmarkQ8KVKernel(b *testing.B) {
	const rows, ne0 = 64, 4096
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, rows*ne0)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	dst := make([]byte, rows*(8+ne0))
	amax, _ := absMaxSIMD(src[:ne0])
	mul := 127 / amax
	b.Run("l1", func(b *testing.B) {
		b.SetBytes(ne0 * 2 * rows)
		for b.Loop() {
			for k := 0; k < rows; k++ {
				quantizeQ8KVRowSIMD(dst[8:], src[:ne0], src[:ne0], mul)
			}
		}
	})
	b.Run("absmax", func(b *testing.B) {
		b.SetBytes(ne0 * 2 * rows)
		for b.Loop() {
			for k := 0; k < rows; k++ {
				absMaxSIMD(src[k*ne0 : (k+1)*ne0])
			}
		}
	})
	b.Run("pass2l1", func(b *testing.B) {
		b.SetBytes(ne0 * 2 * rows)
		for b.Loop() {
			for k := 0; k < rows; k++ {
				quantizeQ8SIMD(dst[8:], src[:ne0], mul)
			}
		}
	})
	b.Run("absmaxl1", func(b *testing.B) {
		b.SetBytes(ne0 * 2 * rows)
		for b.Loop() {
			for k := 0; k < rows; k++ {
				absMaxSIMD(src[:ne0])
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(ne0 * 2 * rows)
		for b.Loop() {
			quantizeQ8KV(dst, src, rows, ne0, nil)
		}
	})
}
