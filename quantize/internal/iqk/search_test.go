package iqk

import (
	"cmp"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// splitSearchAll is splitSearch without pruning: every candidate evaluated,
// as the reference does.
func splitSearchAll(sumx, sumw []float32, maxI1, minI3 int) (d float32, isShifted bool) {
	n := len(sumx) - 1
	var best float32
	for i1 := 0; i1 < maxI1; i1++ {
		for i2 := i1; i2 < n; i2++ {
			for i3 := max(i2, minI3); i3 < n; i3++ {
				a := [4]float32{sumx[i1] - sumx[0], sumx[i2] - sumx[i1], sumx[i3] - sumx[i2], sumx[n] - sumx[i3]}
				b := [4]float32{sumw[i1] - sumw[0], sumw[i2] - sumw[i1], sumw[i3] - sumw[i2], sumw[n] - sumw[i3]}
				for k, v := range iq2Variants {
					sumqx := kernel.FMA32(a[3], v[3], kernel.FMA32(a[2], v[2], kernel.FMA32(a[0], v[0], mul(a[1], v[1]))))
					sumq2 := kernel.FMA32(b[3]*v[3], v[3], kernel.FMA32(b[2]*v[2], v[2], kernel.FMA32(b[0]*v[0], v[0], mul(b[1]*v[1], v[1]))))
					if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
						d = sumqx / sumq2
						best = d * sumqx
						isShifted = k&1 == 1
					}
				}
			}
		}
	}
	return d, isShifted
}

// TestSplitSearchPruning checks that the pruned split search returns
// exactly what evaluating every candidate returns, on blocks of many shapes:
// normal, heavy-tailed, few distinct values (ties), tiny and huge scales.
func TestSplitSearchPruning(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 3000; iter++ {
		n, maxI1, minI3 := 16, 16, 0
		if iter%2 == 1 {
			n, maxI1, minI3 = 32, 24, 8
		}
		scale := math.Pow(10, float64(r.IntN(40)-25))
		x := make([]float32, n)
		w := make([]float32, n)
		for j := range x {
			switch iter % 5 {
			case 0:
				x[j] = float32(r.NormFloat64() * scale)
			case 1:
				x[j] = float32(r.NormFloat64() / (r.Float64() + 0.05) * scale)
			case 2:
				x[j] = float32(float64(r.IntN(3)-1) * scale)
			case 3:
				x[j] = float32(float64(r.IntN(5)) * scale)
			default:
				x[j] = float32(r.Float64() * scale)
			}
			w[j] = float32(r.ExpFloat64())
			if iter%7 == 0 {
				w[j] = float32(float64(x[j]) * float64(x[j]))
			}
			if iter%11 == 0 && r.IntN(3) == 0 {
				w[j] = 0
			}
		}
		order := make([]int, n)
		sortedOrder(order, x)
		sumx, sumw := make([]float32, n+1), make([]float32, n+1)
		xs := make([]float32, n)
		absSum := prefixSums(xs, sumw, sumx, order, x, w, true)
		gd, gs := splitSearch(xs, sumx, sumw, absSum, maxI1, minI3)
		wd, ws := splitSearchAll(sumx, sumw, maxI1, minI3)
		if math.Float32bits(gd) != math.Float32bits(wd) || gs != ws {
			t.Fatalf("block %d (n=%d, scale %g): pruned search gives (%g, %v), full search (%g, %v)", iter, n, scale, gd, gs, wd, ws)
		}
	}
}

// TestNearest4 checks the counting selection of nearest4 against the
// reference's scan, for both orientations and for blocks and scales of many
// magnitudes, including ties (x exactly between two grid points).
func TestNearest4(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	values := iq2ValuesForTest()
	for iter := 0; iter < 20000; iter++ {
		scale := float32(math.Pow(10, float64(r.IntN(60)-40)))
		var xb [32]float32
		d := scale * float32(r.NormFloat64()) / 20
		var amax float32
		for i := range xb {
			switch r.IntN(4) {
			case 0: // exactly between two grid points
				j := r.IntN(3)
				xb[i] = d * float32(int(values[j])+int(values[j+1])) / 2
			case 1:
				xb[i] = d * float32(values[r.IntN(4)])
			default:
				xb[i] = scale * float32(r.NormFloat64())
			}
			amax = max(amax, abs32(xb[i]))
		}
		for _, sign := range []float32{1, -1} {
			var got, want [32]uint8
			nearest4(&got, xb[:], d, values, sign, amax)
			var val [4]float32
			for j := range val {
				val[j] = d * float32(values[j])
				if sign < 0 {
					val[j] = -val[j]
				}
			}
			nearest4Scan(&want, xb[:], val)
			if got != want {
				t.Fatalf("d=%g sign %v: counting gives %v, scan %v (x %v)", d, sign, got, want, xb)
			}
		}
	}
}

func iq2ValuesForTest() []int8 { return []int8{-31, -13, 1, 17} }

// BenchmarkSplitSearch runs splitSearch on 16-value blocks shaped like the
// quantize benchmark's (normal values, exponential importance).
func BenchmarkSplitSearch(b *testing.B) {
	r := rand.New(rand.NewPCG(42, 4096))
	const nblocks = 1024
	type block struct {
		xs, sumx, sumw []float32
		absSum         float64
	}
	blocks := make([]block, nblocks)
	for i := range blocks {
		x, qw, w := make([]float32, 256), make([]float32, 256), make([]float32, 16)
		for j := range x {
			x[j], qw[j] = float32(0.02*r.NormFloat64()), float32(r.ExpFloat64())
		}
		sigma2 := 1.5 * sumSquares(x) / 256
		blockWeights(w, x[:16], qw[:16], sigma2, nil)
		bl := block{xs: make([]float32, 16), sumx: make([]float32, 17), sumw: make([]float32, 17)}
		var order [16]int
		sortedOrder(order[:], x[:16])
		bl.absSum = prefixSums(bl.xs, bl.sumw, bl.sumx, order[:], x[:16], w, true)
		blocks[i] = bl
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		bl := &blocks[i%nblocks]
		splitSearch(bl.xs, bl.sumx, bl.sumw, bl.absSum, 16, 0)
	}
}

// TestSortedOrder holds sortedOrder (with the assembly ranks where the CPU
// has them) to a stable sort by value (so ties by index, -0 equal to +0)
// on blocks with many ties, signed zeros and infinities; a block with a NaN,
// which has no such order, must take the insertion sort.
func TestSortedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for iter := 0; iter < 20000; iter++ {
		n := []int{16, 32, 8 * (1 + r.IntN(8)), 1 + r.IntN(32)}[r.IntN(4)]
		x := make([]float32, n)
		for j := range x {
			switch r.IntN(6) {
			case 0:
				x[j] = float32(r.IntN(3) - 1) // ties
			case 1:
				x[j] = float32(math.Copysign(0, -1))
			case 2:
				x[j] = float32(math.Inf(2*r.IntN(2) - 1))
			default:
				x[j] = float32(r.NormFloat64())
			}
		}
		if iter%10 == 0 {
			x[r.IntN(n)] = float32(math.NaN())
		}
		got, want := make([]int, n), make([]int, n)
		sortedOrder(got, x)
		if slices.ContainsFunc(x, func(v float32) bool { return v != v }) {
			insertionOrder(want, x)
		} else {
			for j := range want {
				want[j] = j
			}
			// cmp.Compare without NaN: -0 equal to +0, ties kept in order.
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iter %d x %v: %v, want %v", iter, x, got, want)
		}
	}
}
