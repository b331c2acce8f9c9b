package iquant

import (
	"math"

	"github.com/gquant/gquant/quantize/internal/kernel"
)

// The trial scales of quantizeIQ4NLImpl are evaluated all at once by an AVX2
// kernel that puts one trial per lane: 2*7+1 steps for each of the two edge
// levels give 30 trials, four vectors of eight (the last two lanes idle).
// Per weight it finds the level of id*x in every lane, then accumulates the
// two sums lane by lane in the weights' order, which is exactly the
// sequential sum of the scalar code for each trial.
const iq4Trials = 30

// iq4Thresholds[k] (k = 1..15) is the smallest float32 x with
// bestIndexIQ4NL(x) >= k. bestIndexIQ4NL is non-decreasing in x (its table
// steps up with int(x) and, inside a boundary cell, x-lo < hi-x only turns
// from true to false as x grows), so bestIndexIQ4NL(x) is the number of
// thresholds x reaches; TestIQ4ThresholdsMatchIndex checks it.
var iq4Thresholds [16]float32

// iq4Tab is the constant data of the AVX2 trial and descent kernels; the
// layout is fixed by iq4_amd64.s. The level of x is found by a binary search
// over the thresholds: bit 3 from t8, bit 2 from tab4[lvl>>1], bit 1 from
// tab2[lvl>>1], bit 0 from tab1[lvl>>1].
type iq4TrialTables struct {
	t8             [8]float32
	c8, c4, c2, c1 [8]int32
	tab4           [8]float32 // T4 at 0, T12 at 4
	tab2           [8]float32 // T2, T6, T10, T14 at 0, 2, 4, 6
	tab1           [8]float32 // T1, T3, ..., T15
	vlo, vhi       [8]float32 // level values 0..7 and 8..15
	uplo, uphi     [8]float32 // values[l+1]-values[l] (0 for l = 15)
	dnlo, dnhi     [8]float32 // values[l-1]-values[l] (0 for l = 0)
	inf            [8]float32
	c15            [8]int32
}

var iq4Tab iq4TrialTables

// floatOrderKey maps float32 to integers in the same order (-0 before +0).
func floatOrderKey(x float32) int64 {
	b := math.Float32bits(x)
	if b>>31 != 0 {
		return -int64(b&0x7fffffff) - 1
	}
	return int64(b)
}

func floatFromOrderKey(k int64) float32 {
	if k < 0 {
		return math.Float32frombits(uint32(-(k + 1)) | 1<<31)
	}
	return math.Float32frombits(uint32(k))
}

func buildIQ4Thresholds() (t [16]float32) {
	t[0] = float32(math.Inf(-1))
	for k := 1; k <= 15; k++ {
		lo, hi := floatOrderKey(-256), floatOrderKey(256) // f(lo) < k <= f(hi)
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if bestIndexIQ4NL(floatFromOrderKey(mid)) >= k {
				hi = mid
			} else {
				lo = mid
			}
		}
		t[k] = floatFromOrderKey(hi)
	}
	return t
}

func buildIQ4TrialTables(th *[16]float32) (t iq4TrialTables) {
	for i := range 8 {
		t.t8[i] = th[8]
		t.c8[i], t.c4[i], t.c2[i], t.c1[i] = 8, 4, 2, 1
		t.tab1[i] = th[2*i+1]
		t.vlo[i], t.vhi[i] = iq4ValuesF[i], iq4ValuesF[i+8]
		t.inf[i] = float32(math.Inf(1))
		t.c15[i] = 15
	}
	t.tab4[0], t.tab4[4] = th[4], th[12]
	t.tab2[0], t.tab2[2], t.tab2[4], t.tab2[6] = th[2], th[6], th[10], th[14]
	var up, dn [16]float32
	for l := range 16 {
		if l < 15 {
			up[l] = float32(int(iq4Values[l+1]) - int(iq4Values[l]))
		}
		if l > 0 {
			dn[l] = float32(int(iq4Values[l-1]) - int(iq4Values[l]))
		}
	}
	copy(t.uplo[:], up[:8])
	copy(t.uphi[:], up[8:])
	copy(t.dnlo[:], dn[:8])
	copy(t.dnhi[:], dn[8:])
	return t
}

func init() {
	iq4Thresholds = buildIQ4Thresholds()
	iq4Tab = buildIQ4TrialTables(&iq4Thresholds)
}

// iq4LevelByThresholds is bestIndexIQ4NL as the trial kernel computes it.
func iq4LevelByThresholds(x float32) int {
	l := 0
	for k := 1; k <= 15; k++ {
		if x >= iq4Thresholds[k] {
			l++
		}
	}
	return l
}

// iq4TrialSumsGo is the portable iq4TrialsAVX2: for each trial scale ids[i]
// the sums of iq4Sums over the levels bestIndexIQ4NL(ids[i]*x).
func iq4TrialSumsGo(xb, weight []float32, ids *[32]float32, sums *[64]float32) {
	var L [32]uint8
	for i, id := range ids {
		for j, v := range xb[:32] {
			L[j] = uint8(bestIndexIQ4NL(id * v))
		}
		sums[i], sums[32+i] = iq4SumsGo(weight, xb, &L)
	}
}

// iq4DescentStepGo is the portable iq4DescentStepAVX2: the weight whose
// level move has the smallest gradient step (the first on a tie) and the
// direction of the move, or j = -1 when no move is possible.
func iq4DescentStepGo(xb, weight []float32, Lb []uint8, d float32) (bestJ, dir int) {
	values := iq4Values
	minStep := float32(math.Inf(1))
	bestJ = -1
	for j, v := range xb[:32] {
		q := float32(values[Lb[j]&15])
		r, tie := fmaBits(-d, q, v)
		diff := float32(r)
		if tie {
			diff = kernel.FMA32(-d, q, v)
		}
		g := float32(d*weight[j]) * diff
		if g > 0 && Lb[j] < 15 {
			if step := float32(int(values[Lb[j]+1])-int(values[Lb[j]])) / g; step < minStep {
				minStep, bestJ, dir = step, j, 1
			}
		} else if g < 0 && Lb[j] > 0 {
			if step := float32(int(values[Lb[j]-1])-int(values[Lb[j]])) / g; step < minStep {
				minStep, bestJ, dir = step, j, -1
			}
		}
	}
	return bestJ, dir
}
