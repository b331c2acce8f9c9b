package iquant

import (
	"encoding/binary"
	"unsafe"

	"github.com/gquant/gquant/quantize/internal/kernel"

	"github.com/gquant/gquant/formats"
)

// splitSigns makes xval = |xb| and returns the sign bits of each group of 8.
// With evenParity, groups with an odd number of negatives flip the sign of
// their least important element (smallest weight*x^2) so that 7 stored bits
// suffice; the returned bits are then masked to 7.
func splitSigns(xb, weight, xval []float32, signs []uint8, evenParity bool) {
	for k := range signs {
		var s uint8
		nflip := 0
		for i := 0; i < 8; i++ {
			v := xb[8*k+i]
			if v >= 0 {
				xval[8*k+i] = v
			} else {
				xval[8*k+i] = -v
				nflip++
				s |= 1 << i
			}
		}
		if evenParity {
			if nflip%2 != 0 {
				imin := 0
				min := float32(weight[8*k]*xb[8*k]) * xb[8*k]
				for i := 1; i < 8; i++ {
					if ax := float32(weight[8*k+i]*xb[8*k+i]) * xb[8*k+i]; ax < min {
						min, imin = ax, i
					}
				}
				xval[8*k+imin] = -xval[8*k+imin]
				s ^= 1 << imin
			}
			s &= 127
		}
		signs[k] = s
	}
}

// levelOf is the reference's nearest_int(0.5f*(id*x - 1)) clamped to [0, maxL].
func levelOf(id, x float32, maxL int) int8 {
	return int8(max(0, min(maxL, round(0.5*kernel.FMA32(id, x, -1)))))
}

// levelsOf is levelOf over a group: L[i] = levelOf(id, x[i], maxL).
func levelsOf(L []int8, id float32, x []float32, maxL int) {
	L = L[:len(x)]
	if useNeighbourAVX2 && len(x)%8 == 0 && len(x) > 0 {
		levelsAVX2(&L[0], id, &x[0], len(x), maxL)
		return
	}
	for i, v := range x {
		r, tie := fmaBits(id, v, -1)
		f := float32(r)
		if tie {
			f = kernel.FMA32(id, v, -1)
		}
		L[i] = int8(max(0, min(maxL, round(0.5*f))))
	}
}

// sumsOdd returns sum w*x*q and sum w*q*q for q = 2L+1.
func sumsOdd(weight, xval []float32, L []int8) (sumqx, sumq2 float32) {
	xval, L = xval[:len(weight)], L[:len(weight)]
	if useNeighbourAVX2 && len(weight) > 0 {
		return sumsOddFMA(&weight[0], &xval[0], &L[0], len(weight))
	}
	for i, w := range weight {
		q := float32(2*int(L[i]) + 1)
		wx, wq := w*xval[i], w*q
		r, tie := fmaBits(wx, q, sumqx)
		if tie {
			sumqx = kernel.FMA32(wx, q, sumqx)
		} else {
			sumqx = float32(r)
		}
		r, tie = fmaBits(wq, q, sumq2)
		if tie {
			sumq2 = kernel.FMA32(wq, q, sumq2)
		} else {
			sumq2 = float32(r)
		}
	}
	return
}

// trialSumsIQ3 sets sums[t], sums[32+t] to sumsOdd of the level vector
// rows[t] (32 levels) for the first n rows (the vector kernel computes all
// 32, the ones past the caller's last are ignored).
func trialSumsIQ3(weight, xval []float32, rows *[32][32]int8, n int, sums *[64]float32) {
	weight, xval = weight[:32], xval[:32]
	if useNeighbourAVX2 {
		var cols [32][32]int8
		sumsOddTrialsAVX2(&weight[0], &xval[0], rows, &cols, sums)
		return
	}
	var cache oddSumsCache
	for t := range rows[:n] {
		sums[t], sums[32+t] = cache.sums(weight, xval, rows[t][:])
	}
}

// searchTrials is findBestNeighbours for the off-grid groups of several
// trials of one block at once, each job at its own trial scale (its scale
// field): job i puts its group's levels into rows[trial[i]]. One batch gives
// the vector search independent jobs to overlap, where a call per trial
// gives it one or two. It reports false where a group has no neighbour at
// a finite distance (see findBestNeighbours).
func (g *codeGrid) searchTrials(jobs []nbJob, trial []uint8, xval, weight []float32, rows *[32][32]int8) bool {
	trial = trial[:len(jobs)]
	if !useNeighbourAVX2 {
		for i, j := range jobs {
			o := int(j.group) * g.dim
			if g.findBestNeighbour(int(j.u), xval[o:o+g.dim], weight[o:o+g.dim], j.scale, rows[trial[i]][o:]) < 0 {
				return false
			}
		}
		return true
	}
	g.searchJobsScaled(xval, weight, &g.qvec, jobs)
	for i := range jobs {
		j := &jobs[i]
		if j.pos < 0 {
			return false
		}
		g.setLevels(g.laneIndex(int(j.laneOff+j.pos)), rows[trial[i]][int(j.group)*g.dim:])
	}
	return true
}

// oddSumsCache remembers the sumsOdd of the last level vector of a block's
// trial-scale loop: neighbouring trial scales often give the same levels, and
// then the same sums (weights and values are fixed within the block).
type oddSumsCache struct {
	L      [32]byte
	n      int
	qx, q2 float32
	valid  bool
}

func (c *oddSumsCache) sums(weight, xval []float32, L []int8) (sumqx, sumq2 float32) {
	n := len(weight)
	cur := unsafe.Slice((*byte)(unsafe.Pointer(&L[:n][0])), n)
	if c.valid && c.n == n && string(cur) == string(c.L[:n]) {
		return c.qx, c.q2
	}
	c.qx, c.q2 = sumsOdd(weight, xval, L)
	copy(c.L[:], cur)
	c.n, c.valid = n, true
	return c.qx, c.q2
}

func maxOf(v []float32) float32 {
	m := v[0]
	for _, x := range v[1:] {
		if !(m > x) {
			m = x
		}
	}
	return m
}

// blockWeights fills weight for one sub-block: the importance weight times
// sqrt(sigma2 + x^2), or noImatrix(x) without an importance matrix.
func blockWeights(weight, xb, qw []float32, sigma2 float32, noImatrix func(x float32) float32) {
	if qw != nil {
		qw = qw[:len(xb)]
		for i, v := range xb {
			r, tie := fmaBits(v, v, sigma2)
			f := float32(r)
			if tie {
				f = kernel.FMA32(v, v, sigma2)
			}
			weight[i] = qw[i] * sqrt(f)
		}
		return
	}
	for i, v := range xb {
		weight[i] = noImatrix(v)
	}
}

// quantizeIQ3XXSRow is quantize_row_iq3_xxs_impl with the 256-point grid. It
// returns errNoNeighbour where the values overflow its searches.
func quantizeIQ3XXSRow(dst []byte, x, imatrix []float32) error {
	const kMaxQ = 8
	g := iq3xxsGrid()
	var scales [8]float32
	var weight, xval, waux [32]float32
	var L [32]int8
	var isOnGrid [8]bool
	var jobs [31 * 8]nbJob
	var jobTrial [31 * 8]uint8
	var signs [4]uint8
	var q3 [96]byte
	var trialL [32][32]int8
	var trialOnGrid [32][8]bool
	var trialSums [64]float32
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[98*ibl : 98*ibl+98]
		clear(q3[:])
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := 2 * sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < 8; ib++ {
			xb := xbl[32*ib : 32*ib+32]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+32*ib:]
			}
			blockWeights(weight[:], xb, qw, sigma2, func(v float32) float32 { return v * v })
			for i := range waux {
				waux[i] = sqrt(weight[i])
			}
			splitSigns(xb, weight[:], xval[:], signs[:], true)
			max := maxOf(xval[:])
			if max < 1e-8 {
				scales[ib] = 0
				clear(L[:])
				continue
			}
			var best float32
			scale := max / (2*kMaxQ - 1)
			// The 31 trial scales' level vectors first (the neighbour
			// searches of all their off-grid groups in one batch), then
			// their sums (all at once, one trial per lane, when the kernel
			// exists), then the reference's scan over the trials in order.
			nj := 0
			for is := -15; is <= 15; is++ {
				t := is + 15
				id := kernel.FMA32(float32(is), 0.2, 2*kMaxQ-1) / max
				thisScale := 1 / id
				levelsOf(trialL[t][:], id, xval[:], kMaxQ-1)
				for k := 0; k < 8; k++ {
					u := g.pack(trialL[t][4*k:])
					trialOnGrid[t][k] = g.kmap[u] >= 0
					if !trialOnGrid[t][k] {
						jobs[nj] = g.job(k, u)
						jobs[nj].scale = thisScale
						jobTrial[nj] = uint8(t)
						nj++
					}
				}
			}
			if !g.searchTrials(jobs[:nj], jobTrial[:nj], xval[:], waux[:], &trialL) {
				return errNoNeighbour
			}
			trialSumsIQ3(weight[:], xval[:], &trialL, 31, &trialSums)
			for t := 0; t < 31; t++ {
				sumqx, sumq2 := trialSums[t], trialSums[32+t]
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = scale * sumqx
					L = trialL[t]
					isOnGrid = trialOnGrid[t]
				}
			}
			offGrid := 0
			for _, on := range isOnGrid {
				if !on {
					offGrid++
				}
			}
			if offGrid > 0 && scale > 0 {
				if !g.snapGroups(8, scale, kMaxQ-1, xval[:], waux[:], L[:], isOnGrid[:]) {
					return errNoNeighbour
				}
				sumqx, sumq2 := sumsOdd(weight[:], xval[:], L[:])
				if sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			if scale < 0 {
				scale = -scale
				for k := range signs {
					signs[k] = ^signs[k] & 127
				}
			}
			for k := 0; k < 8; k++ {
				q3[8*ib+k] = uint8(g.kmap[g.pack(L[4*k:])])
			}
			sas := uint32(signs[0]) | uint32(signs[1])<<7 | uint32(signs[2])<<14 | uint32(signs[3])<<21
			binary.LittleEndian.PutUint32(q3[64+4*ib:], sas)
			scales[ib] = scale
			maxScale = max32(maxScale, scale)
		}
		if maxScale == 0 {
			clear(blk)
			continue
		}
		d := maxScale / 31
		putF16(blk[0:2], d*1.0125)
		id := 1 / d
		for ib := 0; ib < 8; ib++ {
			l := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			sas := binary.LittleEndian.Uint32(q3[64+4*ib:])
			binary.LittleEndian.PutUint32(q3[64+4*ib:], sas|uint32(l)<<28)
		}
		copy(blk[2:], q3[:])
	}
	return nil
}

// max32 is the reference's MAX(a, b).
func max32(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// quantizeIQ3SRow is quantize_row_iq3_s_impl with sub-blocks of 32.
//
// Like the reference, an all-zero sub-block does not advance the write
// positions of the grid indices and signs: the following sub-blocks land one
// slot early and the last slots stay zero.
//
// It returns errNoNeighbour where the values overflow its searches.
func quantizeIQ3SRow(dst []byte, x, imatrix []float32) error {
	const kMaxQ = 8
	const bs, bs4, bs8 = 32, 8, 4
	g := iq3sGrid()
	var scales [8]float32
	var weight, xval, waux [bs]float32
	var L [bs]int8
	var isOnGrid [bs4]bool
	var jobs [19 * bs4]nbJob
	var jobTrial [19 * bs4]uint8
	var trialL [32][32]int8
	var trialOnGrid [19][bs4]bool
	var trialSums [64]float32
	var signs [bs8]uint8
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[110*ibl : 110*ibl+110]
		clear(blk)
		qs, qh, sg, sc := blk[2:66], blk[66:74], blk[74:106], blk[106:110]
		qsPos, signsPos := 0, 0
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := 2 * sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < qkK/bs; ib++ {
			xb := xbl[bs*ib : bs*ib+bs]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+bs*ib:]
			}
			blockWeights(weight[:], xb, qw, sigma2, func(v float32) float32 { return v * v })
			for i := range waux {
				waux[i] = sqrt(weight[i])
			}
			splitSigns(xb, weight[:], xval[:], signs[:], false)
			max := maxOf(xval[:])
			if max == 0 {
				scales[ib] = 0
				continue
			}
			var best float32
			scale := max / (2*kMaxQ - 1)
			isOnGrid = [bs4]bool{}
			// As in iq3_xxs: the 19 trials' level vectors (one batch of
			// neighbour searches), their sums, then the scan in order.
			nj := 0
			for is := -9; is <= 9; is++ {
				t := is + 9
				id := kernel.FMA32(float32(is), 0.2, 2*kMaxQ-1) / max
				thisScale := 1 / id
				levelsOf(trialL[t][:], id, xval[:], kMaxQ-1)
				for k := 0; k < bs4; k++ {
					u := g.pack(trialL[t][4*k:])
					trialOnGrid[t][k] = g.kmap[u] >= 0
					if !trialOnGrid[t][k] {
						jobs[nj] = g.job(k, u)
						jobs[nj].scale = thisScale
						jobTrial[nj] = uint8(t)
						nj++
					}
				}
			}
			if !g.searchTrials(jobs[:nj], jobTrial[:nj], xval[:], waux[:], &trialL) {
				return errNoNeighbour
			}
			trialSumsIQ3(weight[:], xval[:], &trialL, 19, &trialSums)
			for t := 0; t < 19; t++ {
				sumqx, sumq2 := trialSums[t], trialSums[32+t]
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = scale * sumqx
					L = [bs]int8(trialL[t][:])
					isOnGrid = trialOnGrid[t]
				}
			}
			offGrid := 0
			for _, on := range isOnGrid {
				if !on {
					offGrid++
				}
			}
			if offGrid > 0 && scale > 0 {
				// Unlike iq3_xxs, every group is re-fitted, on the grid or not.
				if !g.snapGroups(bs4, scale, kMaxQ-1, xval[:], waux[:], L[:], nil) {
					return errNoNeighbour
				}
				sumqx, sumq2 := sumsOdd(weight[:], xval[:], L[:])
				if sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			if scale < 0 {
				scale = -scale
				for k := range signs {
					signs[k] = ^signs[k]
				}
			}
			for k := 0; k < bs4; k++ {
				gi := int(g.kmap[g.pack(L[4*k:])])
				qs[qsPos+k] = uint8(gi)
				qh[(ib*bs4+k)/8] |= uint8(gi>>8) << ((ib*bs4 + k) % 8)
			}
			qsPos += bs4
			copy(sg[signsPos:signsPos+bs8], signs[:])
			signsPos += bs8
			scales[ib] = scale
			maxScale = max32(maxScale, scale)
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		putF16(blk[0:2], d*1.033)
		id := 1 / d
		for ib := 0; ib < qkK/bs; ib += 2 {
			l1 := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			l2 := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib+1], -1))))
			sc[ib/2] = uint8(l1 | l2<<4)
		}
	}
	return nil
}

var _ = formats.IQ3_S

// sumSquaresUnfused is sumSquares where GCC kept the loop and, tuned to
// avoid FMA chains in loop-carried sums, vectorized the squares and added
// them one by one in order: every square is rounded before it is added.
func sumSquaresUnfused(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s
}
