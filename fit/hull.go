package fit

import (
	"math"
	"sort"

	"github.com/gquant/gquant/formats"
)

// point is one option of an item: its bytes and its loss.
type point struct {
	x, y float64
	i    int // index of the option
}

// lowerHull returns the options on the lower convex hull of (bytes, loss),
// the only ones a Lagrangian relaxation ever picks: loss strictly falling
// as bytes grow, each step buying less per byte than the one before. pts
// need not be sorted; equal bytes keep the lower loss.
func lowerHull(pts []point) []point {
	ps := append([]point(nil), pts...)
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].x != ps[j].x {
			return ps[i].x < ps[j].x
		}
		return ps[i].y < ps[j].y
	})
	var h []point
	for _, p := range ps {
		if len(h) > 0 && (p.x == h[len(h)-1].x || p.y >= h[len(h)-1].y) {
			continue // same bytes but no better, or more bytes and no better
		}
		for len(h) >= 2 {
			a, b := h[len(h)-2], h[len(h)-1]
			// b is above the segment a-p (or on it): drop it.
			if (b.y-a.y)*(p.x-a.x) >= (p.y-a.y)*(b.x-a.x) {
				h = h[:len(h)-1]
				continue
			}
			break
		}
		h = append(h, p)
	}
	return h
}

// closeTypes returns the types of one tensor whose measured errors leave
// the choice between them in doubt: a type whose error lies within two
// standard errors of the hull the other types make (so whether it is on the
// hull, and where the hull bends, is not settled), or whose own standard
// error exceeds 5 % of its error. Only their errors are worth more rows,
// whatever the budgets, which keeps a refit's measurements in the cache.
func closeTypes(ms map[formats.Type]*Measurement, types []formats.Type, shape []int64) []formats.Type {
	ne0 := shape[0]
	type pt struct {
		t    formats.Type
		x, y float64
		se   float64
	}
	var pts []pt
	for _, t := range types {
		m := ms[t]
		rs, err := t.RowSize(ne0)
		if err != nil || m == nil {
			continue
		}
		pts = append(pts, pt{t: t, x: float64(rs), y: m.Err(), se: m.SE()})
	}
	var out []formats.Type
	for i, p := range pts {
		if p.y == 0 {
			continue
		}
		if p.se > 0.05*p.y {
			out = append(out, p.t)
			continue
		}
		var others []point
		maxSE := 0.0
		for j, q := range pts {
			if j != i {
				others = append(others, point{x: q.x, y: q.y, i: j})
			}
		}
		h := lowerHull(others)
		y, ok := hullAt(h, p.x)
		if !ok {
			continue
		}
		for _, q := range h {
			maxSE = math.Max(maxSE, pts[q.i].se)
		}
		if math.Abs(p.y-y) < 2*math.Hypot(p.se, maxSE) {
			out = append(out, p.t)
		}
	}
	return out
}

// hullAt interpolates the hull at x. ok is false left of its first point:
// an option with fewer bytes than every other is on the hull whatever its
// loss. Right of the last point the hull stays flat.
func hullAt(h []point, x float64) (float64, bool) {
	if len(h) == 0 || x < h[0].x {
		return 0, false
	}
	for k := 1; k < len(h); k++ {
		if x <= h[k].x {
			a, b := h[k-1], h[k]
			return a.y + (b.y-a.y)*(x-a.x)/(b.x-a.x), true
		}
	}
	return h[len(h)-1].y, true
}
