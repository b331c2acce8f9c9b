//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useSplitScanAVX2 selects the assembly pre-filter of splitSearch, which
// evaluates the four variants' float64 bounds in one 4-lane vector with the
// same operations as the portable loop; tests clear it.
var useSplitScanAVX2 = cpu.X86.HasAVX2

// splitScanAVX2 runs splitSearch's pre-filter for one i1 from split point
// (i2, i3) on and returns the first (i2, i3) at which some variant's bound
// is >= 0, with bit k of mask set for each such variant k, or mask 0 when
// none is left. c holds, as 4-lane rows, v0..v3, dx, dq, e2, r, a0, b0,
// xN, wN.
//
//go:noescape
func splitScanAVX2(sumx, sumw *float32, i1, i2, i3, n, minI3 int, c *[12][4]float64) (hitI2, hitI3, mask int)
