package legacy

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
)

// The fast kernels are checked here against straightforward ports of the
// reference loops (one value at a time, no shortcuts) on inputs built to hit
// their edge cases: exact ties, scales at the ends of the float range,
// subnormal weights and zero blocks.

// mxfp4Slow is quantize_row_mxfp4_impl with the full 16-code scan for every
// weight.
func mxfp4Slow(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : (ib+1)*qk]
		y := dst[ib*blockMXFP4 : (ib+1)*blockMXFP4]
		clear(y)
		amax := absMax(xb)
		if amax == 0 {
			continue
		}
		e, _ := mxfp4Exponent(amax)
		d := e8m0Half(e)
		y[0] = e
		for j := 0; j < qk/2; j++ {
			y[1+j] = bestIndexMXFP4(d, xb[j]) | bestIndexMXFP4(d, xb[j+qk/2])<<4
		}
	}
}

// q8_0Slow is quantize_row_q8_0_ref.
func q8_0Slow(dst []byte, x []float32) {
	for ib := 0; ib < len(x)/qk; ib++ {
		xb := x[ib*qk : ib*qk+qk]
		y := dst[ib*blockQ8_0 : ib*blockQ8_0+blockQ8_0]
		d := absMax(xb) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(y, formats.FP32ToFP16(d))
		for j, v := range xb {
			y[2+j] = byte(int8(math.Round(float64(float32(v * id)))))
		}
	}
}

// q8KVSlow is the reference's AVX2 iqk_quantize_row_q8_KV, one value at a
// time.
func q8KVSlow(dst []byte, x []float32) {
	amax := absMax(x)
	if amax == 0 {
		clear(dst[:8+len(x)])
		return
	}
	d := amax / 127
	mul := 1 / d
	var isum int32
	for j, v := range x {
		l, b := cvtRoundSat(float32(mul * v))
		isum += l
		dst[8+j] = b
	}
	binary.LittleEndian.PutUint32(dst, math.Float32bits(d))
	binary.LittleEndian.PutUint32(dst[4:], uint32(isum))
}

// q8K32Slow is one 256-weight block of the reference's quantize_row_q8_K32
// (quants in row order; the r8 layout is applied by the caller).
func q8K32Slow(q []byte, x []float32) uint16 {
	amax := absMax(x)
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	for j, v := range x {
		_, q[j] = cvtRoundSat(float32(id * v))
	}
	return formats.FP32ToFP16(amax / 127)
}

// edgeRows returns rows of n weights: normal weights at several scales,
// blocks of exact mxfp4 ties (multiples of d/2 around each code and the
// float32 values next to them), tiny and subnormal blocks, huge values and
// zero blocks.
func edgeRows(n int) [][]float32 {
	r := rand.New(rand.NewPCG(7, 8))
	var rows [][]float32
	for _, sigma := range []float64{1e-39, 1e-30, 1e-6, 0.02, 1, 1e4, 1e30, 3e37} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(sigma * r.NormFloat64())
		}
		rows = append(rows, x)
	}
	ties := make([]float32, n)
	for ib := 0; ib < n/qk; ib++ {
		// amax 12*2^k+something gives d = 2^(k-... ); every other weight is a
		// multiple of a quarter of the block's d, nudged by -1, 0 or +1 ulp.
		k := ib%40 - 20
		scale := float32(math.Ldexp(1, k))
		xb := ties[ib*qk : (ib+1)*qk]
		xb[0] = 15 * scale
		for j := 1; j < qk; j++ {
			v := float32(r.IntN(64)) / 4 * scale
			b := math.Float32bits(v)
			switch r.IntN(3) {
			case 0:
				b--
			case 1:
				b++
			}
			if v == 0 {
				b = 0
			}
			v = math.Float32frombits(b)
			if r.IntN(2) == 0 {
				v = -v
			}
			xb[j] = v
		}
	}
	rows = append(rows, ties)
	// q8 rounding ties: with amax 127 the q8_0 scale is exactly 1, so
	// weights j+0.5 (and their neighbours) sit on or next to a tie.
	halves := make([]float32, n)
	for i := range halves {
		if i%qk == 0 {
			halves[i] = 127
			continue
		}
		v := float32(r.IntN(253)-126) + 0.5
		b := math.Float32bits(v) + uint32(r.IntN(3)) - 1
		halves[i] = math.Float32frombits(b)
	}
	rows = append(rows, halves)
	sub := make([]float32, n)
	for i := range sub {
		sub[i] = math.Float32frombits(uint32(r.IntN(1 << 23)))
		if i%3 == 0 {
			sub[i] = -sub[i]
		}
		if i%64 < 32 && i >= n/2 {
			sub[i] = 0
		}
	}
	rows = append(rows, sub)
	zero := make([]float32, n)
	zero[n-1] = math.MaxFloat32
	rows = append(rows, zero)
	return rows
}

// withPortable runs f with the assembly kernels (where the CPU has them) and
// again with the portable Go code.
func withPortable(t *testing.T, f func(t *testing.T)) {
	simd := useAVX2
	defer func() { useAVX2 = simd }()
	for _, use := range []bool{simd, false} {
		useAVX2 = use
		name := "portable"
		if use {
			name = "simd"
		}
		t.Run(name, f)
		if !use {
			break
		}
	}
}

func TestFastKernelsMatchSlow(t *testing.T) { withPortable(t, testFastKernelsMatchSlow) }

func TestQ8KR8MatchesSlow(t *testing.T) { withPortable(t, testQ8KR8MatchesSlow) }

func testFastKernelsMatchSlow(t *testing.T) {
	const n = 4096
	for ri, x := range edgeRows(n) {
		got := make([]byte, n*2)
		want := make([]byte, n*2)

		quantizeMXFP4Blocks(got, x)
		mxfp4Slow(want, x)
		if !bytes.Equal(got[:n/qk*blockMXFP4], want[:n/qk*blockMXFP4]) {
			t.Errorf("row %d: mxfp4 differs from the full scan", ri)
		}

		quantizeQ8_0Blocks(got, x)
		q8_0Slow(want, x)
		if !bytes.Equal(got[:n/qk*blockQ8_0], want[:n/qk*blockQ8_0]) {
			t.Errorf("row %d: q8_0 differs", ri)
		}

		quantizeQ8KVRow(got, x)
		q8KVSlow(want, x)
		if !bytes.Equal(got[:8+n], want[:8+n]) {
			t.Errorf("row %d: q8_KV differs", ri)
		}
	}
}

func testQ8KR8MatchesSlow(t *testing.T) {
	const n = 512
	rows := edgeRows(n)
	src := make([]float32, 0, 8*n)
	for k := 0; k < 8; k++ {
		src = append(src, rows[(k*5)%len(rows)]...)
	}
	got := make([]byte, 8*(2+256)*n/256)
	if err := quantizeQ8KR8(got, src, 8, n, nil); err != nil {
		t.Fatal(err)
	}
	for ibl := 0; ibl < n/256; ibl++ {
		y := got[ibl*(16+8*256):]
		for k := 0; k < 8; k++ {
			q := make([]byte, 256)
			d := q8K32Slow(q, src[k*n+ibl*256:k*n+ibl*256+256])
			if gd := binary.LittleEndian.Uint16(y[2*k:]); gd != d {
				t.Fatalf("block %d row %d: scale %#04x, want %#04x", ibl, k, gd, d)
			}
			for j := range q {
				if g := y[16+32*(j/4)+4*k+j%4]; g != q[j] {
					t.Fatalf("block %d row %d quant %d: %#02x, want %#02x", ibl, k, j, g, q[j])
				}
			}
		}
	}
}

// TestQ8KVR8SIMDMatchesPortable checks the direct interleaved q8_KV_r8
// kernel against the portable quantize-then-repack path, including an
// all-zero row.
func TestQ8KVR8SIMDMatchesPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	const n = 1024
	rows := edgeRows(n)
	src := make([]float32, 0, 8*n)
	for k := 0; k < 7; k++ {
		src = append(src, rows[(k*3)%len(rows)]...)
	}
	src = append(src, make([]float32, n)...)
	want := make([]byte, 8*(4+n))
	got := make([]byte, 8*(4+n))
	useAVX2 = false
	err := quantizeQ8KVR8(want, src, 8, n, nil)
	useAVX2 = true
	if err != nil {
		t.Fatal(err)
	}
	if err := quantizeQ8KVR8(got, src, 8, n, nil); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("byte %d differs: %#02x, want %#02x", i, got[i], want[i])
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// bf16R16Lags are the lags BenchmarkBF16R16Lags times, which
// TestBF16R16SIMDMatchesPortable checks.
var bf16R16Lags = []int{0, 4, 8, 16, 32, 64}

// TestBF16R16SIMDMatchesPortable checks the AVX-512 and AVX2 bf16_r16
// kernels against the portable code, at every lag between their two halves
// of rows (r16Lag blocks of 16 columns) that a CPU may use or that
// BenchmarkBF16R16Lags times, for widths below, at and above each, and the
// largest magnitude they return, with an infinity or a NaN in any one row.
func TestBF16R16SIMDMatchesPortable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	avx512, lag := useAVX512, r16Lag
	defer func() { useAVX2, useAVX512, r16Lag = true, avx512, lag }()
	for _, r16Lag = range bf16R16Lags {
		testBF16R16SIMD(t, avx512)
	}
}

func testBF16R16SIMD(t *testing.T, avx512 bool) {
	for _, n := range []int{16, 48, 64, 112, 128, 144, 1024, 1040} {
		rows := edgeRows(n)
		src := make([]float32, 0, 16*n)
		for k := 0; k < 16; k++ {
			src = append(src, rows[(k*7)%len(rows)]...)
		}
		want := make([]byte, 2*len(src))
		useAVX2 = false
		err := quantizeBF16R16(want, src, 16, n, nil)
		useAVX2 = true
		if err != nil {
			t.Fatal(err)
		}
		var wantMax uint32
		for _, v := range src {
			wantMax = max(wantMax, math.Float32bits(v)&0x7fff0000)
		}
		for _, use512 := range []bool{avx512, false} {
			useAVX512 = use512
			got := make([]byte, 2*len(src))
			m, ok := bf16R16Rows16SIMD(got, src, n, n)
			if !ok {
				t.Fatalf("n=%d avx512=%v lag=%d: not taken", n, use512, r16Lag)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("n=%d avx512=%v lag=%d: byte %d differs: %#02x, want %#02x", n, use512, r16Lag, i, got[i], want[i])
			}
			if m != wantMax {
				t.Errorf("n=%d avx512=%v: largest magnitude %#08x, want %#08x", n, use512, m, wantMax)
			}
			for _, bad := range []float32{float32(math.Inf(-1)), float32(math.NaN())} {
				x := append([]float32(nil), src...)
				x[(n%13)*n+n-1-n/3] = bad
				if m, _ := bf16R16Rows16SIMD(got, x, n, n); finiteBits(m) {
					t.Errorf("n=%d avx512=%v: %v not seen (%#08x)", n, use512, bad, m)
				}
			}
			if !avx512 {
				break
			}
		}
	}
}
