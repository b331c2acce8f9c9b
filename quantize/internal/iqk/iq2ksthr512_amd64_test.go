//go:build amd64 && !purego

package iqk

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/internal/tables"
)

// iq2ksThreshold is the first float y from which (y-b)^2 < (y-a)^2 holds
// (a < b, each square rounded), found by stepping from the midpoint, and
// how many steps up in value from the rounded midpoint it lies.
func iq2ksThreshold(a, b float32) (t float32, steps int) {
	p := func(y float32) bool { return mul(y-b, y-b) < mul(y-a, y-a) }
	up, down := float32(math.Inf(1)), float32(math.Inf(-1))
	t = (a + b) * 0.5
	if p(t) {
		for p(math.Nextafter32(t, down)) {
			t = math.Nextafter32(t, down)
			steps--
		}
		return t, steps
	}
	for !p(t) {
		t = math.Nextafter32(t, up)
		steps++
	}
	return t, steps
}

// iq2ksRandomMaxv is a signed block maximum of 1e-12 to 1e14, where the
// fits count (and compare with thresholds).
func iq2ksRandomMaxv(rng *rand.Rand) float32 {
	maxv := float32(math.Pow(10, -12+26*rng.Float64()))
	if rng.IntN(2) == 0 {
		maxv = -maxv
	}
	return maxv
}

// TestIQ2KSThrWindows checks iq2ksThrGrids' candidate windows against the
// exact thresholds of random scales of both grids: each threshold must lie
// after the first candidate and at or before the last, with a margin of a
// step on either side, and the thresholds must be nested as THR_CHUNK
// needs.
func TestIQ2KSThrWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 59))
	for iter := range 200000 {
		g := iter % 2
		grid := &iq2ksThrGrids[g]
		maxv := iq2ksRandomMaxv(rng)
		s := abs32(maxv / iq2ksThrDen[g][rng.IntN(27)])
		var last float32
		for j := 0; j < 3; j++ {
			thr, steps := iq2ksThreshold(s*grid.vb[j], s*grid.vb[j+1])
			first := int(grid.start[j] * grid.dir[j]) // in steps up in value
			if steps <= first+1 || steps >= first+1+int(grid.mid[j]) {
				t.Fatalf("grid %d, scale %g, threshold %d: %d steps from the midpoint, candidates %d..%d leave no margin",
					g, s, j, steps, first, first+1+int(grid.mid[j]))
			}
			if j > 0 && !(last < thr) {
				t.Fatalf("grid %d, scale %g: thresholds %g, %g not increasing", g, s, last, thr)
			}
			last = thr
		}
	}
}

// TestIQ2KSFitsThr512MatchesCount checks the threshold fits against the
// counting fits of the same 27 scales, raw sum for raw sum and bit for bit,
// on random blocks whose maximum is one of the values, with adversarial
// values: at and one or two steps around the exact thresholds of the
// block's scales in both orientations, exactly between two scaled grid
// points, zeros and negative zeros, and zero weights. Neither may write
// past raw[27), nor anything when it reports false.
func TestIQ2KSFitsThr512MatchesCount(t *testing.T) {
	if !hasIQ2KS512 {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(61, 67))
	var xb, w [32]float32
	const sentinel = 12345
	refused := 0
	const iters = 20000
	for iter := range iters {
		g := iter % 2
		grid := &iq2ksThrGrids[g]
		maxv := iq2ksRandomMaxv(rng)
		amax := abs32(maxv)
		for i := range xb {
			f := rng.IntN(27)
			d := maxv / iq2ksThrDen[g][f]
			s, sign := abs32(d), float32(1)
			if d < 0 {
				sign = -1
			}
			if rng.IntN(2) == 0 {
				sign = -sign // the other orientation
			}
			j := rng.IntN(3)
			switch k := rng.IntN(10); {
			case k < 4:
				thr, _ := iq2ksThreshold(s*grid.vb[j], s*grid.vb[j+1])
				for range rng.IntN(5) - 2 {
					thr = math.Nextafter32(thr, float32(math.Inf(1)))
				}
				for range 2 - rng.IntN(5) {
					thr = math.Nextafter32(thr, float32(math.Inf(-1)))
				}
				xb[i] = sign * thr
			case k == 4:
				xb[i] = sign * (s*grid.vb[j] + s*grid.vb[j+1]) * 0.5
			case k == 5:
				xb[i] = float32(math.Copysign(0, float64(1-2*rng.IntN(2))))
			default:
				xb[i] = maxv * float32(2*rng.Float64()-1)
			}
			if abs32(xb[i]) > amax {
				xb[i] = maxv
			}
			w[i] = float32(rng.ExpFloat64())
			if rng.IntN(8) == 0 {
				w[i] = 0
			}
		}
		xb[rng.IntN(32)] = maxv
		var got, want [28][4][8]float32
		for f := range got {
			for s := range got[f] {
				for l := range got[f][s] {
					got[f][s][l], want[f][s][l] = sentinel, sentinel
				}
			}
		}
		ok := iq2ksFitsThr512(&xb[0], &w[0], maxv, &iq2ksThrDen[g], grid, &got[0])
		iq2ksFitsCount512(&xb[0], &w[0], maxv, &iq2ksTrialDen[1+27*g], 27, &iq2ksGrids[g], &want[0])
		for f := range got {
			for s := range got[f] {
				for l := range got[f][s] {
					a, b := math.Float32bits(got[f][s][l]), math.Float32bits(want[f][s][l])
					if !ok {
						b = math.Float32bits(sentinel)
					}
					if a != b {
						t.Fatalf("iter %d (grid %d, maxv %g, ok %v) fit %d sum %d lane %d: thresholds %g (%#x), counting %g (%#x)",
							iter, g, maxv, ok, f, s, l, got[f][s][l], a, want[f][s][l], b)
					}
				}
			}
		}
		if !ok {
			refused++
		}
	}
	// The windows hold every threshold TestIQ2KSThrWindows met, so a
	// refusal here means a window too narrow for some scale.
	if refused > 0 {
		t.Errorf("%d of %d blocks refused: a threshold outside its window", refused, iters)
	}
}

// TestIQ2KSThrRefusalCounts narrows the windows until most blocks are
// refused and requires the rows the portable code writes: the caller's
// fallback to counting gives the same bytes.
func TestIQ2KSThrRefusalCounts(t *testing.T) {
	if !hasIQ2KS512 {
		t.Skip("no AVX-512")
	}
	saved := iq2ksThrGrids
	defer func() { iq2ksThrGrids = saved }()
	for g := range iq2ksThrGrids {
		for j := range iq2ksThrGrids[g].start {
			// From the midpoint to two steps above: the thresholds at
			// the midpoint are refused.
			iq2ksThrGrids[g].start[j], iq2ksThrGrids[g].mid[j] = 0, 1
		}
	}
	rng := rand.New(rand.NewPCG(71, 73))
	var xb, w [32]float32
	var raw [28][4][8]float32
	refused := 0
	for range 200 {
		maxv := iq2ksRandomMaxv(rng)
		for i := range xb {
			xb[i], w[i] = maxv*float32(2*rng.Float64()-1), 1
		}
		if !iq2ksFitsThr512(&xb[0], &w[0], maxv, &iq2ksThrDen[0], &iq2ksThrGrids[0], &raw[0]) {
			refused++
		}
	}
	if refused < 100 {
		t.Fatalf("narrow windows refused %d of 200 blocks; the test needs most", refused)
	}

	const n = 4096
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 0.02)
	}
	got := make([]byte, 2+n/256*70)
	want := make([]byte, len(got))
	quantizeIQ2KS(got, x, nil)
	restore := setAssembly(0)
	quantizeIQ2KS(want, x, nil)
	restore()
	if !bytes.Equal(got, want) {
		t.Fatal("an iq2_ks row with refused threshold fits differs from the portable row")
	}
}

// TestIQ2KSThrGrids checks the grids' tables against the values they come
// from.
func TestIQ2KSThrGrids(t *testing.T) {
	for g, grid := range iq2ksThrGrids {
		v := tables.IQ2NLValues[4*g : 4*g+4]
		for j := range v {
			if grid.vb[j] != float32(v[j]) {
				t.Errorf("grid %d: vb[%d] = %g, want %d", g, j, grid.vb[j], v[j])
			}
		}
		if q := grid.q; q[0] != grid.vb[0] || q[1] != grid.vb[1] || q[1]+q[2] != grid.vb[2] || q[1]+q[2]+q[3] != grid.vb[3] {
			t.Errorf("grid %d: q %v does not build %v", g, q, grid.vb)
		}
		for j := 0; j < 3; j++ {
			if mid := grid.vb[j] + grid.vb[j+1]; (mid < 0) != (grid.dir[j] < 0) {
				t.Errorf("grid %d threshold %d: dir %d for midpoint sign of %g", g, j, grid.dir[j], mid)
			}
		}
	}
	for g := range iq2ksThrDen {
		for i, d := range iq2ksThrDen[g] {
			if d >= 0 || d != iq2ksTrialDen[1+27*g+min(i, 26)] {
				t.Errorf("iq2ksThrDen[%d][%d] = %g", g, i, d)
			}
		}
	}
}
