package trellis

// The filtered two-scale search (searchFiltered8x2AVX512, iq1_kt's trial
// searches) finds the reference's codeword at both scales while computing
// the reference's score for only a pair or two of each cluster. It reads the
// cluster once, from the AVX-512 pruned layout (int8, a third of the bytes
// of the pairLayout, and the layout the other searches of a row already
// keep in the caches), and estimates every candidate's score at both scales:
//
//	Σ w(q-x)² = Σ wq(q-2x) + Σ wx²
//
// The last sum is the same for every candidate, so the estimate is
// Σ (wq)(q+n) with n = -2x: the product wq is shared by the two scales, and
// each scale costs an addition and a fused multiply-add per coordinate.
//
// Error bound. Let S = Σ w(127+|x|)², computed per group and scale: it
// bounds every candidate's score and every partial sum of an estimate
// (|q| <= 126). With u = 2^-24, each estimate is within 11uS of its exact
// value (three roundings per term, eight in the sum), and the reference's
// float32 score within 7.1u of the exact score (four roundings per term,
// three additions deep). So a candidate that ties or beats the candidate of
// the smallest estimate in the reference's score has an estimate at most
// about 37uS above the smallest; the search scores every pair with an
// estimate within S*2^-16 (256uS) + 2^-120 (subnormal terms) of the
// smallest, and no other candidate can win or tie. Among the candidates it
// scores, the smallest score wins where one lane holds it once (as in the
// pruned search, whose k-d order the layout has); otherwise the group takes
// the reference's scan of the cluster. Where S reaches 2^100 (weights or
// inputs so large that an estimate could overflow) or a cluster has more
// than filterMaxPairs pairs, the search returns 3 and the pass that scores
// every codeword (searchBlock8x2AVX512) runs. TestFilterMargin checks each
// step of the bound against exact arithmetic over the whole range.

// filterMaxPairs bounds a cluster's pairs in the filtered search (its
// estimates are on the stack; filter512_amd64.s has the same constant).
const filterMaxPairs = 256
