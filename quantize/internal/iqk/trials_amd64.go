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

// runTrials fills sums with the lane trials of block xb, weight for the
// inverse scales ids (nvecP plain and nvecS shifted vectors).
func (g *nlGrid) runTrials(xb, weight []float32, ids *[2][4][8]float32, nvecP, nvecS int, sums *trialSums) {
	weight = weight[:len(xb)]
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
