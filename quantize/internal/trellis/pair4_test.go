package trellis

import (
	"bytes"
	"testing"
)

// TestPairLayout checks the AVX-512 layout of the codebooks of groups of 4:
// pair p of a cluster holds its runs 2p and 2p+1 (the last run again where
// the cluster has an odd number), coordinate k of each at 32*k and 32*k+16,
// their indices at 128 and 160.
func TestPairLayout(t *testing.T) {
	run := laneRun(4)
	for name, book := range map[string]func() *codebook{"iq4_kt": iq4ktBook, "iq4_kt/alt": iq4ktBookAlt} {
		cb := book()
		p := cb.pairs()
		for c, l := range cb.lanes {
			nr := len(l) / run
			off, np := int(p.spans[2*c]), int(p.spans[2*c+1])
			if np != (nr+1)/2 {
				t.Fatalf("%s cluster %d: %d pairs for %d runs", name, c, np, nr)
			}
			for i := 0; i < np; i++ {
				pair := p.lanes[off+i*pairRunBytes:][:pairRunBytes]
				for half, r := range []int{2 * i, min(2*i+1, nr-1)} {
					src := l[r*run:][:run]
					for k := 0; k < 4; k++ {
						if !bytes.Equal(pair[32*k+16*half:][:16], src[16*k:][:16]) {
							t.Fatalf("%s cluster %d pair %d: coordinate %d of run %d differs", name, c, i, k, r)
						}
					}
					if !bytes.Equal(pair[128+32*half:][:32], src[64:96]) {
						t.Fatalf("%s cluster %d pair %d: indices of run %d differ", name, c, i, r)
					}
				}
			}
		}
	}
}
