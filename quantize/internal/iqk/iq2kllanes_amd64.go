//go:build amd64 && !purego

package iqk

import (
	"math"

	"github.com/gquant/gquant/internal/cpu"
)

// useIQ2KLLanes selects the lane trials of iq2klBlockScale: eight trial
// inverse scales per vector, the iq3 grid indices by counting thresholds
// (see trials.go), the pair lookup and the neighbour scores lane by lane
// with the same float32 operations as iq2klSumsGo; tests clear it.
var useIQ2KLLanes = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// iq2klLaneTables is what iq2klLanesAVX2 reads: the thresholds of the plain
// iq3 grid, iq2klIndex as int32, per neighbour rank k the two coordinates of
// the k-th neighbour of every list, the pair grid's coordinates, and
// constants.
type iq2klLaneTables struct {
	th       [7][8]float32
	index    [64]int32
	nb1, nb2 [8][32]float32
	g1, g2   [32]float32
	maxf     [8]float32
	ones     [8]int32
}

var iq2klLanes = func() *iq2klLaneTables {
	t := &iq2klLaneTables{}
	copy(t.th[:], grid3.trials[0].th[:7])
	for i, e := range iq2klIndex {
		t.index[i] = int32(e)
	}
	for n, list := range &iq2klNeighbours {
		for k, g := range list {
			t.nb1[k][n], t.nb2[k][n] = iq2klGrid[g][0], iq2klGrid[g][1]
		}
	}
	for g := range iq2klGrid {
		t.g1[g], t.g2[g] = iq2klGrid[g][0], iq2klGrid[g][1]
	}
	for l := range t.maxf {
		t.maxf[l], t.ones[l] = math.MaxFloat32, -1
	}
	return t
}()

// iq2klLanesAVX2 computes iq2klSumsGo for the eight inverse scales ids (one
// per lane) over npairs > 0 pairs; out receives sumqx and sumq2. It returns
// false when an off-grid pair has no neighbour score below MaxFloat32 in
// some lane. Every |x*id| must be below trialLimit.
//
//go:noescape
func iq2klLanesAVX2(t *iq2klLaneTables, x, w *float32, npairs int, ids *[8]float32, out *[2][8]float32) bool

// iq2klLaneSums fills sums for the trial scales ids of block xb (an even
// number of at most 32 weights); false when the lanes do not apply.
func iq2klLaneSums(xb, weight []float32, ids *[2 * iq2klTrials]float32, amax float32, sums *[2][2 * iq2klTrials]float32) bool {
	if len(xb) < 2 || len(xb)%2 != 0 || len(xb) > 32 {
		return false
	}
	var maxID float32
	for _, id := range ids {
		maxID = max(maxID, abs32(id))
	}
	if !(float64(amax)*float64(maxID) < trialLimit/2) {
		return false
	}
	weight = weight[:len(xb)]
	var lanes [3][8]float32
	var out [3][2][8]float32
	for m, id := range ids {
		lanes[m/8][m%8] = id
	}
	for v := range lanes {
		if !iq2klLanesAVX2(iq2klLanes, &xb[0], &weight[0], len(xb)/2, &lanes[v], &out[v]) {
			return false
		}
	}
	for m := range ids {
		sums[0][m], sums[1][m] = out[m/8][0][m%8], out[m/8][1][m%8]
	}
	return true
}
