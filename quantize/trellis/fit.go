package trellis

// fitLanes is the number of trial lanes of fitTrials: the 19 trial row
// scales of a row-scale fit, padded to three vectors of eight.
const fitLanes = 24

// fitTrials runs up to fitLanes trials of a row-scale fit at once: lane t
// adds, over the row in order, wx[i]*q and (w[i]*q)*q with the fused
// multiply-add, where q = dls[b*fitLanes+t]*v[i] (b = i/blockSize, every
// product rounded to float32). out receives the sumqx of each lane, then
// the sumq2. These are the sums of fitSums and fitSumsIQ3, whose trials
// differ only in their block scales.
func fitTrials(wx, w, v, dls []float32, out *[2 * fitLanes]float32) {
	n := len(wx) / blockSize * blockSize
	w, v = w[:n], v[:n]
	dls = dls[:n/blockSize*fitLanes]
	if useAVX2 && n > 0 {
		fitTrialsAVX2(&wx[0], &w[0], &v[0], &dls[0], n/blockSize, out)
		return
	}
	fitTrialsGo(wx[:n], w, v, dls, out)
}

// fitTrialsGo is the portable fitTrials, the reference for the assembly.
func fitTrialsGo(wx, w, v, dls []float32, out *[2 * fitLanes]float32) {
	*out = [2 * fitLanes]float32{}
	for i := range wx {
		dl := dls[i/blockSize*fitLanes:][:fitLanes]
		for t := 0; t < fitLanes; t++ {
			q := float32(dl[t] * v[i])
			out[t] = fma32(wx[i], q, out[t])
			out[fitLanes+t] = fma32(float32(w[i]*q), q, out[fitLanes+t])
		}
	}
}
