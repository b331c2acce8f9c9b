//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useTrialsAVX2 selects the lane trials of blockScale (eight trial scales
// per vector, hardware FMA in the same order as nearestTable.sums); tests
// clear it to check the portable search.
var useTrialsAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// nlTrials8AVX2, nlTrials16AVX2 and nlTrials32AVX2 compute, for a grid of
// 8, 16 or 32 points per half with tables tt, the sums of nearestTable.sums
// for the eight inverse scales in ids (one per lane) over the n > 0 weights
// x, w; out receives sqxP, sq2P, sqxM, sq2M, eight lanes each. Every
// |x*id| must be below trialLimit.
//
//go:noescape
func nlTrials8AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)

//go:noescape
func nlTrials16AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)

//go:noescape
func nlTrials32AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)

// useTrials512 selects nlTrialsPair512x32 and x16 over the AVX2 trials of
// grids of 32 and 16 points (on top of useTrialsAVX2). Grids of 8 keep the
// AVX2 trials, whose seven comparisons were faster than three bisection
// steps (iq3_k 44.4 against 42.8 cpu-MB/s on the Intel Xeon).
var useTrials512 = useTrialsAVX2 && cpu.X86.HasAVX512

// nlTrialsPair512x32 and x16 are nlTrials32AVX2 and 16 for two vectors of
// inverse scales at once, ids0 and ids1, into out0 and out1, the nearest
// points found by bisection over the thresholds (the same counts, the same
// sums bit for bit).
//
//go:noescape
func nlTrialsPair512x32(tt *trialTables, x, w *float32, n int, ids0, ids1 *[8]float32, out0, out1 *[4][8]float32)

//go:noescape
func nlTrialsPair512x16(tt *trialTables, x, w *float32, n int, ids0, ids1 *[8]float32, out0, out1 *[4][8]float32)

// runTrials fills sums with the lane trials of block xb, weight for the
// inverse scales ids (nvecP plain and nvecS shifted vectors).
func (g *nlGrid) runTrials(xb, weight []float32, ids *[2][4][8]float32, nvecP, nvecS int, sums *trialSums) {
	weight = weight[:len(xb)]
	if useTrials512 && g.n >= 16 {
		g.runTrials512(xb, weight, ids, nvecP, nvecS, sums)
		return
	}
	for s, nv := range [2]int{nvecP, nvecS} {
		tt := g.trials[s]
		for v := 0; v < nv; v++ {
			// Direct calls: through a func value the arrays would escape.
			switch g.n {
			case 8:
				nlTrials8AVX2(tt, &xb[0], &weight[0], len(xb), &ids[s][v], &sums[s][v])
			case 32:
				nlTrials32AVX2(tt, &xb[0], &weight[0], len(xb), &ids[s][v], &sums[s][v])
			default:
				nlTrials16AVX2(tt, &xb[0], &weight[0], len(xb), &ids[s][v], &sums[s][v])
			}
		}
	}
}

// runTrials512 is runTrials for grids of 16 or 32 points with the vectors
// of each half taken in pairs (an odd last one paired with itself, its
// copy's sums thrown away).
func (g *nlGrid) runTrials512(xb, weight []float32, ids *[2][4][8]float32, nvecP, nvecS int, sums *trialSums) {
	var spare [4][8]float32
	for s, nv := range [2]int{nvecP, nvecS} {
		tt := g.trials[s]
		for v := 0; v < nv; v += 2 {
			ids1, out1 := &ids[s][v], &spare
			if v+1 < nv {
				ids1, out1 = &ids[s][v+1], &sums[s][v+1]
			}
			if g.n == 32 {
				nlTrialsPair512x32(tt, &xb[0], &weight[0], len(xb), &ids[s][v], ids1, &sums[s][v], out1)
			} else {
				nlTrialsPair512x16(tt, &xb[0], &weight[0], len(xb), &ids[s][v], ids1, &sums[s][v], out1)
			}
		}
	}
}
