package trellis

// pairLayout holds each cluster's runs (in toLanes layout) two at a time
// for the AVX-512 block searches, which score two runs per 16-lane vector:
// a pair of runs r0, r1 of groups of g takes pairRun(g) bytes, coordinate k
// of r0's eight lanes as fp16 at 32*k and of r1's at 32*k+16, then r0's
// eight codeword indices (uint32) at 32*g and r1's at 32*g+32. Cluster c's pairs
// start at byte spans[2c] of lanes, spans[2c+1] of them. A cluster with an
// odd number of runs repeats its last run as the second of its last pair:
// the copy has the same scores in the same lanes as the run it repeats, one
// run later, so it never displaces it (later runs win only when strictly
// better).
type pairLayout struct {
	lanes []byte
	spans []uint32
}

// pairScanRuns is the mean cluster size, in runs, below which the AVX-512
// scan of a whole cluster beats the AVX2 pruned search for groups of 8:
// measured on iq1_kt (128 runs: the scan 1.2x faster than pruning) and
// iq2_kt, iq3_kt (256 runs: pruning faster). The AVX-512 pruned search
// (prune512.go) beats both; these decide where it is switched off or
// reports an input out of its range.
const pairScanRuns = 192

// pairRun is the size of a pair of runs of groups of g in pairLayout.
func pairRun(g int) int { return 2 * laneRun(g) }

// pairs returns cb's pairLayout, built on first use (only the AVX-512
// searches use it).
func (cb *codebook) pairs() *pairLayout {
	cb.pairOnce.Do(cb.buildPairs)
	return &cb.pair
}

// buildPairs lays out every cluster of cb for the AVX-512 searches (an
// empty cluster has no pairs: the AVX2 search handles it).
func (cb *codebook) buildPairs() {
	if cb.spans == nil {
		return
	}
	g := cb.group
	run, pr := laneRun(g), pairRun(g)
	total := 0
	for _, l := range cb.lanes {
		total += (len(l)/run + 1) / 2 * pr
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
			pair := make([]byte, pr)
			for k := 0; k < g; k++ {
				copy(pair[32*k:], r0[16*k:16*k+16])
				copy(pair[32*k+16:], r1[16*k:16*k+16])
			}
			copy(pair[32*g:], r0[16*g:])
			copy(pair[32*g+32:], r1[16*g:])
			p.lanes = append(p.lanes, pair...)
		}
	}
	cb.pair = p
}
