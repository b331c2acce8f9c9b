package trellis

// The pruned searches for groups of 4 (searchPruned4AVX512 and
// searchPruned4AVX2, iq4_kt) are prune512.go's argument for the clusters of
// groups of 4, which are small (35 pairs of 16 per group on
// BenchmarkQuantize's rows): the bounds of all pairs, the best score U of
// the pair with the smallest bound (its scores kept, not computed again),
// then every other pair whose bound is not above U, listed without
// branches and scored (5.7 pairs per group with U's, 16 %). The eight groups of a block take each step in
// turn, so that the cache misses of one step's fetches overlap. Its layout
// is prune16Layout's with 4 coordinates: a pair of 16 codewords is one
// 64-byte line of int8, a block of 16 pairs' boxes 256 bytes of fp16; the
// AVX2 search scores a pair as its two runs of 8. On the AMD EPYC they
// decide a block in about 0.55x (AVX-512) and 0.68x (AVX2) the time of the
// scans, and BenchmarkAsmLevels/iq4_kt runs the whole kernel 1.08-1.15x
// (AVX-512) and 1.26-1.35x (AVX2) faster: the scans' clusters are often
// still in the caches from the block's previous trial.

// prune4MaxPairs bounds the pairs of a cluster in the layout (the search
// keeps their bounds on its stack).
const prune4MaxPairs = 128

// prune4Layout is a codebook's pruned layout for groups of 4 (both
// searches): a pairedLayout of 64 bytes per pair and 256 per block of
// boxes. A cluster that is empty or has more than prune4MaxPairs pairs has
// none (spans[4c+1] = 0): the search then reports failure and the scan
// runs. Where spans[4c+3] = 1, lanes 8-15 of the cluster's last pair copy
// its last run of 8, and the searches set their scores to +Inf: a copy
// would look like a tie wherever its codeword wins.
type prune4Layout struct {
	pairs []byte
	ids   []uint32
	boxes []byte
	spans []uint32
}

// pruned4Layout returns cb's layout for the pruned searches of groups of 4,
// built on first use; its spans are nil for codebooks of groups of 8.
func (cb *codebook) pruned4Layout() *prune4Layout {
	cb.pruned4Once.Do(cb.buildPruned4)
	return &cb.pruned4
}

// buildPruned4 lays out every cluster of cb (groups of 4) for the pruned
// searches.
func (cb *codebook) buildPruned4() {
	if cb.group != 4 || cb.spans == nil {
		return
	}
	cb.pruned4 = prune4Layout(pairedLayout(cb.values, 4, cb.inCluster, prune4MaxPairs))
}
