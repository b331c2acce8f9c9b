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

// prune16Layout is a codebook's AVX-512 pruned layout (groups of 8 only):
// a pairedLayout of prune16PairBytes per pair and prune16BoxBytes per block
// of boxes. A cluster that is empty or has more than prune16MaxPairs pairs
// has none (spans[4c+1] = 0): the search then reports failure and an
// exhaustive one runs.
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
	if cb.group != 8 || cb.spans == nil {
		return
	}
	cb.pruned16 = prune16Layout(pairedLayout(cb.values, 8, cb.inCluster, prune16MaxPairs))
}

// pairedLayout lays out clusters of codewords of g values (values, each
// cluster a multiple of 8 codewords) for the AVX-512 pruned searches, in
// pairs of runs of 8 (16 codewords): per cluster with at most maxPairs
// pairs, its codewords in k-d order with leaves of 16 (the last leaf, of 8,
// where the cluster has an odd number of runs, is then copied to fill its
// last pair, and spans[4c+3] = 1), each pair as 16*g bytes of int8
// (coordinate k of the candidate in lane i at 16*k+i) and its ids, and
// per block of 16 pairs their boxes in 64*g bytes of fp16 (for each
// coordinate k the smallest value of each pair at 64*k+2*pair, the
// largest at 64*k+32+2*pair; unused boxes of a last block repeat the last
// pair's). Cluster c has spans[4c+1] pairs from pair spans[4c] and its
// boxes from block spans[4c+2]; a cluster with no pairs or too many has
// spans[4c+1] = 0.
func pairedLayout(values []float32, g int, inCluster [][]int32, maxPairs int) (p struct {
	pairs []byte
	ids   []uint32
	boxes []byte
	spans []uint32
}) {
	orders := make([][]int32, len(inCluster))
	parallelFor(len(inCluster), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			pts := inCluster[c]
			if n := (len(pts)/8 + 1) / 2; n == 0 || n > maxPairs {
				continue
			}
			cws := append([]int32(nil), pts[:len(pts)/8*8]...)
			kdOrderLeaves(values, g, cws, 16)
			if len(cws)%16 != 0 {
				cws = append(cws, cws[len(cws)-8:]...)
			}
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
	pairBytes, boxBytes := 16*g, 64*g
	p.pairs = make([]byte, pairs*pairBytes)
	p.ids = make([]uint32, pairs*16)
	p.boxes = make([]byte, blocks*boxBytes)
	p.spans = make([]uint32, 4*len(inCluster))
	pair, block := 0, 0
	for c, cws := range orders {
		if cws == nil {
			continue
		}
		np := len(cws) / 16
		p.spans[4*c], p.spans[4*c+1], p.spans[4*c+2] = uint32(pair), uint32(np), uint32(block)
		if len(inCluster[c])/8%2 == 1 {
			p.spans[4*c+3] = 1
		}
		for j := 0; j < 16*((np+15)/16); j++ {
			pr := cws[16*min(j, np-1):][:16]
			box := p.boxes[(block+j/16)*boxBytes:][:boxBytes]
			for k := 0; k < g; k++ {
				lo, hi := values[int(pr[0])*g+k], values[int(pr[0])*g+k]
				for _, cw := range pr[1:] {
					v := values[int(cw)*g+k]
					lo, hi = min(lo, v), max(hi, v)
				}
				binary.LittleEndian.PutUint16(box[64*k+2*(j%16):], formats.FP32ToFP16(lo))
				binary.LittleEndian.PutUint16(box[64*k+32+2*(j%16):], formats.FP32ToFP16(hi))
			}
			if j >= np {
				continue
			}
			dst := p.pairs[(pair+j)*pairBytes:][:pairBytes]
			for lane, cw := range pr {
				for k := 0; k < g; k++ {
					v := values[int(cw)*g+k]
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
	return
}
