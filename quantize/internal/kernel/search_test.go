package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The golden kernel tests (TestGoldenKernels in quantize/golden_test.go,
// TestGoldenStress in quantize/stress_test.go) are the real check of these
// searches; the cases here are small enough to verify by hand.

// search is the default Search: assembly where there is some (this
// package's tests turn it off with useAVX2).
var search Search

func TestNearestIntMul(t *testing.T) {
	for _, tc := range []struct {
		a, b float32
		want int
	}{
		{2, 1.25, 2},  // 2.5 ties to even
		{2, 1.75, 4},  // 3.5 ties to even
		{-3, 0.5, -2}, // -1.5 ties to even
		// From q2_K block 24 of the golden data: the exact product is
		// 7.49999987, which rounds to 7; rounding it to float32 first gives
		// 7.5 and then 8.
		{0x1.3b9dcep+10, 0x1.855556p-08, 7},
		// Outside the valid range the rounding trick wraps, as in the
		// reference: 6291456 + 12582912 = 1.125*2^24 keeps mantissa 2^20.
		{1 << 22, 1.5, 1<<20 - 1<<22},
	} {
		if got := NearestIntMul(tc.a, tc.b); got != tc.want {
			t.Errorf("NearestIntMul(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := NearestInt(float32(0x1.3b9dcep+10) * float32(0x1.855556p-08)); got != 8 {
		t.Errorf("NearestInt of the rounded product = %d, want 8", got)
	}
}

func TestSearchAllZero(t *testing.T) {
	x := make([]float32, 16)
	w := slices.Repeat([]float32{1}, 16)
	Li := slices.Repeat([]int8{7}, 16)
	Lu := slices.Repeat([]uint8{7}, 16)
	laux := make([]uint8, 16)
	if d := search.MakeQxQuants(32, x, Li, 1, nil); d != 0 || slices.Max(Li) != 0 {
		t.Errorf("MakeQxQuants(zeros) = %v, L %v", d, Li)
	}
	if d := search.MakeQ3Quants(4, x, Li, true); d != 0 || slices.Max(Li) != 0 {
		t.Errorf("MakeQ3Quants(zeros) = %v, L %v", d, Li)
	}
	if d, m := search.MakeQkx2Quants(15, x, w, Lu, laux, -1, 0.1, 20, false, RoundedProducts); d != 0 || m != 0 || slices.Max(Lu) != 0 {
		t.Errorf("MakeQkx2Quants(zeros) = %v, %v, L %v", d, m, Lu)
	}
	if d, m := search.MakeQkx3Quants(15, x, w, Lu, laux, -0.9, 0.05, 36, false, RoundedProducts); d != 0 || m != 0 || slices.Max(Lu) != 0 {
		t.Errorf("MakeQkx3Quants(zeros) = %v, %v, L %v", d, m, Lu)
	}
	if d := search.MakeQpQuants(63, x, Lu, w, FusedProducts); d != 0 || slices.Max(Lu) != 0 {
		t.Errorf("MakeQpQuants(zeros) = %v, L %v", d, Lu)
	}
}

// Values that lie exactly on a grid must come back exactly: the searches
// start from the max-based scale, which already reproduces them, and no trial
// can beat a zero error.
func TestSymmetricSearchExactGrid(t *testing.T) {
	// x = 0.5*l with l in [-4, 3]; the value of largest magnitude is -2, so
	// the first guess is iscale = -4/-2 = 2 and L = l + 4.
	levels := []int{-4, -2, 0, 2, 3, 1, -1, -3, 3, 3, -4, 0, 1, 2, -2, -1}
	x := make([]float32, len(levels))
	want := make([]int8, len(levels))
	for i, l := range levels {
		x[i] = 0.5 * float32(l)
		want[i] = int8(l + 4)
	}
	L := make([]int8, len(x))
	if d := search.MakeQxQuants(4, x, L, 1, nil); d != 0.5 || !slices.Equal(L, want) {
		t.Errorf("MakeQxQuants = %v, L %v; want 0.5, %v", d, L, want)
	}
	w := slices.Repeat([]float32{1}, len(x))
	if d := search.MakeQxQuants(4, x, L, 1, w); d != 0.5 || !slices.Equal(L, want) {
		t.Errorf("MakeQxQuants with weights = %v, L %v; want 0.5, %v", d, L, want)
	}
	if d := search.MakeQ3Quants(4, x, L, true); d != 0.5 || !slices.Equal(L, want) {
		t.Errorf("MakeQ3Quants = %v, L %v; want 0.5, %v", d, L, want)
	}
	if d := search.MakeQ3Quants(4, x, L, false); d != 0.5 || !slices.Equal(L, want) {
		t.Errorf("MakeQ3Quants without rmse = %v, L %v; want 0.5, %v", d, L, want)
	}
}

func TestAsymmetricSearchExactGrid(t *testing.T) {
	// x = 0.5*l - 1 with l in [0, 3]: scale 0.5, min offset 1.
	levels := []uint8{0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 2, 0, 3, 2, 0, 1}
	x := make([]float32, len(levels))
	for i, l := range levels {
		x[i] = 0.5*float32(l) - 1
	}
	w := slices.Repeat([]float32{1}, len(x))
	L := make([]uint8, len(x))
	laux := make([]uint8, len(x))
	for _, tc := range []struct {
		name string
		f    func() (float32, float32)
	}{
		{"MakeQkx2Quants", func() (float32, float32) {
			return search.MakeQkx2Quants(3, x, w, L, laux, -0.5, 0.1, 15, true, FusedProducts)
		}},
		{"MakeQkx2Quants/mse", func() (float32, float32) {
			return search.MakeQkx2Quants(3, x, w, L, laux, -0.5, 0.1, 15, false, RoundedProducts)
		}},
		{"MakeQkx3Quants", func() (float32, float32) {
			return search.MakeQkx3Quants(3, x, w, L, laux, -0.9, 0.05, 36, false, RoundedProducts)
		}},
		{"MakeQkx3Quants/x²", func() (float32, float32) {
			return search.MakeQkx3Quants(3, x, nil, L, laux, -0.9, 0.05, 36, false, RoundedProducts)
		}},
	} {
		clear(L)
		scale, theMin := tc.f()
		if scale != 0.5 || theMin != 1 || !slices.Equal(L, levels) {
			t.Errorf("%s = %v, %v, L %v; want 0.5, 1, %v", tc.name, scale, theMin, L, levels)
		}
	}
}

func TestMakeQpQuantsExactGrid(t *testing.T) {
	// x = 0.25*l with l in [0, 15] and 15 present: scale 0.25, L = l.
	levels := []uint8{15, 0, 3, 7, 8, 1, 15, 12, 4, 4, 9, 2, 11, 6, 5, 10}
	x := make([]float32, len(levels))
	for i, l := range levels {
		x[i] = 0.25 * float32(l)
	}
	w := slices.Repeat([]float32{1}, len(x))
	L := make([]uint8, len(x))
	if d := search.MakeQpQuants(15, x, L, w, FusedProducts); d != 0.25 || !slices.Equal(L, levels) {
		t.Errorf("MakeQpQuants = %v, L %v; want 0.25, %v", d, L, levels)
	}
}

func TestMakeQxQuantsIQKExactGrid(t *testing.T) {
	levels := []int{-8, -2, 0, 2, 7, 1, -1, -3, 5, 3, -4, 0, 1, 6, -5, -7}
	x := make([]float32, len(levels))
	want := make([]int8, len(levels))
	for i, l := range levels {
		x[i] = 0.125 * float32(l)
		want[i] = int8(l + 8)
	}
	w := slices.Repeat([]float32{1}, len(x))
	L := make([]int8, len(x))
	if d := search.MakeQxQuantsIQK(8, x, L, w); d != 0.125 || !slices.Equal(L, want) {
		t.Errorf("MakeQxQuantsIQK = %v, L %v; want 0.125, %v", d, L, want)
	}
}

// fma32 and NearestIntMul take shortcuts; they must agree with FMA32 and
// with the reference's rounding trick applied to the fused sum.
func TestFastPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 300000; i++ {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(24)-4)))
		c := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		if i%3 == 0 { // make the product and c cancel to hit midpoints
			c = -float32(float64(a) * float64(b))
		}
		if got, want := FMA32(a, b, c), FMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%v, %v, %v) = %v, FMA32 = %v", a, b, c, got, want)
		}
		if got, want := NearestIntMul(a, b), int(math.Float32bits(FMA32(a, b, 12582912))&0x007fffff)-0x00400000; got != want {
			t.Fatalf("NearestIntMul(%v, %v) = %d, want %d", a, b, got, want)
		}
	}
}

// The trial quantizers of the searches round through the float64 constant
// trick with the offset folded in; they must equal clamp(roundProd) + offset,
// ties included.
func TestTrialQuantizersAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + r.IntN(40)
		nmax := 1 + r.IntN(32)
		iscale := float32(r.NormFloat64() * float64(nmax))
		if iter%2 == 0 { // a power of two, so that x = (k + 0.5)/iscale is exact
			iscale = float32(math.Ldexp(1-2*float64(r.IntN(2)), r.IntN(8)-2))
		}
		x := make([]float32, n)
		xd := make([]float64, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if i%3 == 0 { // an exact tie l + 0.5 where iscale is a power of two
				x[i] = (float32(r.IntN(2*nmax)-nmax) + 0.5) / iscale
			}
			xd[i] = float64(x[i])
		}
		for _, offset := range []int{0, nmax, nmax + 1} {
			got := make([]uint8, n)
			quantizeOffset(got, xd, iscale, offset, 2*nmax-1)
			for i, v := range x {
				want := clampInt(roundProd(iscale, v)+offset, 0, 2*nmax-1)
				if int(got[i]) != want {
					t.Fatalf("quantizeOffset(%v*%v, offset %d) = %d, want %d", iscale, v, offset, got[i], want)
				}
			}
		}
		pos := Abs32(iscale)
		for i := range xd {
			xd[i] = math.Abs(xd[i])
		}
		got := make([]uint8, n)
		quantizeUpTo(got, xd, pos, nmax)
		for i, v := range xd {
			if want := clampInt(roundProd(pos, float32(v)), 0, nmax); int(got[i]) != want {
				t.Fatalf("quantizeUpTo(%v*%v) = %d, want %d", pos, v, got[i], want)
			}
		}
	}
}

func TestQxTrialNumerators(t *testing.T) {
	for nmax := 1; nmax <= 40; nmax++ {
		nums := qxTrialNumerators(nmax)
		for is := -9; is <= 9; is++ {
			if got, want := nums[0][is+9], FMA32(0.1, float32(is), float32(nmax)); got != want {
				t.Errorf("nmax %d is %d: numerator %v, want %v", nmax, is, got, want)
			}
			if got, want := nums[1][is+9], FMA32(0.1, float32(is), float32(nmax-1)); got != want {
				t.Errorf("nmax %d is %d: second numerator %v, want %v", nmax, is, got, want)
			}
		}
	}
}

// A block with a single non-zero value (row 26, block 90 of the s202 stress
// set, q4_0 with an imatrix): after the trials l = -7, and each step of the
// refinement towards l = -1 (where the scale equals x) is an exact tie,
// decided by the last bit of Σw·x·l. The reference rounds w*x on its own
// there (GCC hoists it above the branch); fused, the first step is refused
// and the search ends at l = -7. Expected values from the reference build.
func TestMakeQxQuantsRefineSingleValue(t *testing.T) {
	x := make([]float32, 32)
	x[19] = 0x1.aap-6
	w := slices.Repeat([]float32{0x1.955ef8p-4}, 32)
	want := slices.Repeat([]int8{8}, 32)
	want[19] = 7
	for _, portable := range []bool{false, true} {
		L := make([]int8, 32)
		var d float32
		if portable {
			withPortable(func() { d = search.MakeQxQuants(8, x, L, 1, w) })
		} else {
			d = search.MakeQxQuants(8, x, L, 1, w)
		}
		if d != -0x1.aa0092p-6 || !slices.Equal(L, want) {
			t.Errorf("portable %v: MakeQxQuants = %x, L %v; want -0x1.aa0092p-06, %v", portable, d, L, want)
		}
	}
}

// A block of ±0.03 (row "random signs ±0.03" of the special rows, block 13,
// q4_1 with the "spread" imatrix, weights as quantize_row_q4_1_impl makes
// them): both L in {0, 15} and L in {0, 14} fit it exactly, so the squared
// errors compared are rounding noise of Σw·x² and friends. The reference
// rounds (w*x)*x before adding it to Σw·x² (make_qkx3_quants is one shared
// out-of-line function there, whose first loop fuses nothing); fused, the
// trial with nmax-1 levels wins instead. Expected values from the reference
// build.
func TestMakeQkx3QuantsExactFit(t *testing.T) {
	w := []float32{
		0x1.469b2ep-06, 0x1.2f8aep-07, 0x1.24ed3p-04, 0x1.94e4d2p-03, 0x1.b61de6p-02, 0x1.54b4eep-06, 0x1.58f362p+00, 0x1.fe5306p-06,
		0, 0x1.6f51dap-05, 0x1.4515ap-02, 0x1.3881a8p-07, 0x1.0244p-03, 0x1.fd2abap-07, 0x1.02596cp-02, 0x1.39b92p+00,
		0x1.336cd4p-01, 0x1.177ebcp-01, 0x1.0f6d4ep-01, 0x1.623ed4p-03, 0x1.2ee1cp-07, 0x1.e3c84p-04, 0x1.4dd102p-04, 0x1.7054d6p-02,
		0x1.8102c4p-02, 0x1.05abf8p-06, 0x1.d5cf96p-08, 0x1.45e526p-04, 0x1.976aeap-05, 0x1.b11ebep-02, 0x1.0964a8p-03, 0x1.380be2p-07,
	}
	const signs = "-+++--+---+-+--+--++++-+-++--++-"
	x := make([]float32, 32)
	want := make([]uint8, 32)
	for i, s := range signs {
		x[i] = -0x1.eb851ep-06 // float32(-0.03)
		if s == '+' {
			x[i], want[i] = 0x1.eb851ep-06, 15
		}
	}
	for _, portable := range []bool{false, true} {
		L, laux := make([]uint8, 32), make([]uint8, 32)
		var d, m float32
		run := func() { d, m = search.MakeQkx3Quants(15, x, w, L, laux, -0.9, 0.05, 36, false, RoundedProducts) }
		if portable {
			withPortable(run)
		} else {
			run()
		}
		if d != 0x1.0624dcp-08 || m != 0x1.eb851ep-06 || !slices.Equal(L, want) {
			t.Errorf("portable %v: MakeQkx3Quants = %x, %x, L %v; want 0x1.0624dcp-08, 0x1.eb851ep-06, %v", portable, d, m, L, want)
		}
	}
}
