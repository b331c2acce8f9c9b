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
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, rows of %d: the AVX2 interleave differs from the portable one", typ, ne0)
			}
		}
	}
}
