package fit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// exactSolve is the multiple-choice knapsack by dynamic programming over
// bytes: the best loss for every byte total, item by item.
func exactSolve(items [][]option, budget int64) (float64, bool) {
	inf := math.Inf(1)
	best := make([]float64, budget+1)
	for b := range best {
		best[b] = inf
	}
	best[0] = 0
	for _, opts := range items {
		next := make([]float64, budget+1)
		for b := range next {
			next[b] = inf
		}
		for b, l := range best {
			if math.IsInf(l, 1) {
				continue
			}
			for _, o := range opts {
				if nb := int64(b) + o.bytes; nb <= budget && l+o.loss < next[nb] {
					next[nb] = l + o.loss
				}
			}
		}
		best = next
	}
	m := inf
	for _, l := range best {
		m = math.Min(m, l)
	}
	return m, !math.IsInf(m, 1)
}

// randomItems makes n items of up to k options with bytes in [1, maxBytes]
// and losses that mostly fall as bytes grow, as quantization types do, with
// dominated options mixed in.
func randomItems(r *rand.Rand, n, k int, maxBytes int64) [][]option {
	items := make([][]option, n)
	for i := range items {
		m := 1 + r.IntN(k)
		scale := r.Float64()*10 + 0.1
		for j := 0; j < m; j++ {
			b := 1 + r.Int64N(maxBytes)
			l := scale * math.Exp(-float64(b)/float64(maxBytes)*3) * (0.7 + 0.6*r.Float64())
			items[i] = append(items[i], option{bytes: b, loss: l})
		}
	}
	return items
}

// budgetBetween returns a budget between the smallest and the largest
// total of items (sometimes one byte below the smallest).
func budgetBetween(r *rand.Rand, items [][]option) int64 {
	var minB, maxB int64
	for _, opts := range items {
		lo, hi := opts[0].bytes, opts[0].bytes
		for _, o := range opts {
			lo, hi = min(lo, o.bytes), max(hi, o.bytes)
		}
		minB += lo
		maxB += hi
	}
	return minB + r.Int64N(maxB-minB+2) - 1
}

// checkSolve runs solve and the exact solution on one instance and returns
// the relative gap (0 when solve is exact, -1 when no choice fits).
func checkSolve(t *testing.T, name string, solver func([][]option, int64) ([]int, error), items [][]option, budget int64) float64 {
	t.Helper()
	want, ok := exactSolve(items, budget)
	pick, err := solver(items, budget)
	if !ok {
		if !errors.Is(err, ErrInfeasible) {
			t.Fatalf("%s: budget %d below the smallest choice: got %v, want ErrInfeasible", name, budget, err)
		}
		return -1
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var bytes int64
	var loss float64
	for i, j := range pick {
		bytes += items[i][j].bytes
		loss += items[i][j].loss
	}
	if bytes > budget {
		t.Fatalf("%s: %d bytes over the budget of %d", name, bytes, budget)
	}
	if loss < want-1e-9*want {
		t.Fatalf("%s: loss %v below the exact optimum %v", name, loss, want)
	}
	return math.Max(0, (loss-want)/want)
}

// TestSolveSmallRandom compares the optimiser with the exact optimum on
// tiny random instances of 1 to 8 items with options as coarse as a third
// of the budget, the hardest case for a relaxation: solve must be exact;
// the relaxation with its greedy fill and swaps alone (what runs for models
// too large for the exact frontiers) must reach the shares pinned here.
func TestSolveSmallRandom(t *testing.T) {
	for _, tc := range []struct {
		name            string
		solver          func([][]option, int64) ([]int, error)
		minShare, worst float64
	}{
		{"solve", solve, 1, 0},
		{"relaxed", solveRelaxed, 0.98, 0.15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			const cases = 2000
			exactHits, feasible, worst := 0, 0, 0.0
			for c := 0; c < cases; c++ {
				items := randomItems(r, 1+r.IntN(8), 6, 40)
				gap := checkSolve(t, fmt.Sprintf("case %d", c), tc.solver, items, budgetBetween(r, items))
				if gap < 0 {
					continue
				}
				feasible++
				if gap < 1e-9 {
					exactHits++
				}
				worst = math.Max(worst, gap)
			}
			t.Logf("%d of %d feasible instances solved exactly; worst relative gap %.3g", exactHits, feasible, worst)
			if float64(exactHits) < tc.minShare*float64(feasible) {
				t.Errorf("%d of %d instances solved exactly, want a share of at least %v", exactHits, feasible, tc.minShare)
			}
			if worst > tc.worst+1e-9 {
				t.Errorf("worst gap to the optimum %.3g, want at most %v", worst, tc.worst)
			}
		})
	}
}

// modelItems makes an instance shaped like a model: n tensors of a few
// sizes, each with the same quantization types (bits per weight) whose
// errors fall about fourfold per extra bit, with noise and a per-tensor
// gain spanning two orders of magnitude.
func modelItems(r *rand.Rand, n int) [][]option {
	bpw := []float64{1.5625, 2.1875, 2.5, 3.1875, 3.4375, 4.25, 4.5, 5.5, 6.5, 8.5, 16}
	sizes := []int64{16, 48, 96, 240}
	items := make([][]option, n)
	for i := range items {
		w := sizes[r.IntN(len(sizes))]
		g := math.Pow(10, 2*r.Float64())
		for _, b := range bpw {
			e := math.Exp2(-2*b) * (0.8 + 0.4*r.Float64())
			if b == 16 {
				e = 0
			}
			items[i] = append(items[i], option{bytes: int64(math.Ceil(float64(w) * b / 8)), loss: g * (e + 1e-6)})
		}
	}
	return items
}

// TestSolveModelShaped does the same on instances shaped like a model's
// tensors and types (10 to 50 tensors, steps of a few % of the budget).
func TestSolveModelShaped(t *testing.T) {
	for _, tc := range []struct {
		name            string
		solver          func([][]option, int64) ([]int, error)
		minShare, worst float64
	}{
		{"solve", solve, 1, 0},
		{"relaxed", solveRelaxed, 0.75, 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			const cases = 200
			exactHits, worst := 0, 0.0
			for c := 0; c < cases; c++ {
				items := modelItems(r, 10+r.IntN(40))
				gap := checkSolve(t, fmt.Sprintf("case %d", c), tc.solver, items, budgetBetween(r, items))
				if gap < 1e-9 {
					exactHits++
				}
				worst = math.Max(worst, gap)
			}
			t.Logf("%d of %d instances solved exactly; worst relative gap %.3g", exactHits, cases, worst)
			if float64(exactHits) < tc.minShare*cases {
				t.Errorf("%d of %d instances solved exactly, want a share of at least %v", exactHits, cases, tc.minShare)
			}
			if worst > tc.worst+1e-9 {
				t.Errorf("worst gap to the optimum %.3g, want at most %v", worst, tc.worst)
			}
		})
	}
}
