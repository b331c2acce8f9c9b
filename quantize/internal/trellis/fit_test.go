package trellis

import (
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFitTrials checks fitTrials (the assembly where the CPU has it) bit for
// bit against the portable lanes, fused and not, and each unfused lane
// against fitSumsIQ3, the sequential sums it replaces, on random rows.
func TestFitTrials(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 40; iter++ {
		n := blockSize * (1 + rng.IntN(16))
		x, w, v := make([]float32, n), make([]float32, n), make([]float32, n)
		wx := make([]float32, n)
		scale := float32(math.Pow(10, rng.Float64()*4-2))
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * scale
			w[i] = float32(rng.ExpFloat64())
			v[i] = float32(rng.IntN(64))
			if rng.IntN(50) == 0 {
				w[i] = 0
			}
			wx[i] = float32(w[i] * abs32(x[i]))
		}
		scales := make([]float32, n/blockSize)
		maxScale := float32(0)
		for ib := range scales {
			scales[ib] = float32(rng.Float64()) * scale
			maxScale = max(maxScale, scales[ib])
		}
		dls := make([]float32, len(scales)*fitLanes)
		for ib, s := range scales {
			for tr := 0; tr < 19; tr++ {
				dls[ib*fitLanes+tr] = float32(blockScaleIQ3(kernel.FMA32(float32(tr-9), 0.2, 15)/maxScale, s))
			}
		}
		for _, fused := range []bool{true, false} {
			var got, want [2 * fitLanes]float32
			fitTrials(wx, w, v, dls, fused, &got)
			fitTrialsGo(wx, w, v, dls, fused, &want)
			for k := range got {
				if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
					t.Fatalf("iter %d fused %v lane %d: %v, portable %v", iter, fused, k, got[k], want[k])
				}
			}
		}
		var got [2 * fitLanes]float32
		fitTrials(wx, w, v, dls, false, &got)
		for tr := 0; tr < 19; tr++ {
			id := kernel.FMA32(float32(tr-9), 0.2, 15) / maxScale
			sqx, sq2 := fitSumsIQ3(x, w, scales, v, id)
			if math.Float32bits(sqx) != math.Float32bits(got[tr]) || math.Float32bits(sq2) != math.Float32bits(got[fitLanes+tr]) {
				t.Fatalf("iter %d trial %d: lanes (%v, %v), fitSumsIQ3 (%v, %v)", iter, tr, got[tr], got[fitLanes+tr], sqx, sq2)
			}
		}
	}
}

// TestSetWeightsAssembly checks setWeights with the assembly against the
// portable loops, bit for bit, with and without importance data and with
// both forms of x*x (roundSq), on rows with blocks of every scale, zeros,
// tiny values near the eps2 floors and all-zero importance blocks.
func TestSetWeightsAssembly(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	defer func() { useAVX2 = true }()
	r := rand.New(rand.NewPCG(11, 12))
	const n = 4 * superBlock
	for iter := 0; iter < 400; iter++ {
		x := make([]float32, n)
		qw := make([]float32, n)
		for i := range x {
			scale := float32(math.Ldexp(1, -r.IntN(30)))
			switch r.IntN(10) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = float32(r.NormFloat64()) * 1e-8
			default:
				x[i] = float32(r.NormFloat64()) * scale
			}
			qw[i] = float32(r.ExpFloat64())
			if (i/blockSize)%7 == iter%7 {
				qw[i] = 0
			}
		}
		for _, im := range [][]float32{qw, nil} {
			for _, roundSq := range []bool{false, true} {
				want := make([]float32, n)
				got := make([]float32, n)
				useAVX2 = false
				setWeights(1.5, x, im, want, roundSq)
				useAVX2 = true
				setWeights(1.5, x, im, got, roundSq)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("iter %d (importance %v, roundSq %v) weight %d: %v, portable %v", iter, im != nil, roundSq, i, got[i], want[i])
					}
				}
			}
		}
	}
}
