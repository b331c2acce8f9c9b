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
