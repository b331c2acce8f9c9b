//go:build amd64 && !purego

package kernel

import "github.com/gquant/gquant/internal/cpu"

// hasAVX2 reports whether the CPU runs the assembly trial loops.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX2 selects the assembly trial loops; this package's tests clear it
// to check the portable code on the same machine (others use Search.Portable).
var useAVX2 = hasAVX2

// useAVX512 selects the 512-bit trial loops (qxTrialSums512, and
// qkx3Trials16AVX512 where qkx3Wide) over their AVX2 forms where useAVX2
// holds.
var useAVX512 = hasAVX2 && cpu.X86.HasAVX512

// qkx3Wide selects qkx3Trials16AVX512 over qkx3Trials8AVX2 in
// MakeQkx3Quants. A trial that wins with a new min sends the call back to
// the trial after it, so a wide pass often computes lanes that are thrown
// away (on q2_K's benchmark rows 5.2 passes of sixteen per call where 37
// trials fill three). The wide pass was 3 % faster on the AMD EPYC (Zen 5)
// and the eight-trial one 3-4 % faster on the Intel Xeon (q2_K, q4_K,
// q5_K, medians of 5).
var qkx3Wide = useAVX512 && !cpu.X86.Intel

// qxTrialSumsAVX2 computes, for each of the 48 trial scales nums[k]/max
// (stored in scales), Σwx·l and Σ(w·l)·l over the n values with l =
// clamp(nearest(scale·x), lo, hi), each sum in index order with rounded
// products, one trial per SIMD lane. It returns the mask of the lanes that
// pass make_qx_quants' test against best: suml2 > 0 and
// float32(sumlx·sumlx) > float32(best·suml2).
//
//go:noescape
func qxTrialSumsAVX2(nums *[qxLanes]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[qxLanes]float32) uint64

// qxTrialSums512 is qxTrialSumsAVX2 with the 48 trials in three 512-bit
// registers: the same results, bit for bit.
//
//go:noescape
func qxTrialSums512(nums *[qxLanes]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[qxLanes]float32) uint64

// qxFirstAVX2 is the first two passes of MakeQxQuants with weights (see
// qxFirst); with squares it first stores w[i] = x[i]² (rounded).
//
//go:noescape
func qxFirstAVX2(x, w *float32, n int, nmax float32, squares bool, wx *float32, L *int8, out *qxFirst)

// qkx3Trials8AVX2 evaluates eight consecutive trials of MakeQkx3Quants, one
// per lane: iscale = nums[k]/den, l = min(nearest(iscale·xm), nmax) with
// xm = max(x - min, 0) (as setDiffs32), the sums
// Σw·l, Σw·l² and Σw·l·x (float64, in index order, exact products) and from
// them the fit and its error (see qkx3Lanes), with the same fused operations
// as the portable loop. nmax is at most 31. It returns the mask of the lanes
// with D > 0 and an error below bestMAD.
//
//go:noescape
func qkx3Trials8AVX2(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32

// qkx3Trials16AVX512 is qkx3Trials8AVX2 for sixteen consecutive trials, two
// sets of eight lanes in 512-bit registers: the same results, bit for bit.
// The mask has trial k in bit k.
//
//go:noescape
func qkx3Trials16AVX512(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32

// qkx2Trials16AVX2 evaluates sixteen consecutive trials of MakeQkx2Quants,
// one per lane: iscale = nums[k]/den, l = min(nearest(iscale·xm), nmax) with
// xm = max(x - min, 0) (float32, as setDiffs32), the float32 sums Σw·l, Σw·l²
// and Σw·l·x in index order, the fit from them and its error (see
// qkx2Lanes), with the same fused operations as the portable loop. It
// returns the mask of the lanes with D > 0 and an error below bestMAD.
//
//go:noescape
func qkx2Trials16AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32

// qkx2Trials8AVX2 is qkx2Trials16AVX2 for eight trials (lanes 0-7 of out).
//
//go:noescape
func qkx2Trials8AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32

// qkx2SumsAVX2 is the first pass of MakeQkx2Quants over n values (scalar,
// in index order): the smallest and largest value (v < min, v > max, as the
// portable loop), Σw and Σw·x (fused or with rounded products).
//
//go:noescape
func qkx2SumsAVX2(x, w *float32, n int, fused bool, out *qkx2Sums)

// qkx2FirstErrorAVX2 is the first quantization of MakeQkx2Quants: it stores
// L[i] = min(nearest(iscale·(x[i]-min)), nmax) and returns Σw·err(scale·L +
// min - x) in index order (err is |·| with useMAD, else the rounded square),
// fused as the portable loop. Every x[i] must be at least min.
//
//go:noescape
func qkx2FirstErrorAVX2(x, w *float32, n int, nmax, iscale, scale, min float32, useMAD bool, L *uint8) float32

// qkx3RefineScanAVX2 is the scan of one refinement step of MakeQkx3Quants:
// the first index j with the largest |g|, g = fma(-scale, L[j], x[j]) - min,
// among those where g > 0 and L[j] < nmax or g < 0 and L[j] > 0, or -1 when
// there is none. n is a multiple of 8.
//
//go:noescape
func qkx3RefineScanAVX2(x *float32, L *uint8, n int, negScale, min, nmax float32) int

// qxRefineScanAVX2 is the scan of one refinement step of MakeQxQuants: the
// first index j with the largest |g|, g = (scale·w[j])·fma(-scale, l, x[j])
// with l = L[j] - nmax, among those where g > 0 and l < nmax-1 or g < 0 and
// l > -nmax, or -1 when there is none. n is a multiple of 8.
//
//go:noescape
func qxRefineScanAVX2(x, w *float32, L *int8, n int, scale, negScale, nmax float32) int

// qpTrialsAVX2 computes the weighted squared errors of the eight trial
// scales of MakeQpQuants, one per lane: iscale = nums[k]/max, scale =
// 1/iscale, l = min(nmax, nearest_int(iscale·x)) (the reference's rounding
// of the fused product, valid for any product), Σ w·d·d with d = fma(-scale,
// l, x), in index order, the product (w·d)·d fused into the sum (fused) or
// rounded first.
//
//go:noescape
func qpTrialsAVX2(nums *[8]float32, max float32, x, w *float32, n int, nmax int32, mse *[8]float32, fused bool)

// qkx3SumsAVX2 is the first pass of MakeQkx3Quants over n values (scalar, in
// index order): wd and xd receive the weights and values as float64, out the
// smallest and largest value (v < min, v > max, as the portable loop) and
// Σw, Σw·x (each exact product added) and Σ(w·x)·x (fused, or with rounded
// products).
//
//go:noescape
func qkx3SumsAVX2(x, w *float32, n int, fused bool, wd, xd *[64]float64, out *qkx3Sums)

// qkx3FirstErrorAVX2 is the first quantization of MakeQkx3Quants (scalar,
// in index order): L[i] = min(nearest(iscale·(x[i]-min)), nmax) and the
// returned Σ w·d², d = fma(scale, L, min) - x in float64. Every x[i] must be
// at least min and finite.
//
//go:noescape
func qkx3FirstErrorAVX2(x *float32, wd *float64, n int, iscale, min, scale, nmax float32, L *uint8) float64

// q3QuantsAVX2 is MakeQ3Quants with doRMSE for n >= 1 (see the assembly);
// zero reports a largest magnitude below eps, where nothing was written.
//
//go:noescape
func q3QuantsAVX2(x *float32, n int, nmax int, eps float32, L *int8) (scale float32, zero bool)

// qkx2QuantsAVX2 stores the quants of one trial of MakeQkx2Quants (or
// MakeQkx3Quants), L[i] =
// clamp(nearest(iscale·max(x[i]-min, 0)), 0, nmax), for n a multiple of 8.
//
//go:noescape
func qkx2QuantsAVX2(x *float32, n int, iscale, min, nmax float32, L *uint8)

// sigmaWeightsAVX2 is SigmaWeights for n a positive multiple of 8.
//
//go:noescape
func sigmaWeightsAVX2(w, x *float32, n int, c float32)

// imatrixWeightsAVX2 is ImatrixWeights for n a positive multiple of 8.
//
//go:noescape
func imatrixWeightsAVX2(w, x, qw *float32, n int, sigma2 float32)
