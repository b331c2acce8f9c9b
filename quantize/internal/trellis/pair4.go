package trellis

// pairLayout holds, for groups of 4, each cluster's runs (in toLanes
// layout) two at a time for the AVX-512 block search, which scores two runs
// per 16-lane vector: a pair of runs r0, r1 takes 192 bytes, coordinate k
// of r0's eight lanes as fp16 at 32*k and of r1's at 32*k+16, then r0's
// eight codeword indices (uint32) at 128 and r1's at 160. Cluster c's pairs
// start at byte spans[2c] of lanes, spans[2c+1] of them. A cluster with an
// odd number of runs repeats its last run as the second of its last pair:
// the copy has the same scores in the same lanes as the run it repeats, one
// run later, so it never displaces it (later runs win only when strictly
// better).
type pairLayout struct {
	lanes []byte
	spans []uint32
}

// pairRunBytes is the size of a pair of runs in pairLayout.
const pairRunBytes = 192

// pairs returns cb's pairLayout, built on first use (only the AVX-512
// search uses it); it is empty for groups of 8.
func (cb *codebook) pairs() *pairLayout {
	cb.pairOnce.Do(cb.buildPairs)
	return &cb.pair
}

// buildPairs lays out every cluster of cb (groups of 4) for the AVX-512
// search.
func (cb *codebook) buildPairs() {
	if cb.group != 4 || cb.spans == nil {
		return
	}
	run := laneRun(4)
	total := 0
	for _, l := range cb.lanes {
		total += (len(l)/run + 1) / 2 * pairRunBytes
	}
	if total >= 1<<32 {
		panic("trellis: codebook pairs do not fit 32-bit offsets")
	}
	p := pairLayout{lanes: make([]byte, 0, total), spans: make([]uint32, 2*len(cb.lanes))}
	for c, l := range cb.lanes {
		nr := len(l) / run
		p.spans[2*c], p.spans[2*c+1] = uint32(len(p.lanes)), uint32((nr+1)/2)
		for r := 0; r < nr; r += 2 {
			r0, r1 := l[r*run:][:run], l[min(r+1, nr-1)*run:][:run]
			var pair [pairRunBytes]byte
			for k := 0; k < 4; k++ {
				copy(pair[32*k:], r0[16*k:16*k+16])
				copy(pair[32*k+16:], r1[16*k:16*k+16])
			}
			copy(pair[128:], r0[64:96])
			copy(pair[160:], r1[64:96])
			p.lanes = append(p.lanes, pair[:]...)
		}
	}
	cb.pair = p
}
