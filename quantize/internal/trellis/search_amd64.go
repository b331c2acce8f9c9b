//go:build amd64 && !purego

package trellis

import "github.com/gquant/gquant/internal/cpu"

// useAVX2 selects the assembly loops, which need AVX2, FMA, F16C and an
// operating system that saves the YMM registers.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// useBlockAVX512 selects, with useAVX2 and useBlockSearch, the AVX-512
// block searches (search512_amd64.s), which score two runs per 16-lane
// vector and give the same codewords: for groups of 4 (iq4_kt), and for
// groups of 8 where the clusters are small (iq1_kt; see searchBlock); off,
// the AVX2 block searches run. The tests turn it off to hold those to the
// same bytes.
var useBlockAVX512 = useAVX2 && cpu.X86.HasAVX512

// nearest8AVX2 runs the reference's search over nblock runs of eight
// codewords in lane layout (toLanes) and stores each lane's best score and
// the position of the codeword that reached it (-1 if none did).
//
//go:noescape
func nearest8AVX2(lanes *byte, nblock int, vx, w *[8]float32, best *[8]float32, index *[8]int32)

// nearest4AVX2 is nearest8AVX2 for groups of 4 (runs of 32 values).
//
//go:noescape
func nearest4AVX2(lanes *byte, nblock int, vx, w *[4]float32, best *[8]float32, index *[8]int32)

// scaleSumsAVX2 is the reference's find_best_scale loop: over four runs of
// eight lanes, qw = q*w, sums[0:8] += qw*x and sums[8:16] += qw*q, fused.
//
//go:noescape
func scaleSumsAVX2(q, x, w *[32]float32, sums *[16]float32)

// fitTrialsAVX2 is fitTrials over nblock > 0 blocks of 32 elements.
//
//go:noescape
func fitTrialsAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32)

// fitTrialsMulAddAVX2 is fitTrialsAVX2 with the products rounded before
// they are added (fitTrials without fused).
//
//go:noescape
func fitTrialsMulAddAVX2(wx, w, v, dls *float32, nblock int, out *[2 * fitLanes]float32)

// searchBlock4AVX2 is findBestMatch (inverse scale id) for the eight groups
// of 4 of a block in one call, over the codebook's flatLanes and spans. It
// returns nonzero, with idx incomplete, if a cluster is empty or a search
// finds no codeword. With sums not nil it then stores scaleSumsAVX2's sums
// for the chosen codewords (values: the codebook's values).
//
//go:noescape
func searchBlock4AVX2(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int

// searchBlock8AVX2 is searchBlock4AVX2 for the four groups of 8 of a block.
//
//go:noescape
func searchBlock8AVX2(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int

// searchPruned8AVX2 is searchBlock8AVX2 with the pruned search of each
// group's cluster (runs, boxes, ids, spans: the codebook's pruneLayout; see
// prune.go), falling back to the reference's scan over lanes and lspans
// (flatLanes and spans) where the smallest score is not unique. It returns
// nonzero, with idx incomplete, if a scaled input is beyond 2^60 in
// magnitude or NaN, a weight is negative, +Inf or NaN, a cluster has no
// pruned runs, or a search finds no codeword.
//
//go:noescape
func searchPruned8AVX2(runs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int

// pruneLeftPack is, for each mask of eight runs, the positions of its set
// bits in increasing order (then zeros): the pruned search's list pass
// gathers the listed runs' positions with it (VPERMD).
//
//lint:ignore U1000 used by the assembly only
var pruneLeftPack = func() (t [256][8]uint32) {
	for m := range t {
		n := 0
		for i := 0; i < 8; i++ {
			if m>>i&1 != 0 {
				t[m][n] = uint32(i)
				n++
			}
		}
	}
	return t
}()

// searchPruned8AVX512 is searchBlock8AVX512 with the pruned search of each
// group's cluster (pairs, boxes, ids, spans: the codebook's prune16Layout; see
// prune512.go), falling back to the reference's scan over lanes and lspans
// (its pairLayout) where the smallest score is not unique. It returns
// nonzero, with idx incomplete, if a scaled input is beyond 2^60 in
// magnitude or NaN, a weight is negative, +Inf or NaN, a cluster has no
// pruned pairs, or a search finds no score below +Inf.
//
//go:noescape
func searchPruned8AVX512(pairs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int

// searchBlock4AVX512 is searchBlock4AVX2 over a pairLayout (lanes, spans),
// two runs per vector. It also returns nonzero, with idx incomplete, if a
// scaled input is beyond 2^60 in magnitude or NaN, or a weight is negative,
// +Inf or NaN: scores are then never NaN, and the lanes of even and odd
// runs can be searched apart and merged.
//
//go:noescape
func searchBlock4AVX512(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int

// searchPruned4AVX512 is searchBlock4AVX512 with the pruned search of each
// group's cluster over the codebook's prune4Layout (see prune4.go). It
// returns nonzero, with idx incomplete, where searchPruned8AVX512 would, and
// where a group's smallest score is not reached exactly once.
//
//go:noescape
func searchPruned4AVX512(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int

// searchPruned4AVX2 is searchPruned4AVX512 with AVX2, over the same layout.
//
//go:noescape
func searchPruned4AVX2(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int

// searchBlock8AVX512 is searchBlock4AVX512 for the four groups of 8 of a
// block (searchBlock8AVX2 over a pairLayout).
//
//go:noescape
func searchBlock8AVX512(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int

// searchBlock8x2AVX512 is searchBlock8AVX512 at two inverse scales id1,
// id2 of the same sign (results in idx1, sums1 and idx2, sums2, neither
// sums nil) in one pass over the codewords. It returns 2, doing nothing,
// where a group falls in different clusters at the two scales, and 1, with
// the results incomplete, where searchBlock8AVX512 would fail at either.
//
//go:noescape
func searchBlock8x2AVX512(lanes *byte, spans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int

// searchFiltered8x2AVX512 is searchBlock8x2AVX512, the same results and
// return values, over the AVX-512 pruned layout (pairs, ids, spans of a
// prune16Layout): it estimates every candidate's score at both scales and
// computes the reference's score only for the pairs whose estimate is near
// the smallest (see filter.go), taking the reference's scan over lanes and
// lspans (a pairLayout) where the smallest score is not reached exactly
// once. It returns 3, with the results incomplete, where a group's bound on
// the scores reaches 2^100 or its cluster has no pruned pairs or more than
// filterMaxPairs: searchBlock8x2AVX512 then decides.
//
//go:noescape
func searchFiltered8x2AVX512(pairs *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int

// sumSquaresAVX2 is setWeights' Σx² over x[:n], n > 0, in index order,
// each product rounded before it is added.
//
//go:noescape
func sumSquaresAVX2(x *float32, n int) float32

// weightsBlockAVX2 is setWeights for one block of blockSize values with
// importance data: it stores the weights and returns the block's sums.
//
//go:noescape
func weightsBlockAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32)

// weightsBlockRoundedAVX2 is weightsBlockAVX2 for setWeights with roundSq:
// x*x rounded once, added to sigma2 and to the block's sum of squares.
//
//go:noescape
func weightsBlockRoundedAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32)
