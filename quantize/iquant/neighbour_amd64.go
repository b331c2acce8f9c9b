//go:build amd64 && !purego

package iquant

import "github.com/gquant/gquant/internal/cpu"

// useNeighbourFMA selects the assembly neighbour search (scalar
// VFMADD231SS, a correctly rounded float32 FMA, so no tie check is needed).
// It is off with the purego tag, which tests the portable code.
var useNeighbourFMA = cpu.X86.HasFMA && cpu.X86.HasAVX2

// bestNeighbourFMA returns the position in cands (n entries) of the grid
// point with the smallest weighted squared distance, first on ties, or -1 if
// no sum is below math.MaxFloat32. Each candidate's sum runs over its dim
// coordinates in order, d2 = fma(wdiffs[j], diffs[j], d2) with j =
// coordinate*8 + level, levels holding dim levels per grid point.
//
//go:noescape
func bestNeighbourFMA(levels *uint8, dim int, cands *uint16, n int, diffs, wdiffs *[64]float32) int
