//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useWeightsAVX2 selects the assembly importance weights of blockWeights
// (the same float32 operations: fused x*x+sigma2, correctly rounded square
// root, rounded product); tests clear it to check the portable loop.
var useWeightsAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// qxTrialsAVX2 computes makeQxQuants' sums for 24 inverse scales at once,
// one per lane, over x[0..n) in order (n > 0): out[0] = sumlx, out[1] =
// suml2. Exact like the portable loop when every |iscale*x| is small (the
// exact product is rounded half-to-even, as kernel.NearestIntMul for
// |iscale*x| < 2^22).
//
//go:noescape
func qxTrialsAVX2(x, qw *float32, n int, iscale *[24]float32, nmax float32, out *[2][24]float32)
