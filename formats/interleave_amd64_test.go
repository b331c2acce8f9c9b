//go:build amd64 && !purego

package formats

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The AVX2 interleave of the 8-row block types writes what the portable
// loops write, for every block count up to a few hundred, and touches
// nothing outside the group.
func TestInterleaveRows8AVX2MatchesPortable(t *testing.T) {
	if !useInterleaveAVX2 {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 8))
	for _, typ := range []Type{Q4_0_R8, Q8_0_R8, MXFP4_R8, Q8_KV_R8} {
		for _, ne0 := range []int{32, 64, 96, 256, 1024, 4096, 32 * 149} {
			bb, gb, err := groupSizes(typ, ne0)
			if err != nil {
				t.Fatal(err)
			}
			base := make([]byte, 2*bb)
			for i := range base {
				base[i] = byte(r.Uint32())
			}
			want := make([]byte, 2*gb+64)
			got := bytes.Clone(want)
			useInterleaveAVX2 = false
			err = Interleave(typ, ne0, want[:2*gb], base)
			useInterleaveAVX2 = true
			if err != nil {
				t.Fatal(err)
			}
			if err := Interleave(typ, ne0, got[:2*gb], base); err != nil {
				t.Fatal(err)
			}
			// The assembly must have taken the case, or the comparison
			// would hold the portable loops to themselves.
			rowBytes, nb, hdr, words := asmGeometry(typ, ne0)
			if !interleaveRows8SIMD(make([]byte, gb), make([]byte, bb), rowBytes, nb, hdr, words) {
				t.Fatalf("%s, rows of %d: the AVX2 interleave does not apply", typ, ne0)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, rows of %d: the AVX2 interleave differs from the portable one", typ, ne0)
			}
		}
	}
}

// asmGeometry is how Interleave calls interleaveRows8SIMD for one group of
// typ: row stride, blocks per row, header bytes, quant words per block.
func asmGeometry(typ Type, ne0 int) (rowBytes, nb, hdr, words int) {
	switch typ {
	case Q8_KV_R8:
		return 8 + ne0, ne0 / 32, 0, 8
	case Q4_0_R8:
		return ne0 / 32 * 18, ne0 / 32, 2, 4
	case Q8_0_R8:
		return ne0 / 32 * 34, ne0 / 32, 2, 8
	default: // MXFP4_R8
		return ne0 / 32 * 17, ne0 / 32, 1, 4
	}
}
