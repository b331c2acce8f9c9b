package iquant

import (
	"encoding/binary"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"math"

	"github.com/gquant/gquant/formats"
)

const iq1Delta = formats.IQ1SDelta

// The three iq1 levels with the shift added (xP) or subtracted (xM).
var (
	xP = [3]float32{-1 + iq1Delta, iq1Delta, 1 + iq1Delta}
	xM = [3]float32{-1 - iq1Delta, -iq1Delta, 1 - iq1Delta}
)

// iq1Scratch is the working memory of the iq1 block searches.
type iq1Scratch struct {
	order      [32]int
	sumx, sumw [48]float32 // prefix sums, readable to n+15 for the split scores
	sumx2      [32]float32 // iq1_m's second half, readable to index 31
	sumw2      [32]float32
	splits     [iq1sSplitLen]float32
	scores     [iq1ScoresLen]float32 // splitScanScores scratch
}

// iq1LaneValues are the level values of xP and xM in the vector search's
// table lanes (level l of coordinate c in lane (c<<2 + l) & 7).
var iq1LaneValues = [2][8]float32{
	{xP[0], xP[1], xP[2], 0, xP[0], xP[1], xP[2], 0},
	{xM[0], xM[1], xM[2], 0, xM[0], xM[1], xM[2], 0},
}

// iq1Lanes returns the level values xx in the vector search's lanes.
func iq1Lanes(xx *[3]float32) *[8]float32 {
	switch xx {
	case &xP:
		return &iq1LaneValues[0]
	case &xM:
		return &iq1LaneValues[1]
	}
	return &[8]float32{xx[0], xx[1], xx[2], 0, xx[0], xx[1], xx[2], 0}
}

// findBestNeighbour2 is iq1_find_best_neighbour2: the neighbour of u closest
// to xval at scale, with level l meaning value xx[l]. Its fallback over the
// whole grid runs only when every distance is NaN, which finite inputs never give.
func findBestNeighbour2(g *codeGrid, u int, xval, weight []float32, scale float32, xx *[3]float32, L []int8) int {
	// As in codeGrid.findBestNeighbour: diff and weight*diff per coordinate
	// and level once, then one fused add per coordinate and neighbour,
	// stopping a neighbour's sum early once it cannot win (valid when no
	// weight is negative).
	if useNeighbourAVX2 {
		jobs := [1]nbJob{g.job(0, u)}
		g.searchJobs(xval, weight, scale, iq1Lanes(xx), jobs[:])
		idx := g.laneIndex(int(jobs[0].laneOff + max(jobs[0].pos, 0)))
		g.setLevels(idx, L)
		return idx
	}
	var diffs, wdiffs [8 * 4]float32
	xval, weight = xval[:8], weight[:8]
	nonNegative := true
	for i, x := range xval {
		w := weight[i]
		nonNegative = nonNegative && w >= 0
		for l, q := range xx {
			r, tie := fmaBits(scale, q, -x)
			d := float32(r)
			if tie {
				d = kernel.FMA32(scale, q, -x)
			}
			diffs[i*4+l&31] = d
			wdiffs[i*4+l&31] = w * d
		}
	}
	best := float32(math.MaxFloat32)
	idx := -1
	for _, n := range g.neighboursOf(u) {
		p := g.levels[int(n)*8 : int(n)*8+8]
		var d2 float32
		for i, l := range p {
			j := i*4 + int(l&3)
			r, tie := fmaBits(wdiffs[j], diffs[j], d2)
			if tie {
				d2 = kernel.FMA32(wdiffs[j], diffs[j], d2)
			} else {
				d2 = float32(r)
			}
			if d2 >= best && nonNegative {
				break
			}
		}
		if d2 < best {
			best, idx = d2, int(n)
		}
	}
	if idx < 0 {
		idx = int(g.neighboursOf(u)[0])
	}
	g.setLevels(idx, L)
	return idx
}

// splitScore returns sum q*x and sum q*q over the three runs [0,i1), [i1,i2),
// [i2,n) of the sorted prefix sums with the levels v, in the arithmetic GCC
// emitted for the reference (checked against its object code): the products
// of the first run are hoisted out of the inner i2 loop and rounded on their
// own, the product of the middle run is shared between both shifts and
// rounded too, and only the last product is fused: for sum q*q only with the
// minus shift (plus: fusedLast false).
func splitScore(sx, sw []float32, i1, i2, n int, v *[3]float32, fusedLast bool) (sumqx, sumq2 float32) {
	aqx := float32((sx[i1] - sx[0]) * v[0])
	aq2 := float32(float32((sw[i1]-sw[0])*v[0]) * v[0])
	cx, c0 := sx[n]-sx[i2], aqx+float32((sx[i2]-sx[i1])*v[1])
	r, tie := fmaBits(cx, v[2], c0)
	sumqx = float32(r)
	if tie {
		sumqx = kernel.FMA32(cx, v[2], c0)
	}
	mid := aq2 + float32(float32((sw[i2]-sw[i1])*v[1])*v[1])
	last := float32((sw[n] - sw[i2]) * v[2])
	if fusedLast {
		r, tie = fmaBits(last, v[2], mid)
		sumq2 = float32(r)
		if tie {
			sumq2 = kernel.FMA32(last, v[2], mid)
		}
	} else {
		sumq2 = mid + float32(last*v[2])
	}
	return
}

// iq1sProcessBlock is iq1s_process_1block: the best shifted ternary fit of a
// block of 32 (4 groups of 8) on the iq1 grid. Returns the scale, the grid
// index of each group of 8 and the shift (+1 or -1); ok is false where the
// reference aborts: no split has sumq2 > 0, which happens when every weight
// of the block is 0 (GGML_ASSERT(besti1 >= 0 && besti2 >= 0 && best_shift != 0)).
func iq1sProcessBlock(s *iq1Scratch, xb, weight []float32, L []int8, index []uint16) (scale float32, shift int, ok bool) {
	bs := len(xb)
	var max float32 = abs(xb[0])
	for _, v := range xb[1:] {
		max = max32(max, abs(v))
	}
	if max < 1e-12 {
		for k := 0; k < bs/8; k++ {
			index[k] = 0
		}
		return 0, 1, true
	}
	g := iq1sGrid()
	order := sortedOrder(xb, s.order[:])
	if useNeighbourAVX2 {
		_, _ = weight[bs-1], s.sumx[bs]
		prefixFMA(&xb[0], &weight[0], &order[0], bs, &s.sumx[0], &s.sumw[0])
	} else {
		sumx, sumw := s.sumx[:bs+1], s.sumw[:bs+1]
		sumx[0], sumw[0] = 0, 0
		for j, i := range order {
			sumx[j+1] = kernel.FMA32(weight[i], xb[i], sumx[j])
			sumw[j+1] = sumw[j] + weight[i]
		}
	}
	bestScore := -float32(1.1754943508222875e-38) // -FLT_MIN
	scale = max
	st := splitState{best: bestScore, scale: scale, i1: -1, i2: -1, slot: -1}
	if !(useAVX512 && bs == 32 && iq1sSplitSearch512(s.sumx[:], s.sumw[:], s.scores[:], &st)) {
		iq1sSplitSums(s.sumx[:], s.sumw[:], bs, &s.splits)
		splitScanScores(s.splits[:], s.scores[:], bs, 2, &st)
	}
	scale = st.scale
	besti1, besti2, bestShift := int(st.i1), int(st.i2), 0
	switch st.slot {
	case 0:
		bestShift = 1
	case 1:
		bestShift = -1
	default:
		return 0, 0, false
	}
	for j, i := range order {
		switch {
		case j < besti1:
			L[i] = 0
		case j < besti2:
			L[i] = 1
		default:
			L[i] = 2
		}
	}
	if scale < 0 {
		for j := range L[:bs] {
			L[j] = 2 - L[j]
		}
		scale, bestShift = -scale, -bestShift
	}
	xx := &xP
	if bestShift != 1 {
		xx = &xM
	}
	allOnGrid := true
	var jobs [4]nbJob
	nj := 0
	for k := 0; k < bs/8; k++ {
		u := g.pack(L[8*k:])
		gi := int(g.kmap[u])
		if gi < 0 {
			allOnGrid = false
			if useNeighbourAVX2 {
				// All groups share the scale and shift: one search call.
				jobs[nj] = g.job(k, u)
				nj++
				continue
			}
			gi = findBestNeighbour2(g, u, xb[8*k:8*k+8], weight[8*k:8*k+8], scale, xx, L[8*k:])
		}
		index[k] = uint16(gi)
	}
	if nj > 0 {
		g.searchJobs(xb, weight, scale, iq1Lanes(xx), jobs[:nj])
		for _, j := range jobs[:nj] {
			pos := j.pos
			if pos < 0 { // every distance NaN, as findBestNeighbour2
				pos = 0
			}
			gi := g.laneIndex(int(j.laneOff + pos))
			g.setLevels(gi, L[8*j.group:])
			index[j.group] = uint16(gi)
		}
	}
	if !allOnGrid {
		var sumqx, sumq2 float32
		for k := 0; k < bs/8; k++ {
			p := g.points[int(index[k])*8 : int(index[k])*8+8]
			for j, pv := range p {
				w := weight[8*k+j]
				q := xx[(pv-1)/2]
				wq := w * q
				sumqx = kernel.FMA32(wq, xb[8*k+j], sumqx)
				sumq2 = kernel.FMA32(wq, q, sumq2)
			}
		}
		if sumqx > 0 && sumq2 > 0 {
			scale = sumqx / sumq2
		}
	}
	return scale, bestShift, true
}

// quantizeIQ1SRow is quantize_row_iq1_s_impl (an importance matrix is
// required), except where the reference aborts: a block of 32 whose
// importance is all 0 (and whose values are not negligible) is quantized with
// uniform importance, and the row reported as substituted. Where that finds
// no split either (the values overflow its sums) it returns errIQ1SNoSplit.
func quantizeIQ1SRow(dst []byte, x, imatrix []float32) (substituted bool, err error) {
	var s iq1Scratch
	var scales [8]float32
	var weight [32]float32
	var L [32]int8
	var index [4]uint16
	var shifts [8]int
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[50*ibl : 50*ibl+50]
		clear(blk)
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := 2 * sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < 8; ib++ {
			xb := xbl[32*ib : 32*ib+32]
			blockWeights(weight[:], xb, imatrix[qkK*ibl+32*ib:], sigma2, nil)
			var ok bool
			scales[ib], shifts[ib], ok = iq1sProcessBlock(&s, xb, weight[:], L[:], index[:])
			if !ok {
				// The reference aborts here. Its iq1_s_r4 and iq1_m
				// ignore the importance of such a block ("it is better
				// to simply ignore the imatrix"), as callers do for an
				// all-zero importance vector: so do we, with uniform
				// importance and this row's weight formula.
				substituted = true
				blockWeights(weight[:], xb, unitImportance[:32], sigma2, nil)
				scales[ib], shifts[ib], ok = iq1sProcessBlock(&s, xb, weight[:], L[:], index[:])
				if !ok {
					return false, errIQ1SNoSplit
				}
			}
			var h uint16
			for k := 0; k < 4; k++ {
				blk[2+4*ib+k] = uint8(index[k])
				h |= (index[k] >> 8) << (3 * k)
			}
			binary.LittleEndian.PutUint16(blk[34+2*ib:], h)
			maxScale = max32(maxScale, scales[ib])
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 15
		putF16(blk[0:2], d*1.125)
		id := 1 / d
		for ib := 0; ib < 8; ib++ {
			l := max(0, min(7, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			if shifts[ib] == -1 {
				l |= 8
			}
			h := binary.LittleEndian.Uint16(blk[34+2*ib:])
			binary.LittleEndian.PutUint16(blk[34+2*ib:], h|uint16(l)<<12)
		}
	}
	return substituted, nil
}

// iq1mProcessBlock is iq1m_process_1block for a block of 16: the two groups
// of 8 may each take the plus or minus shift. Returns the scale, the grid
// index of both groups and the shift combination (0: ++, 1: +-, 2: -+, 3: --).
// ok is false where no split scores above zero (the values overflow the
// scores), where the reference asserts best_k >= 0.
func iq1mProcessBlock(s *iq1Scratch, xb, weight []float32, L []int8, index []uint16) (scale float32, bestK int, ok bool) {
	const bs = 16
	g := iq1sGrid()
	order := sortedOrder(xb[:bs], s.order[:])
	sw1, sw2, sx1, sx2 := s.sumw[:bs+1], s.sumw2[:], s.sumx[:bs+1], s.sumx2[:]
	sw1[0], sw2[0], sx1[0], sx2[0] = 0, 0, 0, 0
	for j, i := range order {
		// Not fused here: GCC keeps these running sums in registers and
		// avoids FMA chains in loop-carried sums on this target.
		// Without a branch: the other half adds +0, which leaves its sum
		// unchanged (sums that start at +0 are never -0).
		terms := [2][2]float32{{weight[i], float32(weight[i] * xb[i])}}
		h := i / (bs / 2) & 1
		t1, t2 := &terms[h], &terms[h^1]
		sw1[j+1] = sw1[j] + t1[0]
		sx1[j+1] = sx1[j] + t1[1]
		sw2[j+1] = sw2[j] + t2[0]
		sx2[j+1] = sx2[j] + t2[1]
	}
	st := splitState{i1: -1, i2: -1, slot: -1}
	if !(useAVX512 && iq1mSplitSearch512((*[32]float32)(s.sumx[:32]), &s.sumx2, (*[32]float32)(s.sumw[:32]), &s.sumw2, s.scores[:], &st)) {
		splits := (*[iq1mSplitLen]float32)(s.splits[:iq1mSplitLen])
		iq1mSplitSums((*[24]float32)(s.sumx[:24]), (*[24]float32)(s.sumx2[:24]), (*[24]float32)(s.sumw[:24]), (*[24]float32)(s.sumw2[:24]), splits)
		splitScanScores(splits[:], s.scores[:], bs, 4, &st)
	}
	scale = st.scale
	besti1, besti2 := int(st.i1), int(st.i2)
	bestK = int(st.slot)
	if bestK < 0 {
		return 0, 0, false
	}
	for j, i := range order {
		switch {
		case j < besti1:
			L[i] = 0
		case j < besti2:
			L[i] = 1
		default:
			L[i] = 2
		}
	}
	if scale < 0 {
		for j := range L[:bs] {
			L[j] = 2 - L[j]
		}
		scale, bestK = -scale, 3-bestK
	}
	allOnGrid := true
	for k := 0; k < 2; k++ {
		xx := &xM
		if (k == 0 && bestK < 2) || (k == 1 && bestK%2 == 0) {
			xx = &xP
		}
		u := g.pack(L[8*k:])
		gi := int(g.kmap[u])
		if gi < 0 {
			allOnGrid = false
			gi = findBestNeighbour2(g, u, xb[8*k:8*k+8], weight[8*k:8*k+8], scale, xx, L[8*k:])
		}
		index[k] = uint16(gi)
	}
	if !allOnGrid {
		var sumqx, sumq2 [4]float32
		for j := 0; j < bs; j++ {
			w := weight[j]
			qp, qm := xP[L[j]], xM[L[j]]
			// Unfused: GCC avoids FMA chains in these loop-carried sums.
			xp, xm := float32(float32(w*xb[j])*qp), float32(float32(w*xb[j])*qm)
			pp, mm := float32(float32(w*qp)*qp), float32(float32(w*qm)*qm)
			sumqx[0] += xp
			sumq2[0] += pp
			sumqx[3] += xm
			sumq2[3] += mm
			if j < 8 {
				sumqx[1] += xp
				sumq2[1] += pp
				sumqx[2] += xm
				sumq2[2] += mm
			} else {
				sumqx[2] += xp
				sumq2[2] += pp
				sumqx[1] += xm
				sumq2[1] += mm
			}
		}
		var bestScore float32
		for k := 0; k < 4; k++ {
			if sumqx[k] > 0 && sumq2[k] > 0 && float32(sumqx[k]*sumqx[k]) > float32(bestScore*sumq2[k]) {
				scale = sumqx[k] / sumq2[k]
				bestScore = scale * sumqx[k]
				bestK = k
			}
		}
	}
	return scale, bestK, true
}

var iq1mMasks = [4]uint8{0x00, 0x80, 0x08, 0x88}

// iq1mSearched reports whether quantize_iq1_m searches the 16-value
// sub-block xb: not when its largest magnitude is below 1e-7.
func iq1mSearched(xb []float32) bool {
	m := abs(xb[0])
	for _, v := range xb[1:16] {
		m = max32(m, abs(v))
	}
	return !(m < 1e-7)
}

// iq1mR4HalfSquares are the sums of squares of the two halves of a 32-value
// block of quantize_iq1_m_r4 (a half is searched when its sum exceeds
// 1e-14, the block when theirs reaches it). GCC fuses these sums in its
// clone for a nil importance matrix (quantize_row_iq1_m_r4) but not in the
// general function, which ggml_quantize_chunk calls with or without
// importance data (checked in the golden build's object code, and on the
// float32 rows of ../../testdata/f32rows, where the two differ).
func iq1mR4HalfSquares(xb []float32) (lo, hi float32) {
	return sumSquaresUnfused(xb[:16]), sumSquaresUnfused(xb[16:32])
}

// iq1mKernel is quantize_iq1_m. The reference keeps the shift of each
// sub-block position in an array that lives for the whole call and is not
// reset: a sub-block it skips as near zero (max < 1e-7) keeps the shift its
// position had in the previous super-block or row, and that stale shift goes
// into the stored bits and the final scale fit. We reproduce that and start
// the call with shift 0 where the reference would read uninitialised memory.
func iq1mKernel(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
	var s iq1Scratch
	var shifts [16]int
	var scales [16]float32
	var weight [16]float32
	var L [16]int8
	var index [2]uint16
	var allSigma2 [8]float32
	nb := ne0 / qkK
	for r := 0; r < nrows; r++ {
		x := src[r*ne0 : (r+1)*ne0]
		for ibl := 0; ibl < nb; ibl++ {
			blk := dst[(r*nb+ibl)*56 : (r*nb+ibl+1)*56]
			clear(blk)
			qs, qh := blk[0:32], blk[32:48]
			var sc [4]uint16
			var maxScale float32
			xbl := x[qkK*ibl : qkK*(ibl+1)]
			for ib := 0; ib < 8; ib++ {
				allSigma2[ib] = 1.5 * sumSquaresUnfused(xbl[32*ib:32*ib+32]) / 32
			}
			noImatrix := func(v float32) float32 { return v * v }
			for ib := 0; ib < 16; ib++ {
				sigma2 := allSigma2[ib/2]
				xb := xbl[16*ib : 16*ib+16]
				var qw []float32
				if imatrix != nil {
					qw = imatrix[qkK*ibl+16*ib:]
				}
				blockWeights(weight[:], xb, qw, sigma2, noImatrix)
				if !iq1mSearched(xb) {
					scales[ib] = 0
					continue
				}
				var sumwx float32
				for i := 1; i < 16; i++ { // the reference starts at 1 here
					sumwx = kernel.FMA32(weight[i], abs(xb[i]), sumwx)
				}
				if sumwx == 0 {
					for i, v := range xb {
						weight[i] = v * v
					}
				}
				var ok bool
				if scales[ib], shifts[ib], ok = iq1mProcessBlock(&s, xb, weight[:], L[:], index[:]); !ok {
					return errIQ1MNoSplit
				}
				qs[2*ib] = uint8(index[0])
				qs[2*ib+1] = uint8(index[1])
				qh[ib] = uint8(index[0]>>8) | uint8(index[1]>>8)<<4
				maxScale = max32(maxScale, scales[ib])
			}
			if maxScale == 0 {
				continue
			}
			g := iq1sGrid()
			d := maxScale / 15
			id := 1 / d
			var sumqxF, sumq2F float32
			for ib := 0; ib < 16; ib++ {
				sigma2 := allSigma2[ib/2]
				l := max(0, min(7, round(0.5*kernel.FMA32(id, scales[ib], -1))))
				sc[ib/4] |= uint16(l) << (3 * (ib % 4))
				qh[ib] |= iq1mMasks[shifts[ib]]
				xb := xbl[16*ib : 16*ib+16]
				var qw []float32
				if imatrix != nil {
					qw = imatrix[qkK*ibl+16*ib:]
				}
				blockWeights(weight[:], xb, qw, sigma2, noImatrix)
				for k := 0; k < 2; k++ {
					xx := &xM
					if (k == 0 && shifts[ib] < 2) || (k == 1 && shifts[ib]%2 == 0) {
						xx = &xP
					}
					gi := int(qs[2*ib+k]) + (int(qh[ib])<<(8-4*k))&0x700
					p := g.points[gi*8 : gi*8+8]
					for j, pv := range p {
						w := weight[8*k+j]
						q := xx[(pv-1)/2] * float32(2*l+1)
						wq := w * q
						sumqxF = kernel.FMA32(wq, xb[8*k+j], sumqxF)
						sumq2F = kernel.FMA32(wq, q, sumq2F)
					}
				}
			}
			if sumq2F > 0 {
				d = sumqxF / sumq2F
			}
			u := formats.FP32ToFP16(d * 1.085)
			sc[0] |= (u & 0x000f) << 12
			sc[1] |= (u & 0x00f0) << 8
			sc[2] |= (u & 0x0f00) << 4
			sc[3] |= u & 0xf000
			for k, v := range sc {
				binary.LittleEndian.PutUint16(blk[48+2*k:], v)
			}
		}
	}
	return nil
}

// iq1sR4Kernel is quantize_iq1_s_r4: rows in groups of 4, each row with its
// own fp16 scale, blocks of 32 with one 3-bit scale each.
func iq1sR4Kernel(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
	const bs = 32
	var s iq1Scratch
	var weight [bs]float32
	var L [bs]int8
	var index [4]uint16
	nblock := ne0 / bs
	scales := make([]float32, 4*nblock)
	groupBytes := 4 * (2 + 6*nblock)
	for r := 0; r < nrows; r += 4 {
		grp := dst[r/4*groupBytes : (r/4+1)*groupBytes]
		y := grp[8:]
		var maxs [4]float32
		for ibl := 0; ibl < nblock; ibl++ {
			blk := y[24*ibl : 24*ibl+24]
			for k := 0; k < 4; k++ {
				xb := src[(r+k)*ne0+bs*ibl : (r+k)*ne0+bs*ibl+bs]
				// Not fused, with or without importance data: GCC's clone
				// for a nil imatrix (quantize_row_iq1_s_r4) fuses it, but
				// ggml_quantize_chunk calls the general function, which
				// does not (as iq1_m_r4).
				sumx2 := sumSquaresUnfused(xb)
				if sumx2 < 1e-14 {
					// All zero: grid entry 1029 is the all-zero point.
					const ind = 1029
					scales[4*ibl+k] = 0
					var h uint16
					for i := 0; i < 4; i++ {
						blk[4*i+k] = ind & 255
						h |= (ind >> 8) << (3 * i)
					}
					binary.LittleEndian.PutUint16(blk[16+2*k:], h)
					continue
				}
				sigma2 := 1.5 * sumx2 / bs
				haveImatrix := false
				if imatrix != nil {
					haveImatrix = true
					var sumwx float32
					for j, v := range xb {
						weight[j] = imatrix[bs*ibl+j] * sqrt(kernel.FMA32(v, v, sigma2))
						sumwx = kernel.FMA32(weight[j], abs(v), sumwx)
					}
					// Importance and weights do not overlap: ignore the importance.
					haveImatrix = !(sumwx < 1e-14)
				}
				if !haveImatrix {
					for j, v := range xb {
						weight[j] = sqrt(kernel.FMA32(v, v, sigma2))
					}
				}
				// The importance is ignored above where no weight
				// counts, so a split always exists (ok).
				scale, shift, _ := iq1sProcessBlock(&s, xb, weight[:], L[:], index[:])
				scales[4*ibl+k] = scale
				if maxs[k] < scale {
					maxs[k] = scale
				}
				var h uint16
				for i := 0; i < 4; i++ {
					blk[4*i+k] = uint8(index[i])
					h |= (index[i] >> 8) << (3 * i)
				}
				if shift < 0 {
					h |= 0x8000
				}
				binary.LittleEndian.PutUint16(blk[16+2*k:], h)
			}
		}
		var invd [4]float32
		for k := 0; k < 4; k++ {
			putF16(grp[2*k:], float32(1.0625*maxs[k])/15)
			if maxs[k] != 0 {
				invd[k] = 15 / maxs[k]
			}
		}
		for ibl := 0; ibl < nblock; ibl++ {
			for k := 0; k < 4; k++ {
				ls := max(0, min(7, round(0.5*kernel.FMA32(scales[4*ibl+k], invd[k], -1))))
				off := 24*ibl + 16 + 2*k
				binary.LittleEndian.PutUint16(y[off:], binary.LittleEndian.Uint16(y[off:])|uint16(ls)<<12)
			}
		}
	}
	return nil
}

// iq1mR4Kernel is quantize_iq1_m_r4: rows in groups of 4 with a per-row fp16
// scale; blocks of 32 in two halves of 16, each with a 4-bit scale.
//
// Where one half of a block is (almost) all zero the reference skips its
// search but still ORs in the shift bits of the variable the last search
// left (uninitialised before the first search of the call). We reproduce
// that, starting the call with shift 0.
func iq1mR4Kernel(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
	const bs = 32
	var s iq1Scratch
	var weight [bs]float32
	var L [bs]int8
	var index [4]uint16
	shift1, shift2 := 0, 0
	nblock := ne0 / bs
	scales := make([]float32, 8*nblock)
	groupBytes := 4 * (2 + 7*nblock)
	for r := 0; r < nrows; r += 4 {
		grp := dst[r/4*groupBytes : (r/4+1)*groupBytes]
		y := grp[8:]
		var maxs [4]float32
		for ibl := 0; ibl < nblock; ibl++ {
			blk := y[28*ibl : 28*ibl+28]
			qs, qh := blk[0:16], blk[16:24]
			for k := 0; k < 4; k++ {
				xb := src[(r+k)*ne0+bs*ibl : (r+k)*ne0+bs*ibl+bs]
				sumx2l, sumx2h := iq1mR4HalfSquares(xb)
				sumx2 := sumx2l + sumx2h
				if sumx2 < 1e-14 {
					const ind = 1029
					scales[8*ibl+2*k], scales[8*ibl+2*k+1] = 0, 0
					for i := 0; i < 4; i++ {
						qs[4*i+k] = ind & 255
					}
					for i := 0; i < 2; i++ {
						qh[4*i+k] = (ind >> 8) | (ind>>8)<<4
					}
					continue
				}
				sigma2 := 1.5 * sumx2 / bs
				if imatrix != nil {
					for j, v := range xb {
						weight[j] = imatrix[bs*ibl+j] * sqrt(kernel.FMA32(v, v, sigma2))
					}
					var sumwx float32
					for j := 0; j < bs/2; j++ {
						sumwx = kernel.FMA32(weight[j], abs(xb[j]), sumwx)
					}
					if sumwx < 1e-14 {
						for j := 0; j < bs/2; j++ {
							weight[j] = sqrt(kernel.FMA32(xb[j], xb[j], sigma2))
						}
					}
					sumwx = 0
					for j := bs / 2; j < bs; j++ {
						sumwx = kernel.FMA32(weight[j], abs(xb[j]), sumwx)
					}
					if float64(sumwx) < 1e-14 { // a double comparison in the reference
						for j := bs / 2; j < bs; j++ {
							weight[j] = sqrt(kernel.FMA32(xb[j], xb[j], sigma2))
						}
					}
				} else {
					for j, v := range xb {
						weight[j] = sqrt(kernel.FMA32(v, v, sigma2))
					}
				}
				if sumx2l > 1e-14 {
					var ok bool
					if scales[8*ibl+2*k], shift1, ok = iq1mProcessBlock(&s, xb[:16], weight[:16], L[:], index[0:2]); !ok {
						return errIQ1MNoSplit
					}
				} else {
					scales[8*ibl+2*k] = 0
					index[0], index[1] = 1029, 1029
				}
				if sumx2h > 1e-14 {
					var ok bool
					if scales[8*ibl+2*k+1], shift2, ok = iq1mProcessBlock(&s, xb[16:], weight[16:], L[:], index[2:4]); !ok {
						return errIQ1MNoSplit
					}
				} else {
					scales[8*ibl+2*k+1] = 0
					index[2], index[3] = 1029, 1029
				}
				m := scales[8*ibl+2*k+1]
				if m < scales[8*ibl+2*k] {
					m = scales[8*ibl+2*k]
				}
				if maxs[k] < m {
					maxs[k] = m
				}
				for i := 0; i < 4; i++ {
					qs[4*i+k] = uint8(index[i])
				}
				for i := 0; i < 2; i++ {
					qh[4*i+k] = uint8(index[2*i]>>8) | uint8(index[2*i+1]>>8)<<4
				}
				qh[k] |= iq1mMasks[shift1]
				qh[4+k] |= iq1mMasks[shift2]
			}
		}
		var invd [4]float32
		for k := 0; k < 4; k++ {
			putF16(grp[2*k:], float32(1.0625*maxs[k])/15)
			if maxs[k] != 0 {
				invd[k] = 15 / maxs[k]
			}
		}
		for ibl := 0; ibl < nblock; ibl++ {
			for k := 0; k < 4; k++ {
				ls1 := max(0, min(15, round(scales[8*ibl+2*k]*invd[k])))
				ls2 := max(0, min(15, round(scales[8*ibl+2*k+1]*invd[k])))
				y[28*ibl+24+k] = uint8(ls1 | ls2<<4)
			}
		}
	}
	return nil
}
