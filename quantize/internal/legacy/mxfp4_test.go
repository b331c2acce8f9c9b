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

// TestMXFP4MixedBlocks interleaves blocks that the assembly takes with
// blocks it leaves to Go (subnormal, huge and near-power-of-two maxima,
// zero blocks) and checks the row against the full scan.
func TestMXFP4MixedBlocks(t *testing.T) { withPortable(t, testMXFP4MixedBlocks) }

func testMXFP4MixedBlocks(t *testing.T) {
	const n = 1024
	rows := edgeRows(n)
	r := rand.New(rand.NewPCG(13, 14))
	var x []float32
	for ib := 0; ib < 400; ib++ {
		row := rows[r.IntN(len(rows))]
		k := r.IntN(n / qk)
		block := append([]float32(nil), row[k*qk:(k+1)*qk]...)
		if ib%7 == 3 {
			// amax just below a power of two: the logarithm rounds up.
			block[r.IntN(qk)] = math.Float32frombits(0x3f7fffff - uint32(r.IntN(4)))
		}
		x = append(x, block...)
	}
	got := make([]byte, len(x)/qk*blockMXFP4)
	want := make([]byte, len(got))
	if !quantizeMXFP4Blocks(got, x) {
		t.Fatal("finite blocks reported as not finite")
	}
	mxfp4Slow(want, x)
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("block %d byte %d differs: %#02x, want %#02x", i/blockMXFP4, i%blockMXFP4, got[i], want[i])
	}
}
