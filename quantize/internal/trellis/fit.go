package trellis

import "github.com/gquant/gquant/quantize/internal/kernel"

// fitLanes is the number of trial lanes of fitTrials: the 19 trial row
// scales of a row-scale fit, padded to three vectors of eight.
const fitLanes = 24

// fitTrials runs up to fitLanes trials of a row-scale fit at once: lane t
// adds, over the row in order, wx[i]*q and (w[i]*q)*q, where q =
// dls[b*fitLanes+t]*v[i] (b = i/blockSize, every product rounded to
// float32). With fused the additions are fused multiply-adds (iq2_kt's
// fitSums), without they add the rounded products (iq3_kt's fitSumsIQ3).
// out receives the sumqx of each lane, then the sumq2.
func fitTrials(wx, w, v, dls []float32, fused bool, out *[2 * fitLanes]float32) {
	n := len(wx) / blockSize * blockSize
	w, v = w[:n], v[:n]
	dls = dls[:n/blockSize*fitLanes]
	if useAVX2 && n > 0 {
		if fused {
			fitTrialsAVX2(&wx[0], &w[0], &v[0], &dls[0], n/blockSize, out)
		} else {
			fitTrialsMulAddAVX2(&wx[0], &w[0], &v[0], &dls[0], n/blockSize, out)
		}
		return
	}
	fitTrialsGo(wx[:n], w, v, dls, fused, out)
}

// fitTrialsGo is the portable fitTrials, the reference for the assembly.
func fitTrialsGo(wx, w, v, dls []float32, fused bool, out *[2 * fitLanes]float32) {
	*out = [2 * fitLanes]float32{}
	for i := range wx {
		dl := dls[i/blockSize*fitLanes:][:fitLanes]
		for t := 0; t < fitLanes; t++ {
			q := float32(dl[t] * v[i])
			if fused {
				out[t] = kernel.FMA32(wx[i], q, out[t])
				out[fitLanes+t] = kernel.FMA32(float32(w[i]*q), q, out[fitLanes+t])
				continue
			}
			out[t] += float32(wx[i] * q)
			out[fitLanes+t] += float32(float32(w[i]*q) * q)
		}
	}
}
