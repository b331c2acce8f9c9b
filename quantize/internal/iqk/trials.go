package iqk

import "math"

// The block scale search (nlGrid.blockScale) tries up to 31 inverse scales
// per block, each a sequential sum over the block's weights. The fast path
// runs eight trials at once, one per vector lane, which needs the nearest
// grid point without the table lookup: nearestTable.best is a non-decreasing
// function of x on |x| < 2^30 (within one truncation slot the pick compares
// x-lo with hi-x, both monotone in x under rounding; across slots the table
// never goes down, which TestTrialThresholds checks at every slot edge), so
// its result is the number of thresholds t[k] <= x, where t[k] is the
// smallest float32 whose nearest index exceeds k.

// trialLimit bounds |x*id| on the counting path (see trialThresholds).
const trialLimit = 1 << 30

// trialTables is one grid half for the lane trials: the thresholds, each
// repeated in eight lanes for a vector compare (unused ones +Inf), and the
// grid values.
type trialTables struct {
	th   [31][8]float32
	vals [32]float32
	// th32 holds the thresholds once each, padded with +Inf to 32, for the
	// AVX-512 trials' lookups (nlTrialsPair512).
	th32 [32]float32
	// bis holds the probes of the AVX2 trials' bisection by step: after k
	// steps the count so far c selects t[(2c+1)·2^(4-k) - 1], so the
	// rows are t[7+16c], t[3+8c], t[1+4c], and t[2c] in two rows of eight.
	bis [5][8]float32
}

// newTrialTables finds t's thresholds by bisection over the float32 order.
func newTrialTables(t *nearestTable, n int) *trialTables {
	tt := &trialTables{}
	inf := float32(math.Inf(1))
	for k := range tt.th {
		for l := range tt.th[k] {
			tt.th[k][l] = inf
		}
	}
	copy(tt.vals[:], t.vals[:n])
	lo0, hi0 := floatKey(-trialLimit), floatKey(trialLimit)
	for k := 0; k < n-1; k++ {
		lo, hi := lo0, hi0 // best(lo) <= k < best(hi)
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if t.best(keyFloat(mid)) > k {
				hi = mid
			} else {
				lo = mid
			}
		}
		for l := range tt.th[k] {
			tt.th[k][l] = keyFloat(hi)
		}
	}
	for k := range tt.th32 {
		tt.th32[k] = inf
		if k < len(tt.th) {
			tt.th32[k] = tt.th[k][0]
		}
	}
	for c := 0; c < 16; c++ {
		if c < 2 {
			tt.bis[0][c] = tt.th32[7+16*c]
		}
		if c < 4 {
			tt.bis[1][c] = tt.th32[3+8*c]
		}
		if c < 8 {
			tt.bis[2][c] = tt.th32[1+4*c]
		}
		tt.bis[3+c/8][c%8] = tt.th32[2*c]
	}
	return tt
}

// floatKey maps float32 to uint32 preserving order (-0 just below +0).
func floatKey(x float32) uint32 {
	u := math.Float32bits(x)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

func keyFloat(k uint32) float32 {
	if k>>31 != 0 {
		return math.Float32frombits(k &^ (1 << 31))
	}
	return math.Float32frombits(^k)
}

// countIndex is nearestTable.best by counting thresholds (|x| < 2^30 or NaN).
func (tt *trialTables) countIndex(x float32, n int) int {
	c := 0
	for k := 0; k < n-1; k++ {
		if x >= tt.th[k][0] {
			c++
		}
	}
	return c
}

// trialIDs lays out the inverse scales blockScale tries: plain lane 0 is the
// first estimate, plain lane 1+k and shifted lane k are itry = k-ntry. It
// returns the number of vectors per half and the largest |id|.
func (g *nlGrid) trialIDs(ids *[2][4][8]float32, ntry, step int, maxv float32) (nvecP, nvecS int, maxID float32) {
	*ids = [2][4][8]float32{}
	v0 := float32(g.plain.base)
	var d float32
	if ntry > 0 {
		d = -maxv / v0
	} else {
		d = maxv / v0
	}
	id := 1 / d
	ids[0][0][0] = id
	maxID = abs32(id)
	for itry := -ntry; itry <= ntry; itry++ {
		k := itry + ntry
		for s, t := range [2]*nearestTable{g.plain, g.shifted} {
			id = float32(step*itry+t.base) / maxv
			maxID = max(maxID, abs32(id))
			l := k + 1 - s
			ids[s][l/8][l%8] = id
		}
	}
	n := 2*ntry + 1
	return (n + 1 + 7) / 8, (n + 7) / 8, maxID
}

// trialSums holds the lane sums of both halves: sums[s][v] is vector v of
// half s as sqxP, sq2P, sqxM, sq2M, eight lanes each.
type trialSums [2][4][4][8]float32

// blockScaleLanes is blockScale from the lane sums of runTrials; ok is
// false when the counting path does not apply.
func (g *nlGrid) blockScaleLanes(xb, weight []float32, ntry, step int, maxv float32, guardFirst bool) (d float32, shifted, ok bool) {
	if ntry < 0 || 2*ntry+2 > 32 {
		return 0, false, false
	}
	var ids [2][4][8]float32
	nvecP, nvecS, maxID := g.trialIDs(&ids, ntry, step, maxv)
	if !(float64(abs32(maxv))*float64(maxID) < trialLimit/2) {
		return 0, false, false
	}
	var sums trialSums
	g.runTrials(xb, weight, &ids, nvecP, nvecS, &sums)
	lane := func(s, l int) (sqxP, sq2P, sqxM, sq2M float32) {
		v := &sums[s][l/8]
		return v[0][l%8], v[1][l%8], v[2][l%8], v[3][l%8]
	}
	sqxP, sq2P, sqxM, sq2M := lane(0, 0)
	v0 := float32(g.plain.base)
	if ntry > 0 {
		d = -maxv / v0
	} else {
		d = maxv / v0
	}
	var best float32
	if !guardFirst || sq2P > 0 {
		d = sqxP / sq2P
		best = d * sqxP
	}
	if sq2M > 0 && sqxM*sqxM > best*sq2M {
		d = sqxM / sq2M
		best = d * sqxM
	}
	for itry := -ntry; itry <= ntry; itry++ {
		k := itry + ntry
		for s := 0; s < 2; s++ {
			sqxP, sq2P, sqxM, sq2M = lane(s, k+1-s)
			if sq2P > 0 && sqxP*sqxP > best*sq2P {
				d = sqxP / sq2P
				best = d * sqxP
				shifted = s == 1
			}
			if sq2M > 0 && sqxM*sqxM > best*sq2M {
				d = sqxM / sq2M
				best = d * sqxM
				shifted = s == 1
			}
		}
	}
	return d, shifted, true
}
