package formats

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/internal/benchcpu"
)

func TestFP16RoundTripAllHalves(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := FP16ToFP32(h)
		if math.IsNaN(float64(f)) {
			if back := FP32ToFP16(f); back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x -> %#04x", h, back)
			}
			continue
		}
		if back := FP32ToFP16(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}

func TestFP16Rounding(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e10, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, {2.98023223876953125e-08, 0x0000},
		{2.98023259e-08, 0x0001}, {1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, {6.1035156e-05, 0x0400},
	} {
		if got := FP32ToFP16(tc.in); got != tc.want {
			t.Errorf("FP32ToFP16(%v) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81},
		{0x7f7fffff, 0x7f80}, {0x7fc00000, 0x7fc0}, {0x7f800001, 0x7fc0}, {0xff800000, 0xff80},
	} {
		if got := FP32ToBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if BF16ToFP32(0x3f80) != 1 {
		t.Error("BF16ToFP32(0x3f80) != 1")
	}
}

// fp16TestValues returns float32 bit patterns that exercise every rounding
// case of the half conversion: each half's exact value, the midpoints
// between neighbouring halves (ties) and the float32 values on either side
// of them, both signs, float32 subnormals, infinities, NaNs, and a spread of
// random patterns.
func fp16TestValues() []uint32 {
	var out []uint32
	for h := 0; h < 1<<15; h++ {
		lo := math.Float32bits(fp16ToFP32Slow(uint16(h)))
		out = append(out, lo)
		if h < 0x7c00 {
			hi := math.Float32bits(fp16ToFP32Slow(uint16(h + 1)))
			// The midpoint of two positive floats is the mean of their bit
			// patterns when both have the same exponent, and otherwise close
			// to it; take it exactly in float64.
			mid := math.Float32bits(float32((float64(math.Float32frombits(lo)) + float64(math.Float32frombits(hi))) / 2))
			out = append(out, mid-1, mid, mid+1, hi-1)
		}
	}
	out = append(out, 0x7f800000, 0x7f800001, 0x7fc00000, 0x7fffffff, 0x7f802000, 0x7fbfe000,
		0x00000001, 0x00400000, 0x007fffff, 0x00800000, 0x7f7fffff, 0x477fefff, 0x477ff000,
		0x477fffff, 0x47800000, 0x387fffff, 0x38800000, 0x33000000, 0x33000001, 0x32ffffff)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		out = append(out, r.Uint32()&0x7fffffff)
	}
	n := len(out)
	for _, b := range out[:n] {
		out = append(out, b|0x80000000)
	}
	return out
}

func TestFP32ToFP16FastMatchesSlow(t *testing.T) {
	for _, b := range fp16TestValues() {
		if got, want := FP32ToFP16(math.Float32frombits(b)), fp32ToFP16Slow(b); got != want {
			t.Fatalf("FP32ToFP16(%#08x) = %#04x, slow path %#04x", b, got, want)
		}
	}
}

// simdLevel is one setting of the assembly switches: the best the CPU
// offers, AVX2 without AVX-512, each with the variants for AMD and for
// Intel, or none.
type simdLevel struct {
	name                  string
	avx2f16c, x512, intel bool
}

// simdLevels lists the settings this CPU can run, best first, and a func
// that restores the switches.
func simdLevels() ([]simdLevel, func()) {
	a, z, i := useAVX2F16C, useAVX512, intelKernels
	var levels []simdLevel
	if a && z {
		levels = append(levels, simdLevel{"avx512", true, true, false}, simdLevel{"avx512-intel", true, true, true})
	}
	if a {
		levels = append(levels, simdLevel{"avx2", true, false, false}, simdLevel{"avx2-intel", true, false, true})
	}
	levels = append(levels, simdLevel{"portable", false, false, false})
	return levels, func() { useAVX2F16C, useAVX512, intelKernels = a, z, i }
}

func (l simdLevel) set() { useAVX2F16C, useAVX512, intelKernels = l.avx2f16c, l.x512, l.intel }

// TestFloatRows checks PutFP16Row and PutBF16Row at every assembly level
// the CPU offers and with the portable code against the one-value
// conversions, at lengths that leave every possible tail.
func TestFloatRows(t *testing.T) {
	levels, restore := simdLevels()
	defer restore()
	for _, l := range levels {
		l.set()
		t.Run(l.name, func(t *testing.T) { testFloatRows(t) })
	}
}

func testFloatRows(t *testing.T) {
	bits := fp16TestValues()
	src := make([]float32, len(bits))
	for i, b := range bits {
		src[i] = math.Float32frombits(b)
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	// A row with an infinity or NaN takes the portable path after the
	// assembly: the finite values alone, in one long row, hold the
	// assembly to every finite pattern.
	var finite []float32
	for _, v := range src {
		if math.Float32bits(v)&0x7f800000 != 0x7f800000 {
			finite = append(finite, v)
		}
	}
	for _, tc := range []struct {
		name string
		put  func(dst []byte, src []float32)
		one  func(float32) uint16
	}{
		{"PutFP16Row", PutFP16Row, FP32ToFP16},
		{"putFP16RowGeneric", putFP16RowGeneric, FP32ToFP16},
		{"PutBF16Row", PutBF16Row, FP32ToBF16},
		{"putBF16RowGeneric", putBF16RowGeneric, FP32ToBF16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 95, 96, 97, 127, 128, 160, len(src), -len(finite)} {
				x := src[len(src)-max(n, 0):]
				if n < 0 {
					x, n = finite, len(finite)
				}
				dst := make([]byte, 2*n+2)
				dst[2*n], dst[2*n+1] = 0xaa, 0x55
				tc.put(dst, x)
				for i, v := range x {
					if got, want := uint16(dst[2*i])|uint16(dst[2*i+1])<<8, tc.one(v); got != want {
						t.Fatalf("n=%d: value %d (%#08x) -> %#04x, want %#04x", n, i, math.Float32bits(v), got, want)
					}
				}
				if dst[2*n] != 0xaa || dst[2*n+1] != 0x55 {
					t.Fatalf("n=%d: wrote past the row", n)
				}
			}
		})
	}
}

// TestBF16FastMatchesBitRule checks FP32ToBF16 over many float32 patterns
// against the rule written out with explicit cases.
func TestBF16FastMatchesBitRule(t *testing.T) {
	for _, b := range fp16TestValues() {
		var want uint16
		switch {
		case b&0x7fffffff > 0x7f800000:
			want = uint16(b>>16) | 64
		default:
			want = uint16(b >> 16)
			if rem := b & 0xffff; rem > 0x8000 || rem == 0x8000 && want&1 == 1 {
				want++
			}
		}
		if got := FP32ToBF16(math.Float32frombits(b)); got != want {
			t.Fatalf("FP32ToBF16(%#08x) = %#04x, want %#04x", b, got, want)
		}
	}
}

func BenchmarkPutFP16Row(b *testing.B) {
	benchmarkFloatRowLevels(b, PutFP16Row)
}

func BenchmarkPutFP16RowGeneric(b *testing.B) {
	benchmarkFloatRow(b, 64*4096, putFP16RowGeneric)
}

func BenchmarkPutBF16Row(b *testing.B) {
	benchmarkFloatRowLevels(b, PutBF16Row)
}

func BenchmarkPutBF16RowGeneric(b *testing.B) {
	benchmarkFloatRow(b, 64*4096, putBF16RowGeneric)
}

// benchmarkFloatRowLevels runs benchmarkFloatRow at every assembly level
// the CPU offers, on one row of 4096 weights (input and output stay in L1,
// so the loop's own speed shows) and on 64 such rows (1.5 MiB moved per
// call, more than L2: bound by the caches' bandwidth).
func benchmarkFloatRowLevels(b *testing.B, put func([]byte, []float32)) {
	levels, restore := simdLevels()
	defer restore()
	for _, l := range levels {
		for _, n := range []int{4096, 64 * 4096} {
			b.Run(fmt.Sprintf("%s/%d", l.name, n), func(b *testing.B) {
				l.set()
				benchmarkFloatRow(b, n, put)
			})
		}
	}
}

// benchmarkFloatRow converts n normal weights (sigma 0.02), counting 2
// bytes per weight as the quantizer benchmarks do, and reports cpu-MB/s
// (against the CPU time of its locked thread) besides MB/s.
func benchmarkFloatRow(b *testing.B, n int, put func([]byte, []float32)) {
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	dst := make([]byte, 2*len(src))
	benchcpu.Loop(b, 2*len(src), func() error {
		put(dst, src)
		return nil
	})
}

func TestFirstNonFinite(t *testing.T) {
	x := make([]float32, 200)
	for i := range x {
		x[i] = float32(i) - 100
	}
	if got := FirstNonFinite(x); got != -1 {
		t.Fatalf("all finite: got %d", got)
	}
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		for _, at := range []int{0, 31, 32, 63, 100, 191, 192, 199} {
			y := append([]float32(nil), x...)
			y[at] = bad
			if at < 150 {
				y[150] = bad
			}
			if got := FirstNonFinite(y); got != at {
				t.Fatalf("%v at %d: got %d", bad, at, got)
			}
		}
	}
}

// TestPutRowFinite checks that PutFP16RowFinite and PutBF16RowFinite report
// an infinity or NaN anywhere in the row (in the SIMD part and in the tail),
// with the assembly and with the portable code, and convert as PutFP16Row
// and PutBF16Row do.
func TestPutRowFinite(t *testing.T) {
	levels, restore := simdLevels()
	defer restore()
	for _, tc := range []struct {
		name string
		put  func(dst []byte, src []float32) bool
		one  func(float32) uint16
	}{
		{"fp16", PutFP16RowFinite, FP32ToFP16},
		{"bf16", PutBF16RowFinite, FP32ToBF16},
	} {
		for _, l := range levels {
			l.set()
			use := l.name
			for _, n := range []int{0, 1, 31, 32, 33, 64, 96, 100, 160, 1024} {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(i) - 50.5
				}
				if n > 3 {
					src[3] = math.MaxFloat32
				}
				dst := make([]byte, 2*n)
				if !tc.put(dst, src) {
					t.Fatalf("%s %s n=%d: finite row reported as not finite", tc.name, use, n)
				}
				// Huge finite values whose sum overflows (the
				// assembly's check) are still finite.
				huge := make([]float32, n)
				for i := range huge {
					huge[i] = math.MaxFloat32 * float32(1-2*(i/40%2))
				}
				if !tc.put(dst, huge) {
					t.Fatalf("%s %s n=%d: huge finite row reported as not finite", tc.name, use, n)
				}
				for i, v := range huge {
					if got, want := uint16(dst[2*i])|uint16(dst[2*i+1])<<8, tc.one(v); got != want {
						t.Fatalf("%s %s n=%d: huge value %d -> %#04x, want %#04x", tc.name, use, n, i, got, want)
					}
				}
				for _, bad := range []uint32{0x7f800000, 0xff800000, 0x7fc00000, 0xffffffff, 0x7f800001} {
					for _, at := range []int{0, 17, n - 33, n - 1} {
						if at < 0 || at >= n {
							continue
						}
						x := append([]float32(nil), src...)
						x[at] = math.Float32frombits(bad)
						if tc.put(dst, x) {
							t.Fatalf("%s %s n=%d: %#08x at %d not reported", tc.name, use, n, bad, at)
						}
						for i, v := range x {
							if got, want := uint16(dst[2*i])|uint16(dst[2*i+1])<<8, tc.one(v); got != want {
								t.Fatalf("%s %s n=%d: value %d (%#08x) -> %#04x, want %#04x", tc.name, use, n, i, math.Float32bits(v), got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestMaxBits checks MaxBits, with the assembly and the portable code,
// against a plain loop on rows of every tail length with the largest
// pattern at every kind of place.
func TestMaxBits(t *testing.T) {
	simd := useAVX2F16C
	defer func() { useAVX2F16C = simd }()
	r := rand.New(rand.NewPCG(5, 6))
	for _, use := range []bool{simd, false} {
		useAVX2F16C = use
		for _, n := range []int{0, 1, 31, 32, 33, 64, 95, 96, 200} {
			for trial := range 20 {
				x := make([]float32, n)
				var want uint32
				for i := range x {
					b := r.Uint32() >> uint(r.IntN(32))
					if trial%2 == 0 {
						b &= 0x3fffffff
					}
					x[i] = math.Float32frombits(b)
					want = max(want, b)
				}
				if got := MaxBits(x); got != want {
					t.Fatalf("simd=%v n=%d: MaxBits = %#08x, want %#08x", use, n, got, want)
				}
			}
		}
	}
}

// TestBF16RowToFP32 widens every bfloat16 value, in rows of every tail
// length and at odd offsets, with the assembly and the portable code, and
// compares the bits with BF16ToFP32's (NaN payloads included).
func TestBF16RowToFP32(t *testing.T) {
	simd := useAVX2F16C
	defer func() { useAVX2F16C = simd }()
	all := make([]byte, 2<<16)
	for h := range 1 << 16 {
		all[2*h], all[2*h+1] = byte(h), byte(h>>8)
	}
	for _, use := range []bool{simd, false} {
		useAVX2F16C = use
		for _, span := range [][2]int{{0, 1 << 16}, {3, 3 + 17}, {5, 5 + 15}, {1, 1 + 33}, {0, 0}, {7, 8}} {
			src := all[2*span[0] : 2*span[1]]
			dst := make([]float32, span[1]-span[0]+1)
			dst[len(dst)-1] = 42
			BF16RowToFP32(dst, src)
			for i, v := range dst[:len(dst)-1] {
				h := uint16(span[0] + i)
				if math.Float32bits(v) != math.Float32bits(BF16ToFP32(h)) {
					t.Fatalf("simd=%v: %#04x widened to %#08x", use, h, math.Float32bits(v))
				}
			}
			if dst[len(dst)-1] != 42 {
				t.Fatalf("simd=%v: wrote past %d values", use, len(dst)-1)
			}
		}
	}
}

// TestBF16RowToFP32Magnitude widens rows of random bfloat16 values (every
// kind: NaNs, infinities, negatives, subnormals) of every tail length, with
// the assembly and the portable code, and checks the values against
// BF16RowToFP32's and the magnitude against a plain loop's, with the
// largest at every kind of place.
func TestBF16RowToFP32Magnitude(t *testing.T) {
	simd := useAVX2F16C
	defer func() { useAVX2F16C = simd }()
	r := rand.New(rand.NewPCG(7, 8))
	for _, use := range []bool{simd, false} {
		useAVX2F16C = use
		for _, n := range []int{0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 64, 100, 4096} {
			for trial := range 30 {
				src := make([]byte, 2*n)
				var want uint16
				for i := range n {
					h := uint16(r.Uint32() >> uint(16+r.IntN(16)))
					if trial%3 == 0 {
						h &= 0xbfff // no infinities or NaNs, either sign
					}
					if trial%5 == 1 && i == r.IntN(n) {
						h = 0xffff // a negative NaN, largest magnitude
					}
					src[2*i], src[2*i+1] = byte(h), byte(h>>8)
					want = max(want, h&0x7fff)
				}
				got := make([]float32, n+1)
				got[n] = 42
				m := BF16RowToFP32Magnitude(got, src)
				wantF := make([]float32, n)
				BF16RowToFP32(wantF, src)
				for i := range wantF {
					if math.Float32bits(got[i]) != math.Float32bits(wantF[i]) {
						t.Fatalf("simd=%v n=%d: value %d widened to %#08x, want %#08x", use, n, i, math.Float32bits(got[i]), math.Float32bits(wantF[i]))
					}
				}
				if got[n] != 42 {
					t.Fatalf("simd=%v n=%d: wrote past the values", use, n)
				}
				if m != want {
					t.Fatalf("simd=%v n=%d: magnitude %#04x, want %#04x", use, n, m, want)
				}
			}
		}
	}
}

// Every bfloat16 value converts to the half FP32ToFP16 makes of it widened,
// at every level (AVX-512, AVX2, Go) and tail length, and the magnitude is
// the largest of the values'.
func TestBF16RowToFP16Magnitude(t *testing.T) {
	simd, wide := useAVX2F16C, useAVX512
	defer func() { useAVX2F16C, useAVX512 = simd, wide }()
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	r := rand.New(rand.NewPCG(9, 10))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	src := make([]byte, 2*len(all))
	for i, h := range all {
		binary.LittleEndian.PutUint16(src[2*i:], h)
	}
	for _, level := range []struct {
		name       string
		simd, wide bool
	}{{"avx512", simd, wide}, {"avx2", simd, false}, {"go", false, false}} {
		useAVX2F16C, useAVX512 = level.simd, level.wide
		// The whole set in one call, then in short runs: every tail length
		// after the vector loop, from starts at odd values.
		runs := [][2]int{{0, len(all)}}
		for start, n := 0, 0; start < len(all); start += n {
			n = min(1+len(runs)%67, len(all)-start)
			runs = append(runs, [2]int{start, n})
		}
		for _, run := range runs {
			start, n := run[0], run[1]
			in := src[2*start : 2*(start+n)]
			got := make([]byte, 2*n+2)
			got[2*n], got[2*n+1] = 0x5a, 0xa5
			m := BF16RowToFP16Magnitude(got, in)
			var want uint16
			for i := range n {
				h := binary.LittleEndian.Uint16(in[2*i:])
				want = max(want, h&0x7fff)
				if g, w := binary.LittleEndian.Uint16(got[2*i:]), FP32ToFP16(BF16ToFP32(h)); g != w {
					t.Fatalf("%s: bf16 %#04x converted to %#04x, want %#04x", level.name, h, g, w)
				}
			}
			if got[2*n] != 0x5a || got[2*n+1] != 0xa5 {
				t.Fatalf("%s: %d values: wrote past them", level.name, n)
			}
			if m != want {
				t.Fatalf("%s: %d values: magnitude %#04x, want %#04x", level.name, n, m, want)
			}
		}
	}
}

func BenchmarkBF16RowToFP16Magnitude(b *testing.B) {
	src := make([]byte, 2*4096)
	dst := make([]byte, 2*4096)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		BF16RowToFP16Magnitude(dst, src)
	}
}

func BenchmarkBF16RowToFP32(b *testing.B) {
	src := make([]byte, 2*4096)
	dst := make([]float32, 4096)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		BF16RowToFP32(dst, src)
	}
}

// BenchmarkBF16RowToFP32Magnitude is BenchmarkBF16RowToFP32 with the
// magnitude found in the same pass, for the cost of the gate.
func BenchmarkBF16RowToFP32Magnitude(b *testing.B) {
	src := make([]byte, 2*4096)
	dst := make([]float32, 4096)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		BF16RowToFP32Magnitude(dst, src)
	}
}

// BF16MaxMagnitude at every level (AVX-512, AVX2, Go) equals the portable
// loop for every length around the vector loop's tails, with one large,
// infinite or NaN pattern at any place among small values, and over all
// 65536 patterns.
func TestBF16MaxMagnitude(t *testing.T) {
	simd, wide := useAVX2F16C, useAVX512
	defer func() { useAVX2F16C, useAVX512 = simd, wide }()
	var lengths []int
	for i := 0; i <= 130; i++ {
		lengths = append(lengths, i)
	}
	for _, m := range []int{4064, 4096, 4128, 8192} {
		lengths = append(lengths, m-31, m-1, m, m+1, m+31)
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, level := range []struct {
		name       string
		simd, wide bool
	}{{"avx512", simd, wide}, {"avx2", simd, false}, {"go", false, false}} {
		useAVX2F16C, useAVX512 = level.simd, level.wide
		for _, n := range lengths {
			src := make([]byte, 2*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint16(src[2*i:], FP32ToBF16(float32(r.NormFloat64()*0.02)))
			}
			if got, want := BF16MaxMagnitude(src), bf16MaxGo(src); got != want {
				t.Fatalf("%s n %d: %#x, want %#x", level.name, n, got, want)
			}
			for at := 0; at < n; at += max(1, n/67) {
				row := append([]byte(nil), src...)
				for _, h := range []uint16{0x7f7f, 0xff80, 0x7fc1} {
					binary.LittleEndian.PutUint16(row[2*at:], h)
					if got := BF16MaxMagnitude(row); got != h&0x7fff {
						t.Fatalf("%s n %d: %#x at %d gives %#x", level.name, n, h, at, got)
					}
				}
			}
		}
		all := make([]byte, 2<<16)
		for i := range 1 << 16 {
			binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
		}
		for _, n := range []int{0x7f80, 0x7f81, 0x8000, 0xff80, 1 << 16} {
			if got, want := BF16MaxMagnitude(all[:2*n]), bf16MaxGo(all[:2*n]); got != want {
				t.Fatalf("%s: the first %d patterns give %#x, want %#x", level.name, n, got, want)
			}
		}
	}
}
