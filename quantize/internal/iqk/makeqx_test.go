package iqk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// TestMakeQxQuantsInfiniteScale: blocks of huge values can have an infinite
// scale. The reference's first inverse scale is then -nmax/-inf = 0, and
// its nearest_int of the NaN product 0*inf is 0; every level is 0, no sum of
// squares is positive and it returns the scale 0 (the superblock is then
// skipped). Both paths must do the same.
func TestMakeQxQuantsInfiniteScale(t *testing.T) {
	for _, asm := range assemblyModes() {
		restore := setAssembly(asm)
		x := make([]float32, 16)
		qw := make([]float32, 16)
		for i := range x {
			x[i], qw[i] = float32(i)-7.5, 1
		}
		x[5] = float32(math.Inf(-1))
		L := make([]int8, 16)
		d := makeQxQuants(8, x, L, qw)
		restore()
		if d != 0 {
			t.Errorf("asm level %d: scale %v, want 0", asm, d)
		}
		for i, l := range L {
			if l != 8 {
				t.Errorf("asm level %d: level %d is %d, want 8 (0 offset by nmax)", asm, i, int(l)-8)
			}
		}
	}
}

// TestQxTrialsRoundExactProduct checks that makeQxQuants' lane trials round
// the exact product iscale*x, as GCC's fused nearest_int(iscale*x[i]) in the
// reference does, on products whose float32 rounding is a tie k+1/2 that
// the exact product is not.
func TestQxTrialsRoundExactProduct(t *testing.T) {
	if !useWeightsAVX2 {
		t.Skip("no lane trials in this build")
	}
	r := rand.New(rand.NewPCG(5, 8))
	found := 0
	for found < 2000 {
		var iscales [24]float32
		x := float32(0)
		for l := range iscales {
			iscales[l] = float32(2 + r.Float64())
		}
		// x puts lane 0 on a float32 tie; the other lanes are random.
		k := float32(r.IntN(15) - 7)
		x = (k + 0.5) / iscales[0]
		if iscales[0]*x != k+0.5 || float64(iscales[0])*float64(x) == float64(k)+0.5 {
			continue
		}
		found++
		qw := float32(1)
		var sums [2][24]float32
		qxTrialsAVX2(&x, &qw, 1, &iscales, 8, &sums)
		for l, isc := range iscales {
			want := clamp(kernel.NearestIntMul(isc, x), -8, 7)
			if sums[1][l] != float32(want*want) || sums[0][l] != x*float32(want) {
				t.Fatalf("iscale %v x %v lane %d: sums %v %v, want level %d", isc, x, l, sums[0][l], sums[1][l], want)
			}
		}
	}
}
