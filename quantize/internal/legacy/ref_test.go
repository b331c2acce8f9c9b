package legacy

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPlainQuantizersTies runs the plain quantizers (the reference's
// quantize_row_*_ref, assembly where the CPU has it) and their Go loops on
// blocks built to tie: values drawn from a few magnitudes, both signs and
// both zeros, so that the largest magnitude, the smallest or the largest
// value occurs several times, with either sign or zero sign first. The
// reference takes the first occurrence; so must the assembly's search.
func TestPlainQuantizersTies(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly on this CPU or build")
	}
	negZero := float32(math.Copysign(0, -1))
	rng := rand.New(rand.NewPCG(7, 11))
	const blocks = 4096
	x := make([]float32, blocks*qk)
	for b := range blocks {
		// Each block draws from its own small set of values.
		var set []float32
		switch b % 4 {
		case 0: // zeros only
			set = []float32{0, negZero}
		case 1: // non-negative with zeros: the smallest value is a zero
			set = []float32{0, negZero, 0.25, 1.5}
		case 2: // non-positive with zeros: the largest value is a zero
			set = []float32{0, negZero, -0.25, -1.5}
		default: // a magnitude with both signs
			set = []float32{0.75, -0.75, 0.5, negZero, -3, 3}
		}
		for j := range qk {
			x[b*qk+j] = set[rng.IntN(len(set))]
		}
	}
	for _, tc := range []struct {
		name       string
		bs         int
		fast, inGo func(dst []byte, x []float32)
	}{
		{"q4_0", blockQ4_0, quantizeQ4_0Ref, quantizeQ4_0RefPortable},
		{"q4_1", blockQ4_1, quantizeQ4_1Ref, quantizeQ4_1RefPortable},
		{"q5_0", blockQ5_0, quantizeQ5_0Ref, quantizeQ5_0RefPortable},
		{"q5_1", blockQ5_1, quantizeQ5_1Ref, quantizeQ5_1RefPortable},
	} {
		got := make([]byte, blocks*tc.bs)
		want := make([]byte, blocks*tc.bs)
		tc.fast(got, x)
		tc.inGo(want, x)
		for b := range blocks {
			if g, w := got[b*tc.bs:(b+1)*tc.bs], want[b*tc.bs:(b+1)*tc.bs]; !bytes.Equal(g, w) {
				t.Errorf("%s block %d %v: assembly %x, Go %x", tc.name, b, x[b*qk:(b+1)*qk], g, w)
				break
			}
		}
	}
}
