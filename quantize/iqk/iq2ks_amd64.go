//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useIQ2KSAVX2 selects the assembly fit of the fast iq2_ks search; tests
// clear it to check the portable code on the same machine.
var useIQ2KSAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// iq2ksFitAVX2 computes the lane-reduced sums of one fit for d and -d.
//
//go:noescape
func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32)

// iq2ksErrorAVX2 is iq2ksBlockError's nearest indices and weighted error
// for one 32-weight block (the reference's compare-and-blend selection).
//
//go:noescape
func iq2ksErrorAVX2(x, w *float32, params *[8]float32, negD float32, idx *[32]int32) float32

// iq2ksFitsAVX2 runs iq2ksFitAVX2 for n > 0 parameter sets at params[0..n)
// into out[0..n) (pointers to the first of consecutive arrays).
//
//go:noescape
func iq2ksFitsAVX2(x, w *float32, params *[12]float32, n int, out *[4]float32)
