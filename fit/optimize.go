package fit

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// option is one choice for an item: its bytes and loss.
type option struct {
	bytes int64
	loss  float64
}

// ErrInfeasible is returned when even the smallest option of every item
// exceeds the budget.
var ErrInfeasible = errors.New("fit: budget too small")

// ErrBadLoss is returned for an option whose loss is not finite or too
// large to price bytes with (a loss from a damaged measurement).
var ErrBadLoss = errors.New("fit: bad loss")

// maxLoss is the largest loss solve takes: slopes and loss + lambda*bytes
// stay finite below it for any byte count in int64.
const maxLoss = 1e150

// solve picks one option per item so that the bytes stay within budget and
// the summed loss is as small as this finds: the multiple-choice knapsack
// of one device.
//
//  1. A Lagrange multiplier lambda prices bytes in loss; at a given lambda
//     every item takes the option on its lower convex hull that minimises
//     loss + lambda*bytes, and the total bytes fall as lambda grows. Bisection
//     finds the smallest lambda whose choice fits.
//  2. The slack the relaxation leaves is filled greedily: the upgrade (to
//     any option, hull or not) with the largest loss saved per byte that
//     still fits, again and again.
//  3. Single swaps: one item up, another down, whenever that fits and
//     lowers the loss, until none does.
//
// Where the model is small enough, frontierSolve then finds the exact
// optimum, starting from this answer as the bound to beat.
//
// It returns the index of each item's option. An item with no option is a
// programming error.
func solve(items [][]option, budget int64) ([]int, error) {
	pick, lambda, err := relax(items, budget)
	if err != nil {
		return nil, err
	}
	if exact, ok := frontierSolve(items, budget, totalLoss(items, pick), lambda); ok {
		copy(pick, exact)
	}
	return pick, nil
}

// solveRelaxed is solve's steps 1 to 3.
func solveRelaxed(items [][]option, budget int64) ([]int, error) {
	pick, _, err := relax(items, budget)
	return pick, err
}

// relax is solveRelaxed, also returning the multiplier it found (0 when
// the budget does not bind).
func relax(items [][]option, budget int64) ([]int, float64, error) {
	n := len(items)
	pick := make([]int, n)
	var minBytes, bestBytes int64
	for i, opts := range items {
		if len(opts) == 0 {
			panic("fit: item without options")
		}
		lo, best := 0, 0
		for j, o := range opts {
			if !(math.Abs(o.loss) <= maxLoss) || o.bytes < 0 {
				// Losses come from measurements and cache files: data,
				// not a programming error.
				return nil, 0, fmt.Errorf("%w: item %d of %d, option %d: %d bytes and loss %v (a loss must be finite, at most %g)", ErrBadLoss, i+1, n, j+1, o.bytes, o.loss, maxLoss)
			}
			if o.bytes < opts[lo].bytes || o.bytes == opts[lo].bytes && o.loss < opts[lo].loss {
				lo = j
			}
			if o.loss < opts[best].loss || o.loss == opts[best].loss && o.bytes < opts[best].bytes {
				best = j
			}
		}
		minBytes += opts[lo].bytes
		bestBytes += opts[best].bytes
		pick[i] = best
	}
	if minBytes > budget {
		return nil, 0, fmt.Errorf("%w: the smallest choice of every tensor needs %d bytes, %d more than the %d available", ErrInfeasible, minBytes, minBytes-budget, budget)
	}
	if bestBytes <= budget {
		return pick, 0, nil // the budget does not bind
	}

	hulls := make([][]point, n)
	maxSlope := 0.0
	for i, opts := range items {
		pts := make([]point, len(opts))
		for j, o := range opts {
			pts[j] = point{x: float64(o.bytes), y: o.loss, i: j}
		}
		hulls[i] = lowerHull(pts)
		h := hulls[i]
		for k := 1; k < len(h); k++ {
			maxSlope = math.Max(maxSlope, (h[k-1].y-h[k].y)/(h[k].x-h[k-1].x))
		}
	}
	at := func(lambda float64) int64 {
		var total int64
		for i, h := range hulls {
			best := 0
			for k := 1; k < len(h); k++ {
				// Strictly better only: ties keep the smaller option.
				if h[k].y+lambda*h[k].x < h[best].y+lambda*h[best].x {
					best = k
				}
			}
			pick[i] = h[best].i
			total += items[i][pick[i]].bytes
		}
		return total
	}
	lo, hi := 0.0, maxSlope*(1+1e-9)+1e-300
	for iter := 0; iter < 200 && hi-lo > 1e-15*hi; iter++ {
		mid := lo + (hi-lo)/2
		if at(mid) <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	used := at(hi)
	if used > budget {
		panic("fit: the relaxation at its upper multiplier does not fit")
	}
	used = fillSlack(items, pick, used, budget)
	swapSearch(items, pick, used, budget)
	return pick, hi, nil
}

func totalLoss(items [][]option, pick []int) float64 {
	l := 0.0
	for i, j := range pick {
		l += items[i][j].loss
	}
	return l
}

// maxFrontierCells bounds the memory of frontierSolve: frontier points
// kept over all items (24 bytes each).
const maxFrontierCells = 1 << 21

// frontierSolve is the exact multiple-choice knapsack by dynamic
// programming over Pareto frontiers: after each item, the partial choices
// that no other beats in both bytes and loss. A partial choice is dropped
// when even the Lagrangian bound of the items still to come (at the
// multiplier lambda the relaxation found: for any lambda >= 0, the least
// loss + lambda*bytes of each item, minus lambda times the bytes left, is a
// lower bound) cannot bring it below incumbent, the relaxation's own
// answer. With that bound the frontiers stay small; it gives up (ok false)
// when they still outgrow maxFrontierCells.
func frontierSolve(items [][]option, budget int64, incumbent, lambda float64) ([]int, bool) {
	n := len(items)
	type cell struct {
		bytes  int64
		loss   float64
		parent int32 // index in the previous frontier
		opt    int32
	}
	// Suffix sums over the items from i on: least bytes, and the least
	// loss + lambda*bytes.
	restBytes := make([]int64, n+1)
	restDual := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		mb, md := items[i][0].bytes, math.Inf(1)
		for _, o := range items[i] {
			mb = min(mb, o.bytes)
			md = math.Min(md, o.loss+lambda*float64(o.bytes))
		}
		restBytes[i], restDual[i] = restBytes[i+1]+mb, restDual[i+1]+md
	}
	tol := 1e-9 * math.Abs(incumbent)
	frontiers := make([][]cell, n+1)
	frontiers[0] = []cell{{parent: -1}}
	cells := 0
	var next []cell
	for i, opts := range items {
		next = next[:0]
		for p, c := range frontiers[i] {
			for j, o := range opts {
				b, l := c.bytes+o.bytes, c.loss+o.loss
				if b+restBytes[i+1] > budget {
					continue
				}
				if l+restDual[i+1]-lambda*float64(budget-b) > incumbent+tol {
					continue
				}
				next = append(next, cell{bytes: b, loss: l, parent: int32(p), opt: int32(j)})
			}
		}
		slices.SortFunc(next, func(a, b cell) int {
			if a.bytes != b.bytes {
				return cmp.Compare(a.bytes, b.bytes)
			}
			return cmp.Compare(a.loss, b.loss)
		})
		kept := make([]cell, 0, len(next)/4+1)
		for _, c := range next {
			if len(kept) == 0 || c.loss < kept[len(kept)-1].loss {
				kept = append(kept, c)
			}
		}
		cells += len(kept)
		if cells > maxFrontierCells || len(kept) == 0 {
			return nil, false
		}
		frontiers[i+1] = kept
	}
	// The last frontier's least loss is its last point.
	last := frontiers[n]
	k := len(last) - 1
	pick := make([]int, n)
	for i := n; i > 0; i-- {
		c := frontiers[i][k]
		pick[i-1] = int(c.opt)
		k = int(c.parent)
	}
	return pick, true
}

// fillSlack applies the best-value upgrade that fits until none does and
// returns the bytes used.
func fillSlack(items [][]option, pick []int, used, budget int64) int64 {
	for {
		// Each step lowers the loss, so this ends (losses are finite: Fit
		// leaves out broken measurements).
		bi, bj, bestRate := -1, -1, 0.0
		for i, opts := range items {
			cur := opts[pick[i]]
			for j, o := range opts {
				db := o.bytes - cur.bytes
				dl := cur.loss - o.loss
				if dl <= 0 || used+db > budget {
					continue
				}
				rate := math.Inf(1)
				if db > 0 {
					rate = dl / float64(db)
				}
				if rate > bestRate {
					bi, bj, bestRate = i, j, rate
				}
			}
		}
		if bi < 0 {
			return used
		}
		used += items[bi][bj].bytes - items[bi][pick[bi]].bytes
		pick[bi] = bj
	}
}

// move changes one item's option.
type move struct {
	item, to int
	db       int64   // bytes added (negative: freed)
	dl       float64 // loss added (negative: saved)
}

// top3 holds, for a prefix of a move list, the indices of the three moves
// of lowest loss added that belong to distinct items (-1: none).
type top3 [3]int

// prefixTop3 returns top3 for every prefix of ms.
func prefixTop3(ms []move) []top3 {
	out := make([]top3, len(ms))
	cur := top3{-1, -1, -1}
	for k, m := range ms {
		cand := []int{k}
		for _, c := range cur {
			switch {
			case c < 0:
			case ms[c].item != m.item:
				cand = append(cand, c)
			case ms[c].dl <= m.dl:
				cand[0] = c // the same item: keep its cheaper move
			}
		}
		sort.SliceStable(cand, func(a, b int) bool { return ms[cand[a]].dl < ms[cand[b]].dl })
		cur = top3{-1, -1, -1}
		copy(cur[:], cand)
		out[k] = cur
	}
	return out
}

// pickOther returns the first move of t whose item is neither a nor b.
func (t top3) pickOther(ms []move, a, b int) int {
	for _, c := range t {
		if c >= 0 && ms[c].item != a && ms[c].item != b {
			return c
		}
	}
	return -1
}

// maxTriples bounds the work of the three-item moves: past it (models of
// thousands of tensors, whose options are fine-grained against the budget)
// only pairs are tried.
const maxTriples = 1 << 22

// swapSearch improves the choice by exchanges while one lowers the loss
// and fits: one item up and another down; and, for instances small enough,
// one up and two down, or one down and two up. For each move it looks up
// the best partner in the other moves sorted by bytes.
func swapSearch(items [][]option, pick []int, used, budget int64) {
	for pass := 0; pass < 10000; pass++ {
		var ups, downs []move
		for i, opts := range items {
			cur := opts[pick[i]]
			for j, o := range opts {
				m := move{item: i, to: j, db: o.bytes - cur.bytes, dl: o.loss - cur.loss}
				switch {
				case m.db < 0:
					downs = append(downs, m)
				case j != pick[i] && m.dl < 0:
					ups = append(ups, m)
				}
			}
		}
		// Downgrades by bytes freed, most first: those freeing at least
		// some amount are a prefix. Upgrades by bytes added, fewest first:
		// those within some amount are a prefix.
		sort.Slice(downs, func(a, b int) bool { return downs[a].db < downs[b].db })
		sort.Slice(ups, func(a, b int) bool { return ups[a].db < ups[b].db })
		dTop, uTop := prefixTop3(downs), prefixTop3(ups)
		freeing := func(need int64) int { // last index of the prefix freeing >= need
			return sort.Search(len(downs), func(k int) bool { return -downs[k].db < need }) - 1
		}
		within := func(room int64) int { // last index of the prefix adding <= room
			return sort.Search(len(ups), func(k int) bool { return ups[k].db > room }) - 1
		}
		slack := budget - used
		gain := 0.0
		var chosen []move
		consider := func(g float64, ms ...move) {
			if g < gain-1e-12*math.Abs(gain) {
				gain = g
				chosen = append(chosen[:0], ms...)
			}
		}
		triples := len(ups)*len(downs) <= maxTriples
		for _, u := range ups {
			need := u.db - slack
			if need <= 0 {
				consider(u.dl, u)
				continue
			}
			if k := freeing(need); k >= 0 {
				if d := dTop[k].pickOther(downs, u.item, -1); d >= 0 {
					consider(u.dl+downs[d].dl, u, downs[d])
				}
			}
			if !triples {
				continue
			}
			for _, d1 := range downs {
				if d1.item == u.item || -d1.db >= need {
					continue
				}
				if k := freeing(need + d1.db); k >= 0 {
					if d2 := dTop[k].pickOther(downs, u.item, d1.item); d2 >= 0 {
						consider(u.dl+d1.dl+downs[d2].dl, u, d1, downs[d2])
					}
				}
			}
		}
		if triples {
			for _, d := range downs {
				room := slack - d.db
				for _, u1 := range ups {
					if u1.db > room {
						break
					}
					if u1.item == d.item {
						continue
					}
					if k := within(room - u1.db); k >= 0 {
						if u2 := uTop[k].pickOther(ups, d.item, u1.item); u2 >= 0 {
							consider(d.dl+u1.dl+ups[u2].dl, d, u1, ups[u2])
						}
					}
				}
			}
		}
		if len(chosen) == 0 {
			return
		}
		for _, m := range chosen {
			pick[m.item] = m.to
			used += m.db
		}
		if used > budget {
			panic("fit: a swap broke the budget")
		}
	}
}
