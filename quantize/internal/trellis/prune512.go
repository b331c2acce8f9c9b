package trellis

import (
	"encoding/binary"

	"github.com/gquant/gquant/formats"
)

// The AVX-512 pruned search (searchPruned8AVX512) is prune.go's argument
// with a pair of runs, 16 candidates, as its unit: one 16-lane vector scores
// a pair, and one vector of bounds covers 16 pairs. Each cluster's codewords
// are put in k-d order with leaves of 16 (a pair is compact, so its box is
// tight) and stored as int8, a pair in two cache lines: a scored pair is a
// random access into megabytes of codewords, so the search is bound by
// those lines more than by the extra conversion per coordinate (fp16 pairs,
// four lines each, ran slower). A cluster of an odd number of runs repeats
// its last run to fill its last pair: a copy scores the same as the
// original in another lane, so it looks like a tie, and the search hands
// the group to the reference's scan, only where that codeword has the
// smallest score.

// prune16MaxPairs bounds the pairs of a cluster in the AVX-512 pruned
// layout (the search keeps their bounds and its list on its stack).
const prune16MaxPairs = 512

// prune16BoxBytes is the size of the boxes of a block of 16 pairs: for each
// coordinate k, the smallest value of each pair as fp16 at 64*k+2*pair and
// the largest at 64*k+32+2*pair.
const prune16BoxBytes = 512

// prune16PairBytes is the size of a pair in the AVX-512 pruned layout:
// coordinate k of the candidate in lane i as int8 at 16*k+i.
const prune16PairBytes = 128

// prune16Layout is a codebook's AVX-512 pruned layout (groups of 8 only).
// Cluster c has spans[4c+1] pairs (prune16PairBytes each) from pair
// spans[4c] of pairs, the codeword in lane i of pair j at ids[16*j+i],
// and their boxes from block spans[4c+2] of boxes; the last block's unused
// boxes repeat the last pair's. A cluster that is empty or has more than
// prune16MaxPairs pairs has none (spans[4c+1] = 0): the search then reports
// failure and an exhaustive one runs.
type prune16Layout struct {
	pairs []byte
	ids   []uint32
	boxes []byte
	spans []uint32
}

// pruned16Layout returns cb's AVX-512 pruned layout, built on first use.
func (cb *codebook) pruned16Layout() *prune16Layout {
	cb.pruned16Once.Do(cb.buildPruned16)
	return &cb.pruned16
}

// buildPruned16 lays out every cluster of cb for the AVX-512 pruned search.
func (cb *codebook) buildPruned16() {
	const g = 8
	if cb.group != g || cb.spans == nil {
		return
	}
	npairs := func(pts []int32) int {
		if n := (len(pts)/8 + 1) / 2; n <= prune16MaxPairs {
			return n
		}
		return 0
	}
	var p prune16Layout
	p.spans = make([]uint32, 4*len(cb.inCluster))
	orders := make([][]int32, len(cb.inCluster))
	parallelFor(len(cb.inCluster), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			pts := cb.inCluster[c]
			np := npairs(pts)
			if np == 0 {
				continue
			}
			cws := append([]int32(nil), pts[:len(pts)/8*8]...)
			if len(cws)%16 != 0 {
				cws = append(cws, cws[len(cws)-8:]...)
			}
			kdOrderLeaves(cb.values, g, cws, 16)
			orders[c] = cws
		}
	})
	pairs, blocks := 0, 0
	for _, cws := range orders {
		pairs += len(cws) / 16
		blocks += (len(cws)/16 + 15) / 16
	}
	if pairs == 0 {
		return
	}
	p.pairs = make([]byte, pairs*prune16PairBytes)
	p.ids = make([]uint32, pairs*16)
	p.boxes = make([]byte, blocks*prune16BoxBytes)
	pair, block := 0, 0
	for c, cws := range orders {
		if cws == nil {
			continue
		}
		np := len(cws) / 16
		p.spans[4*c], p.spans[4*c+1], p.spans[4*c+2] = uint32(pair), uint32(np), uint32(block)
		for j := 0; j < 16*((np+15)/16); j++ {
			src := min(j, np-1)
			pr := cws[16*src : 16*src+16]
			box := p.boxes[(block+j/16)*prune16BoxBytes:][:prune16BoxBytes]
			for k := 0; k < g; k++ {
				lo, hi := cb.values[int(pr[0])*g+k], cb.values[int(pr[0])*g+k]
				for _, cw := range pr[1:] {
					v := cb.values[int(cw)*g+k]
					lo, hi = min(lo, v), max(hi, v)
				}
				binary.LittleEndian.PutUint16(box[64*k+2*(j%16):], formats.FP32ToFP16(lo))
				binary.LittleEndian.PutUint16(box[64*k+32+2*(j%16):], formats.FP32ToFP16(hi))
			}
			if j >= np {
				continue
			}
			dst := p.pairs[(pair+j)*prune16PairBytes:][:prune16PairBytes]
			for lane, cw := range pr {
				for k := 0; k < g; k++ {
					v := cb.values[int(cw)*g+k]
					if v != float32(int8(v)) {
						panic("trellis: codeword value is not a small integer")
					}
					dst[16*k+lane] = byte(int8(v))
				}
				p.ids[16*(pair+j)+lane] = uint32(cw)
			}
		}
		pair += np
		block += (np + 15) / 16
	}
	cb.pruned16 = p
}
