package iqk

import (
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// nearestTable finds the grid point nearest x for one half (plain or
// shifted) of a non-linear grid exactly as the reference's best_index_*
// functions do: the reference table maps int(x)-values[0] to the nearest
// point i, or to n+i when x lies between points i and i+1 closely enough
// that the two distances must be compared (in float32, x-v[i] < v[i+1]-x).
//
// The table here is laid out for a branch-free lookup, which matters because
// the searches run it for every weight of every trial scale: entry ix+1
// holds the candidate i and the two points to compare; entries that need no
// comparison compare against +Inf so the test always keeps i; the clamped
// ends (entry 0 below the grid, limit+1 above) are such entries too.
type nearestTable struct {
	v0    float32 // values[0]
	base  int     // values[0]
	limit int     // entries of the reference table
	idx   [256]uint8
	lo    [256]float32
	hi    [256]float32
	vals  [64]float32 // the grid points as float32
}

func newNearestTable[I int8 | uint8, V int8 | float32](index []I, limit, n int, values []V) *nearestTable {
	t := &nearestTable{v0: float32(values[0]), base: int(values[0]), limit: limit}
	inf := float32(math.Inf(1))
	for i := range t.hi {
		t.hi[i] = inf
	}
	for i := 0; i < n; i++ {
		t.vals[i] = float32(values[i])
	}
	for k := 0; k < limit; k++ {
		e := int(index[k])
		if e < n {
			t.idx[k+1] = uint8(e)
			continue
		}
		e -= n
		t.idx[k+1] = uint8(e)
		t.lo[k+1], t.hi[k+1] = float32(values[e]), float32(values[e+1])
	}
	t.idx[limit+1] = uint8(n - 1)
	return t
}

// best returns the index of the grid point nearest x.
func (t *nearestTable) best(x float32) int {
	ix := uint8(min(max(truncInt(x)-t.base, -1), t.limit) + 1)
	i := int(t.idx[ix])
	if x-t.lo[ix] >= t.hi[ix]-x {
		i++
	}
	return i
}

// bestIQ6 is best for the iq6_k grid, whose reference lookup truncates
// x - values[0] rather than x.
func (t *nearestTable) bestIQ6(x float32) int {
	ix := uint8(min(max(truncInt(x-t.v0), -1), t.limit) + 1)
	i := int(t.idx[ix])
	if x-t.lo[ix] >= t.hi[ix]-x {
		i++
	}
	return i
}

// truncInt converts like C's (int)x on x86 (cvttss2si): out-of-range values
// give INT_MIN.
func truncInt(x float32) int {
	if !(x > -2147483648 && x < 2147483648) {
		return -2147483648
	}
	return int(int32(x))
}

// nlGrid is a non-linear grid of n points per half: the plain points and
// the shifted ones, each with its nearest-point table.
type nlGrid struct {
	n       int
	plain   *nearestTable
	shifted *nearestTable
	trials  [2]*trialTables // plain, shifted: for the lane trials
}

func newNLGrid(index []int8, limit, n int, values []int8) nlGrid {
	g := nlGrid{
		n:       n,
		plain:   newNearestTable(index, limit, n, values[:n]),
		shifted: newNearestTable(index, limit, n, values[n:]),
	}
	g.trials = [2]*trialTables{newTrialTables(g.plain, n), newTrialTables(g.shifted, n)}
	return g
}

var (
	grid3 = newNLGrid(iq3nlIndex[:], 111, 8, tables.IQ3NLValues[:])
	grid4 = newNLGrid(tables.IQ4NLIndex[:], 241, 16, tables.IQ4KValues[:])
	grid5 = newNLGrid(iq5nlIndex[:], 247, 32, tables.IQ5NLValues[:])
)

// half returns the table of the plain or the shifted points.
func (g *nlGrid) half(shifted bool) *nearestTable {
	if shifted {
		return g.shifted
	}
	return g.plain
}

// best returns the index into values (one half of the grid) nearest x.
func (g *nlGrid) best(values []int8, x float32) int {
	return g.half(int(values[0]) != g.plain.base).best(x)
}

func bestIndexIQ4(values []int8, x float32) int { return grid4.best(values, x) }

// sums accumulates, over one block, sum w*q*x and sum w*q^2 for the grid
// points nearest id*x and -id*x (the "plus" and "minus" orientations).
func (t *nearestTable) sums(xb, weight []float32, id float32) (sqxP, sq2P, sqxM, sq2M float32) {
	weight = weight[:len(xb)]
	if useSumsFMA && len(xb) > 0 {
		var out [4]float32
		nearestSumsFMA(t, &xb[0], &weight[0], len(xb), id, &out)
		return out[0], out[1], out[2], out[3]
	}
	return t.sumsGo(xb, weight, id)
}

// sumsGo is the portable sums, the reference for the assembly one.
func (t *nearestTable) sumsGo(xb, weight []float32, id float32) (sqxP, sq2P, sqxM, sq2M float32) {
	weight = weight[:len(xb)]
	for j, x := range xb {
		w := weight[j]
		al := id * x
		q := t.vals[t.best(al)&63]
		wq := w * q
		sqxP = kernel.FMA32(wq, x, sqxP)
		sq2P = kernel.FMA32(wq, q, sq2P)
		q = t.vals[t.best(-al)&63]
		wq = w * q
		sqxM = kernel.FMA32(wq, x, sqxM)
		sq2M = kernel.FMA32(wq, q, sq2M)
	}
	return
}

// blockScale searches the scale of one block over the grid, trying inverse
// scales (step*itry + values[0])/max for itry in -ntry..ntry on both halves.
// guardFirst: the first estimate is only taken when its sum of q^2 is
// positive (iq3 variants); otherwise it is taken as is.
func (g *nlGrid) blockScale(xb, weight []float32, ntry, step int, maxv float32, guardFirst bool) (d float32, shifted bool) {
	if useTrialsAVX2 && len(xb) > 0 {
		if d, shifted, ok := g.blockScaleLanes(xb, weight, ntry, step, maxv, guardFirst); ok {
			return d, shifted
		}
	}
	return g.blockScaleGo(xb, weight, ntry, step, maxv, guardFirst)
}

// blockScaleGo is blockScale one trial at a time, the reference for the
// lane trials.
func (g *nlGrid) blockScaleGo(xb, weight []float32, ntry, step int, maxv float32, guardFirst bool) (d float32, shifted bool) {
	v0 := float32(g.plain.base)
	if ntry > 0 {
		d = -maxv / v0
	} else {
		d = maxv / v0
	}
	id := 1 / d
	sqxP, sq2P, sqxM, sq2M := g.plain.sums(xb, weight, id)
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
		for s, t := range [2]*nearestTable{g.plain, g.shifted} {
			id = float32(step*itry+t.base) / maxv
			sqxP, sq2P, sqxM, sq2M = t.sums(xb, weight, id)
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
	return d, shifted
}

// refine re-fits d for a block on its chosen grid half: the weighted least
// squares scale of the points nearest x/d (d unchanged if the fit is empty).
func (t *nearestTable) refine(xb, weight []float32, d float32) float32 {
	id := 1 / d
	var sumqx, sumq2 float32
	weight = weight[:len(xb)]
	for j, x := range xb {
		q := t.vals[t.best(id*x)&63]
		wq := weight[j] * q
		sumqx = kernel.FMA32(wq, x, sumqx)
		sumq2 = kernel.FMA32(wq, q, sumq2)
	}
	if sumq2 > 0 {
		return sumqx / sumq2
	}
	return d
}
