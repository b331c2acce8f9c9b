// Package testrows makes the rows that the quantizer tests feed to the
// kernels: the sixteen kinds of the stress sets (../shared/golden/stress:
// normal, heavy tails, outlier channels, sparse ...) drawn from a seed, and
// crafted special rows (all zero, constant, one non-zero value, ties at
// rounding boundaries, magnitudes near the ends of the float range) with
// importance vectors that have zero weights in whole blocks.
//
// The rows are built from PCG integer draws with float64 additions,
// multiplications, divisions and square roots only, each rounded explicitly
// (no math.Log or math.Exp, whose last bits may differ between platforms, and
// no product left where a compiler could fuse it into an addition), so a seed
// gives the same bits on every platform: fixtures of reference outputs for
// these rows stay valid everywhere.
package testrows

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Kinds is the number of stress kinds; kind k is recipe k of the stress sets.
const Kinds = 16

// KindNames names the stress kinds, by kind.
var KindNames = [Kinds]string{
	"normal", "heavy-tails", "outlier-channels", "zero-const-normal",
	"tiny", "large", "ternary", "huge",
	"block-scale-jumps", "one-sign", "sparse", "uniform",
	"one-outlier", "laplace-like", "grid", "offset-mean",
}

// Gen draws values from a PCG stream.
type Gen struct {
	r *rand.Rand
}

// New returns a generator for seed.
func New(seed uint64) *Gen {
	return &Gen{r: rand.New(rand.NewPCG(seed, 0x5ca1ab1e))}
}

// Uniform is uniform on [0, 1), a multiple of 2^-53.
func (g *Gen) Uniform() float64 {
	return float64(g.r.Uint64()>>11) / (1 << 53)
}

// IntN is uniform on [0, n).
func (g *Gen) IntN(n int) int { return g.r.IntN(n) }

// Normal is approximately N(0, 1): the sum of twelve uniforms less six (so
// |Normal| < 6), which needs no transcendental function.
func (g *Gen) Normal() float64 {
	var s float64
	for i := 0; i < 12; i++ {
		s += g.Uniform()
	}
	return s - 6
}

// mul is a*b rounded on its own (an explicit conversion stops Go from fusing
// it into a following addition on platforms with FMA).
func mul(a, b float64) float64 { return float64(a * b) }

// BF16 rounds v to the nearest bfloat16 (ties to even), as the stress sets'
// inputs are; v must be finite.
func BF16(v float32) float32 {
	b := math.Float32bits(v)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// Stress fills x with one row of stress kind k (see KindNames), every value
// rounded to bfloat16 as in the stress sets. len(x) must be a multiple of 32.
func (g *Gen) Stress(x []float32, k int) {
	normal := func(sigma float64) float32 { return float32(mul(g.Normal(), sigma)) }
	n := len(x)
	switch k {
	case 0:
		for i := range x {
			x[i] = normal(0.02)
		}
	case 1: // student-t with 3 degrees of freedom
		for i := range x {
			z := g.Normal()
			var c float64 // chi-squared with 3 degrees of freedom
			for j := 0; j < 3; j++ {
				y := g.Normal()
				c += mul(y, y)
			}
			x[i] = float32(mul(z/math.Sqrt(c/3+1e-3), 0.02))
		}
	case 2:
		for i := range x {
			x[i] = normal(0.02)
			if i%97 == 0 {
				x[i] *= 40
			}
		}
	case 3:
		for i := range x {
			switch {
			case i < n/3:
				x[i] = 0
			case i < 2*n/3:
				x[i] = 0.05
			default:
				x[i] = normal(0.02)
			}
		}
	case 4:
		for i := range x {
			x[i] = normal(1e-6)
		}
	case 5:
		for i := range x {
			x[i] = normal(10)
		}
	case 6:
		for i := range x {
			x[i] = float32(g.IntN(3)-1) * 0.03
		}
	case 7:
		for i := range x {
			x[i] = normal(1000)
		}
	case 8: // each block of 32 with its own scale, 2^-14 .. 2^3
		for b := 0; b < n; b += 32 {
			sigma := math.Ldexp(1+g.Uniform(), g.IntN(18)-14)
			for i := b; i < b+32; i++ {
				x[i] = normal(sigma)
			}
		}
	case 9:
		for i := range x {
			x[i] = float32(math.Abs(float64(normal(0.02))))
		}
	case 10:
		for i := range x {
			if g.IntN(10) == 0 {
				x[i] = normal(0.02)
			} else {
				x[i] = 0
			}
		}
	case 11:
		for i := range x {
			x[i] = float32(2*g.Uniform() - 1)
		}
	case 12:
		for i := range x {
			x[i] = normal(0.02)
		}
		x[g.IntN(n)] = 20
	case 13: // the product of two normals: a sharp peak and heavy tails
		for i := range x {
			x[i] = float32(mul(mul(g.Normal(), g.Normal()), 0.02))
		}
	case 14:
		for i := range x {
			x[i] = float32(g.IntN(7)-3) * 0.01
		}
	case 15:
		for i := range x {
			x[i] = normal(0.02) + 0.1
		}
	default:
		panic(fmt.Sprintf("testrows: no stress kind %d", k))
	}
	for i, v := range x {
		x[i] = BF16(v)
	}
}

// Row is a named row.
type Row struct {
	Name string
	X    []float32
}

// Specials returns the crafted rows, cols values each (a multiple of 256).
// They aim at the special cases of the scale searches: blocks that are all
// zero (or -0), constant, or hold one non-zero value; the largest magnitude
// twice with both signs; values on a grid whose quotients by the trial scales
// are exact rounding ties; magnitudes around GROUP_MAX_EPS (1e-15), subnormal
// and up to 1e12; blocks of wildly different scales in one super-block.
func Specials(cols int) []Row {
	if cols%256 != 0 {
		panic("testrows: Specials needs a multiple of 256 columns")
	}
	g := New(7)
	var rows []Row
	add := func(name string, f func(i int) float32) {
		x := make([]float32, cols)
		for i := range x {
			x[i] = f(i)
		}
		rows = append(rows, Row{name, x})
	}
	normal := func(sigma float64) float32 { return float32(mul(g.Normal(), sigma)) }
	negZero := float32(math.Copysign(0, -1))

	add("zero", func(int) float32 { return 0 })
	add("negative-zero", func(int) float32 { return negZero })
	for _, c := range []float32{0.05, -0.05, 1, -3.0517578125e-05, 1000, 7} {
		add(fmt.Sprintf("constant %g", c), func(int) float32 { return c })
	}
	add("alternating ±0.05", func(i int) float32 { return 0.05 * float32(1-2*(i&1)) })
	add("random signs ±0.03", func(int) float32 { return 0.03 * float32(1-2*g.IntN(2)) })
	// One non-zero value in each block of 32, or in the whole row.
	pos := make([]int, cols/32)
	for b := range pos {
		pos[b] = g.IntN(32)
	}
	add("one value per block", func(i int) float32 {
		if i%32 == pos[i/32] {
			return normal(0.02)
		}
		return 0
	})
	add("one value per 16", func(i int) float32 {
		if i%16 == 5 {
			return normal(0.02)
		}
		return 0
	})
	add("one value in the row", func(i int) float32 {
		if i == cols/2+44 {
			return 0.0260009765625
		}
		return 0
	})
	add("one negative value in the row", func(i int) float32 {
		if i == 7 {
			return -1.5
		}
		return 0
	})
	add("two opposite values per block", func(i int) float32 {
		switch i % 32 {
		case 3:
			return -0.04
		case 20:
			return 0.04
		}
		return 0
	})
	add("largest magnitude twice, both signs", func(i int) float32 {
		switch i % 32 {
		case 1:
			return -0.1
		case 9:
			return 0.1
		}
		return normal(0.02)
	})
	// Grids: with the largest magnitude a power of two times nmax the first
	// inverse scales are powers of two, and values half-way between grid
	// points are exact ties.
	add("half-integer grid /16", func(i int) float32 {
		if i%32 == 0 {
			return -0.5
		}
		return (float32(g.IntN(16)-8) + 0.5) / 16
	})
	add("integer grid -8..7", func(i int) float32 {
		switch i % 16 {
		case 0:
			return -8
		case 1:
			return 7
		}
		return float32(g.IntN(16) - 8)
	})
	add("integer grid 0..15", func(i int) float32 {
		if i%16 == 0 {
			return 15
		}
		return float32(g.IntN(16))
	})
	add("grid of 0.01", func(i int) float32 { return float32(g.IntN(7)-3) * 0.01 })
	add("ramp", func(i int) float32 { return float32(i%32) - 15.5 })
	add("ramp 0..255", func(i int) float32 { return float32(i % 256) })
	// Magnitudes.
	for _, sigma := range []float64{1e12, 1e8, 1e-12, 1e-30} {
		add(fmt.Sprintf("normal %g", sigma), func(int) float32 { return normal(sigma) })
	}
	add("subnormal", func(int) float32 { return float32(mul(g.Normal(), 1e-40)) })
	// GROUP_MAX_EPS is 1e-15 (rounded to float32); blocks whose largest
	// magnitude is just below, at and just above it.
	eps := float32(1e-15)
	edges := []float32{math.Nextafter32(eps, 0), eps, math.Nextafter32(eps, 1)}
	add("largest magnitude at GROUP_MAX_EPS", func(i int) float32 {
		e := edges[(i/32)%3]
		if i%32 == 11 {
			return -e
		}
		return float32(mul(float64(e), g.Uniform()))
	})
	add("sub-blocks of 16 at GROUP_MAX_EPS", func(i int) float32 {
		e := edges[(i/16)%3]
		if i%16 == 4 {
			return e
		}
		return 0
	})
	// Scales that jump within a super-block.
	add("one loud block per super-block", func(i int) float32 {
		if i%256 < 32 {
			return normal(1)
		}
		return normal(1e-8)
	})
	add("one loud sub-block per super-block", func(i int) float32 {
		if i%256 >= 112 && i%256 < 128 {
			return normal(1)
		}
		return normal(1e-6)
	})
	add("zero and normal blocks alternating", func(i int) float32 {
		if (i/32)%2 == 0 {
			return 0
		}
		return normal(0.02)
	})
	add("zero and normal sub-blocks alternating", func(i int) float32 {
		if (i/16)%2 == 1 {
			return 0
		}
		return normal(0.02)
	})
	add("one zero block per super-block", func(i int) float32 {
		if i%256 >= 64 && i%256 < 96 {
			return 0
		}
		return normal(0.02)
	})
	add("sparse 99%", func(int) float32 {
		if g.IntN(100) == 0 {
			return normal(0.02)
		}
		return 0
	})
	add("sparse with one sign", func(int) float32 {
		if g.IntN(8) == 0 {
			return float32(math.Abs(float64(normal(0.02))))
		}
		return 0
	})
	add("positive, one negative", func(i int) float32 {
		if i%32 == 17 {
			return -0.001
		}
		return float32(math.Abs(float64(normal(0.02)))) + 0.01
	})
	return rows
}

// Imatrix is a named importance vector.
type Imatrix struct {
	Name string // one word
	W    []float32
}

// Imatrices returns the crafted importance vectors, cols weights each (a
// multiple of 512): "spread", positive weights of magnitudes 2^-3 .. 2^4
// with every 53rd zero, as in the stress sets, plus a block of 32, a
// sub-block of 16 and another block of zero weights and a block of subnormal
// ones; "zero-super-block", ones but for a first super-block of zeros. No
// vector is all zero: the reference reads uninitialised memory for some
// types there (see quantize.FailsOnZeroImportance), and q4_K stops on a NaN
// scale even for a super-block of zeros.
func Imatrices(cols int) []Imatrix {
	if cols%512 != 0 {
		panic("testrows: Imatrices needs a multiple of 512 columns")
	}
	g := New(11)
	spread := func() []float32 {
		w := make([]float32, cols)
		for i := range w {
			w[i] = float32(math.Ldexp(1+g.Uniform(), g.IntN(8)-3))
			if i%53 == 0 {
				w[i] = 0
			}
		}
		return w
	}
	a := spread()
	// zero weights: block 1, the first sub-block of 16 of super-block 1, and
	// the block of 32 in the middle of it; subnormal weights on block 4.
	for i := 0; i < cols; i++ {
		switch {
		case i >= 32 && i < 64, i >= 256 && i < 272, i >= 384 && i < 416:
			a[i] = 0
		case i >= 128 && i < 160:
			a[i] = 1e-40
		}
	}
	b := make([]float32, cols)
	for i := range b {
		b[i] = 1
		if i < 256 { // a whole super-block of zero weights
			b[i] = 0
		}
	}
	return []Imatrix{{"spread", a}, {"zero-super-block", b}}
}

// FixtureCols is the row length of the fixture rows.
const FixtureCols = 512

// FixtureRows returns the rows of the reference fixtures: Specials, then one
// row of each stress kind (seed 1) in turn until the count is a multiple of
// 16 (so that every interleaved type takes them in whole row groups).
func FixtureRows() []Row {
	rows := Specials(FixtureCols)
	g := New(1)
	for k := 0; len(rows)%16 != 0 || k < Kinds; k++ {
		x := make([]float32, FixtureCols)
		g.Stress(x, k%Kinds)
		rows = append(rows, Row{KindNames[k%Kinds], x})
	}
	return rows
}

// Weights fills w (a multiple of 32 long) with a random importance vector:
// positive weights of magnitudes 2^-3 .. 2^4, every 53rd zero, one random
// block of 32 and one random sub-block of 16 zero.
func (g *Gen) Weights(w []float32) {
	for i := range w {
		w[i] = float32(math.Ldexp(1+g.Uniform(), g.IntN(8)-3))
		if i%53 == 0 {
			w[i] = 0
		}
	}
	b := 32 * g.IntN(len(w)/32)
	clear(w[b : b+32])
	b = 16 * g.IntN(len(w)/16)
	clear(w[b : b+16])
}

// PropertyRows returns rows of cols values (a multiple of 256) for tests
// that compare two implementations: Specials, then stress rows of every kind
// in turn drawn from seed, at least n of them and as many more as make the
// count a multiple of 16.
func PropertyRows(seed uint64, n, cols int) []Row {
	rows := Specials(cols)
	g := New(seed)
	for k := 0; k < n || len(rows)%16 != 0; k++ {
		x := make([]float32, cols)
		g.Stress(x, k%Kinds)
		rows = append(rows, Row{fmt.Sprintf("%s (seed %d, row %d)", KindNames[k%Kinds], seed, k), x})
	}
	return rows
}
