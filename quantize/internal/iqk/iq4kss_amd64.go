//go:build amd64 && !purego

package iqk

import (
	"github.com/gquant/gquant/internal/cpu"
	"github.com/gquant/gquant/internal/tables"
)

// useIQ4KSSTrialFMA selects the assembly iq4_kss trial, which runs the
// portable trial's float32 operations (pruneExact's scores) with the
// hardware fused multiply-add and scores a group's moves in two vectors;
// tests clear it to check the portable code.
var useIQ4KSSTrialFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// iq4kssHalfTables is what the assembly trial needs for one grid half: the
// thresholds of its nearest-point lookup, its values, the plain values (the
// current error is always measured on them), and for each index its
// iq4kssNeighbours as values, a lane mask and indices.
type iq4kssHalfTables struct {
	thr     [15][8]float32 // nearestThresholds of the half's table, 8 copies each
	vals    [16]float32
	plain   [16]float32
	nbVals  [16][4]float32
	nbValid [16][4]int32
	nbIdx   [16][4]int32
}

var iq4kssHalves = func() (h [2]*iq4kssHalfTables) {
	for s := range h {
		t := &iq4kssHalfTables{}
		for k, x := range nearestThresholds(grid4.half(s == 1)) {
			for l := range t.thr[k] {
				t.thr[k][l] = x
			}
		}
		for i := 0; i < 16; i++ {
			t.vals[i] = float32(tables.IQ4KValues[16*s+i])
			t.plain[i] = float32(tables.IQ4KValues[i])
		}
		for q, list := range &iq4kssNeighbours {
			for k, iq := range list {
				if iq >= 0 {
					t.nbVals[q][k] = t.vals[iq]
					t.nbValid[q][k] = -1
				}
				t.nbIdx[q][k] = int32(iq)
			}
		}
		h[s] = t
	}
	return
}()

// iq4kssTrialFMA is iq4kssTrial for the eight groups of a block, gathered
// (iq4kssGather order) into xv and wv, on grid half h (whose thresholds
// stand for the half's nearest-point table), inverse scale id and scale dl;
// out receives sqxP, sq2P, sqxM, sq2M. It returns false, leaving the trial to the portable code, when a
// move score is not finite.
//
//go:noescape
func iq4kssTrialFMA(h *iq4kssHalfTables, xv, wv *[32]float32, id, dl float32, out *[4]float32) bool

// iq4kssTrialAsm runs iq4kssTrialFMA; ok is false when the portable code
// must run the trial.
func iq4kssTrialAsm(xv, wv *[32]float32, shifted bool, id, dl float32) (sqxP, sq2P, sqxM, sq2M float32, ok bool) {
	s := 0
	if shifted {
		s = 1
	}
	var out [4]float32
	if !iq4kssTrialFMA(iq4kssHalves[s], xv, wv, id, dl, &out) {
		return 0, 0, 0, 0, false
	}
	return out[0], out[1], out[2], out[3], true
}
