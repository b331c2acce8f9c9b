package trellis

import (
	"bytes"
	"testing"
)

// TestPairLayout checks the AVX-512 layout of the codebooks: pair p of a
// cluster holds its runs 2p and 2p+1 (the last run again where the cluster
// has an odd number), coordinate k of each at 32*k and 32*k+16, their
// indices at 32*g and 32*g+32.
func TestPairLayout(t *testing.T) {
	for name, book := range map[string]func() *codebook{"iq1_kt": iq1ktBook, "iq4_kt": iq4ktBook, "iq4_kt/alt": iq4ktBookAlt} {
		cb := book()
		g := cb.group
		run, pr := laneRun(g), pairRun(g)
		p := cb.pairs()
		for c, l := range cb.lanes {
			nr := len(l) / run
			off, np := int(p.spans[2*c]), int(p.spans[2*c+1])
			if np != (nr+1)/2 {
				t.Fatalf("%s cluster %d: %d pairs for %d runs", name, c, np, nr)
			}
			for i := 0; i < np; i++ {
				pair := p.lanes[off+i*pr:][:pr]
				for half, r := range []int{2 * i, min(2*i+1, nr-1)} {
					src := l[r*run:][:run]
					for k := 0; k < g; k++ {
						if !bytes.Equal(pair[32*k+16*half:][:16], src[16*k:][:16]) {
							t.Fatalf("%s cluster %d pair %d: coordinate %d of run %d differs", name, c, i, k, r)
						}
					}
					if !bytes.Equal(pair[32*g+32*half:][:32], src[16*g:]) {
						t.Fatalf("%s cluster %d pair %d: indices of run %d differ", name, c, i, r)
					}
				}
			}
		}
	}
}
