package trellis

import (
	"encoding/binary"

	"github.com/gquant/gquant/formats"
)

// The pruned search finds the same codeword as the reference's scan of a
// cluster (searchBlock8AVX2) while computing the scores of only some of its
// candidates.
//
// The reference's winner is the candidate with the smallest score, ties
// going to the lower lane, then to the earlier run. When exactly one
// candidate has the smallest score, it wins whatever the order in which the
// candidates were scored, so the candidates may be reordered, and any
// candidate whose score certainly exceeds a score already seen can be
// skipped. When several candidates share the smallest score, the pruned
// search notices and scans the cluster the reference's way instead.
//
// The pruned layout stores each cluster's codewords reordered so that the
// eight candidates of a run lie close together (a k-d split of the cluster:
// see kdOrder), and for every run the box spanned by its candidates: the
// smallest and largest value of each coordinate. A run's lower bound is the
// score formula applied to the distance from the input to the box in each
// coordinate: with non-negative weights every float32 operation of the
// score (differences, squares, products, the sums in the same order) is
// monotonic in its operands, so the rounded bound is not above the rounded
// score of any candidate of the run. For each group the search
//
//  1. computes the bounds of all runs, eight runs per vector,
//  2. scores the run with the smallest bound (lbmin); its best score is U,
//  3. lists (without branches) and scores the runs whose bound is at most
//     T = lbmin + (U-lbmin)/5, each lane keeping its smallest score, the
//     position of the candidate that reached it, and whether another
//     candidate reached the same score,
//  4. lists and scores the same way the runs whose bound is above T and at
//     most the smallest score so far,
//  5. takes the smallest score if one lane holds it and no other candidate
//     of that lane reached it, and otherwise scans the whole cluster in the
//     reference's layout (ties are rare with real weights).
//
// A run left out scores above a score seen, which is at least the final
// smallest score, so none of its candidates can win or tie; T only decides
// how many runs are scored (this one about as few as scoring in order of
// bound would). On the benchmark's rows about 26, 14 and 10 % of the runs
// are scored (iq1_kt, iq2_kt, iq3_kt).
//
// Codewords are integers in [-126, 126], so the runs hold them as int8: a
// run of eight is one 64-byte cache line (runs is large, so Go allocates it
// on a page boundary), and a scored run (a random access into megabytes of
// codewords) costs one line from memory. The search fetches all the runs
// of a list before it scores them, so that their cache misses overlap.

// pruneMaxRuns bounds the runs of a cluster in the pruned layout (the
// search keeps their bounds and list on its stack).
const pruneMaxRuns = 1 << 10

// pruneRunBytes is the size of a run of eight codewords of 8 values in the
// pruned layout: coordinate k of the candidate in lane i as int8 at 8*k+i.
const pruneRunBytes = 64

// pruneBoxBytes is the size of the boxes of one block of eight runs: for
// each coordinate k, the smallest value of the eight runs as fp16 at 32*k
// and the largest at 32*k+16 (run r in lane r).
const pruneBoxBytes = 256

// pruneLayout is a codebook's pruned layout (groups of 8 only). Cluster c
// has spans[2c+1] runs, from run 8*spans[2c] of runs (pruneRunBytes each)
// and block spans[2c] of boxes; the codeword in lane i of run r is
// ids[8*r+i]. A cluster that is empty or has pruneMaxRuns runs or more has
// no runs (spans[2c+1] = 0): the pruned search then reports failure and the
// exhaustive block search runs. The last block of a cluster is filled up with
// copies of its last run: the search may score a copy, which only looks
// like a tie (and so takes the reference's scan) if that run holds the
// smallest score.
type pruneLayout struct {
	runs  []byte
	boxes []byte
	ids   []uint32
	spans []uint32
}

// prunedLayout returns cb's pruned layout, built on first use (only the
// assembly search uses it); it is empty for groups of 4.
func (cb *codebook) prunedLayout() *pruneLayout {
	cb.prunedOnce.Do(cb.buildPruned)
	return &cb.pruned
}

// buildPruned lays out every cluster of cb for the pruned search.
func (cb *codebook) buildPruned() {
	g := cb.group
	if g != 8 || cb.spans == nil {
		return
	}
	var p pruneLayout
	p.spans = make([]uint32, 2*len(cb.inCluster))
	nblocks := 0
	for _, pts := range cb.inCluster {
		if nr := len(pts) / 8; nr > 0 && nr < pruneMaxRuns {
			nblocks += (nr + 7) / 8
		}
	}
	if nblocks == 0 {
		return
	}
	p.runs = make([]byte, nblocks*8*pruneRunBytes)
	p.boxes = make([]byte, nblocks*pruneBoxBytes)
	p.ids = make([]uint32, nblocks*64)
	// One k-d order per cluster, computed in parallel (the codebook is
	// built once per process, but the largest has 256 clusters of 4352).
	orders := make([][]int32, len(cb.inCluster))
	parallelFor(len(cb.inCluster), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			pts := cb.inCluster[c]
			if nr := len(pts) / 8; nr == 0 || nr >= pruneMaxRuns {
				continue
			}
			cws := append([]int32(nil), pts...)
			kdOrder(cb.values, g, cws)
			orders[c] = cws
		}
	})
	block := 0
	for c, cws := range orders {
		if cws == nil {
			continue
		}
		nr := len(cws) / 8
		p.spans[2*c], p.spans[2*c+1] = uint32(block), uint32(nr)
		for len(cws)%64 != 0 {
			cws = append(cws, cws[8*(nr-1):8*nr]...)
		}
		for r := 0; r < len(cws)/8; r++ {
			at := 8*block + r
			dst := p.runs[at*pruneRunBytes:][:pruneRunBytes]
			box := p.boxes[(block+r/8)*pruneBoxBytes:][:pruneBoxBytes]
			for lane := 0; lane < 8; lane++ {
				cw := cws[8*r+lane]
				p.ids[8*at+lane] = uint32(cw)
				for k := 0; k < g; k++ {
					v := cb.values[int(cw)*g+k]
					if v != float32(int8(v)) {
						panic("trellis: codeword value is not a small integer")
					}
					dst[8*k+lane] = byte(int8(v))
				}
			}
			for k := 0; k < g; k++ {
				lo, hi := cb.values[int(cws[8*r])*g+k], cb.values[int(cws[8*r])*g+k]
				for lane := 1; lane < 8; lane++ {
					v := cb.values[int(cws[8*r+lane])*g+k]
					lo, hi = min(lo, v), max(hi, v)
				}
				binary.LittleEndian.PutUint16(box[32*k+2*(r%8):], formats.FP32ToFP16(lo))
				binary.LittleEndian.PutUint16(box[32*k+16+2*(r%8):], formats.FP32ToFP16(hi))
			}
		}
		block += (nr + 7) / 8
	}
	cb.pruned = p
}

// kdOrder reorders the codewords cws (a multiple of 8 of them) so that each
// run of eight is compact: it splits the set at the median of the
// coordinate with the widest range into two parts of whole runs, and each
// part again, down to single runs. Any order gives the same search results;
// a compact one gives tight boxes and so prunes more.
func kdOrder(values []float32, g int, cws []int32) { kdOrderLeaves(values, g, cws, 8) }

// kdOrderLeaves is kdOrder with leaves of leaf codewords (len(cws) a
// multiple of leaf).
func kdOrderLeaves(values []float32, g int, cws []int32, leaf int) {
	if len(cws) <= leaf {
		return
	}
	bk, width := 0, -1.0
	for k := 0; k < g; k++ {
		var s1, s2 float64
		for _, cw := range cws {
			v := float64(values[int(cw)*g+k])
			s1 += v
			s2 += v * v
		}
		if vr := s2 - s1*s1/float64(len(cws)); vr > width {
			bk, width = k, vr
		}
	}
	m := leaf * ((len(cws)/leaf + 1) / 2)
	selectBy(cws, m, func(cw int32) float32 { return values[int(cw)*g+bk] })
	kdOrderLeaves(values, g, cws[:m], leaf)
	kdOrderLeaves(values, g, cws[m:], leaf)
}

// selectBy reorders s so that its first m elements are those with the
// smallest key (ties by codeword), in no particular order.
func selectBy(s []int32, m int, key func(int32) float32) {
	less := func(a, b int32) bool {
		ka, kb := key(a), key(b)
		return ka < kb || ka == kb && a < b
	}
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		// Median of three as the pivot, then a Lomuto partition.
		mid := lo + (hi-lo)/2
		a, b, c := s[lo], s[mid], s[hi-1]
		pivot := b
		if less(a, b) == less(b, c) {
			pivot = b
		} else if less(b, a) == less(a, c) {
			pivot = a
		} else {
			pivot = c
		}
		i := lo
		for j := lo; j < hi; j++ {
			if less(s[j], pivot) {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		// s[lo:i] < pivot <= s[i:hi]; put the pivot at i.
		for j := i; j < hi; j++ {
			if s[j] == pivot {
				s[i], s[j] = s[j], s[i]
				break
			}
		}
		switch {
		case m == i || m == i+1:
			return
		case m < i:
			hi = i
		default:
			lo = i + 1
		}
	}
}
