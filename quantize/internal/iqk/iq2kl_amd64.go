//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useIQ2KLSumsFMA selects the assembly block sums of iq2_kl, which run the
// same float32 operations as iq2klSumsGo with the hardware fused
// multiply-add and score the eight neighbours of an off-grid pair in one
// vector; tests clear it to check the portable code.
var useIQ2KLSumsFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// iq2klAsmTables lays out what the assembly needs per neighbour list: the
// two coordinates of its eight grid points as vectors and their indices,
// then the pair grid and iq2klIndex.
type iq2klAsmTables struct {
	nb1, nb2 [32][8]float32
	nbID     [32][8]int32
	grid     [32][2]float32
	index    [64]int8
}

var iq2klTables = func() *iq2klAsmTables {
	t := &iq2klAsmTables{grid: iq2klGrid, index: iq2klIndex}
	for n, list := range &iq2klNeighbours {
		for k, g := range list {
			t.nb1[n][k], t.nb2[n][k] = iq2klGrid[g][0], iq2klGrid[g][1]
			t.nbID[n][k] = int32(g)
		}
	}
	return t
}()

// iq2klSumsFMA is iq2klSumsGo over 0 < npairs <= 16 pairs on the
// grid3.plain table t; out receives sumqx, sumq2 and idx the pair grid
// point of each pair (iq2klBest). It returns false, leaving the sums to
// the portable code, when an off-grid pair has no neighbour score below
// MaxFloat32.
//
//go:noescape
func iq2klSumsFMA(t *nearestTable, tabs *iq2klAsmTables, x, w *float32, npairs int, id float32, out *[2]float32, idx *[16]int32) bool

// iq2klSumsAsm runs iq2klSumsFMA on a block of at most 32 weights, filling
// idx (if not nil) with the chosen pair grid points; ok is false when the
// portable code must do it.
func iq2klSumsAsm(xb, weight []float32, id float32, idx *[16]int32) (sumqx, sumq2 float32, ok bool) {
	if len(xb) < 2 || len(xb) > 32 {
		return 0, 0, false
	}
	weight = weight[:len(xb)]
	var out [2]float32
	var scratch [16]int32
	if idx == nil {
		idx = &scratch
	}
	if !iq2klSumsFMA(grid3.plain, iq2klTables, &xb[0], &weight[0], len(xb)/2, id, &out, idx) {
		return 0, 0, false
	}
	return out[0], out[1], true
}

// iq2klScoreFMA is the weighted squared error of npairs > 0 pairs at the
// pair grid points idx and scale dl, as quantizeIQ2KL's scale refinement
// sums it.
//
//go:noescape
func iq2klScoreFMA(tabs *iq2klAsmTables, x, w *float32, idx *[16]int32, npairs int, dl float32) float32

// iq2klScore runs iq2klScoreFMA on a block of 32 weights.
func iq2klScore(xb, weight []float32, idx *[16]int32, dl float32) float32 {
	return iq2klScoreFMA(iq2klTables, &xb[:32][0], &weight[:32][0], idx, 16, dl)
}
