package legacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMXFP4ExponentFast compares the shortcut with the logarithm for every
// exponent, at mantissas next to the shortcut's limit, near 1 and 2, and at
// random ones.
func TestMXFP4ExponentFast(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var mantissas []uint32
	for m := uint32(0x7ff000); m <= 0x7fffff; m++ {
		mantissas = append(mantissas, m)
	}
	for m := uint32(0); m < 0x1000; m++ {
		mantissas = append(mantissas, m)
	}
	for range 4096 {
		mantissas = append(mantissas, r.Uint32()&0x7fffff)
	}
	fast := 0
	for field := uint32(0); field < 0xff; field++ {
		for _, m := range mantissas {
			amax := math.Float32frombits(field<<23 | m)
			if amax == 0 {
				continue
			}
			e, e32, ok := mxfp4ExponentFast(amax)
			if !ok {
				continue
			}
			fast++
			if we, we32 := mxfp4Exponent(amax); e != we || e32 != we32 {
				t.Fatalf("amax %#08x: fast exponent %d (%d), logarithm %d (%d)", math.Float32bits(amax), e, e32, we, we32)
			}
		}
	}
	if fast == 0 {
		t.Fatal("the shortcut never applied")
	}
}
