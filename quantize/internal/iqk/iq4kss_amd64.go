//go:build amd64 && !purego

package iqk

import (
	"math"

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
	// bis holds NEAREST8's bisection probes after the first (thr[7]): with
	// the count so far c, thr[3+8c], thr[1+4c], then thr[2c].
	bis [3][8]float32
}

var iq4kssHalves = func() (h [2]*iq4kssHalfTables) {
	for s := range h {
		t := &iq4kssHalfTables{}
		for k, x := range nearestThresholds(grid4.half(s == 1)) {
			for l := range t.thr[k] {
				t.thr[k][l] = x
			}
		}
		for c := 0; c < 8; c++ {
			if c < 2 {
				t.bis[0][c] = t.thr[3+8*c][0]
			}
			if c < 4 {
				t.bis[1][c] = t.thr[1+4*c][0]
			}
			t.bis[2][c] = t.thr[2*c][0]
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
// out receives sqxP, sq2P, sqxM, sq2M. It returns false, leaving the trial
// to the portable code, when a move score is not finite.
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

// nearestThresholds returns, for a table of 16 grid points, the smallest
// float32 at which best's answer passes each boundary: best(x) is the number
// of thresholds at most x for every x below 2^31 (NaN passes none; from 2^31
// on, best answers 0, as the reference's truncation overflows). best is
// monotone there, since x-lo only grows and hi-x only shrinks with x, so
// each threshold is found by bisection over the float32 values between the
// two grid points, in the order of their bits. A vector lookup counts
// comparisons against these, which is best without its table.
func nearestThresholds(t *nearestTable) [15]float32 {
	var thr [15]float32
	for k := range thr {
		lo, hi := floatOrder(t.vals[k]), floatOrder(t.vals[k+1]) // best(lo) = k, best(hi) = k+1
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if t.best(orderFloat(mid)) > k {
				hi = mid
			} else {
				lo = mid
			}
		}
		thr[k] = orderFloat(hi)
	}
	return thr
}

// floatOrder maps a float32 (not NaN) to an integer in the same order;
// orderFloat is its inverse.
func floatOrder(x float32) int64 {
	b := math.Float32bits(x)
	if b>>31 != 0 {
		return -int64(b & 0x7fffffff)
	}
	return int64(b)
}

func orderFloat(o int64) float32 {
	if o < 0 {
		return math.Float32frombits(uint32(-o) | 0x80000000)
	}
	return math.Float32frombits(uint32(o))
}
