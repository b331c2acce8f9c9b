package iquant

import (
	"encoding/binary"
	"slices"

	"github.com/gquant/gquant/internal/tables"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// iq2Weight is the weight of x without an importance matrix in iq2_xxs.
func iq2Weight(sigma2 float32) func(x float32) float32 {
	s := 0.25 * sigma2
	return func(x float32) float32 { return kernel.FMA32(x, x, s) }
}

// iq2WeightUnfused is the same weight in iq2_xs and iq2_s, where GCC rounds
// the square before adding it.
func iq2WeightUnfused(sigma2 float32) func(x float32) float32 {
	s := 0.25 * sigma2
	return func(x float32) float32 { return s + float32(x*x) }
}

// iq2xxsRows returns the row quantizer of iq2_xxs whose scale searches
// are search's (see quantizeIQ2XXSRow).
func iq2xxsRows(search kernel.Search) rowQuantizer {
	return func(dst []byte, x, imatrix []float32) (bool, error) {
		return quantizeIQ2XXSRow(search, dst, x, imatrix)
	}
}

// quantizeIQ2XXSRow is quantize_row_iq2_xxs_impl, except where the
// reference aborts: there the block is quantized with uniform importance and
// the row reported as substituted (see iq2xxsBlock.fit). Where the values
// overflow its searches it returns an error (a *kernel.OverflowError).
func quantizeIQ2XXSRow(search kernel.Search, dst []byte, x, imatrix []float32) (substituted bool, err error) {
	g := iq2xxsGrid()
	b := iq2xxsBlock{search: search}
	var scales [8]float32
	var q2 [16]uint32
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[66*ibl : 66*ibl+66]
		clear(q2[:])
		putF16(blk[0:2], 0)
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < 8; ib++ {
			xb := xbl[32*ib : 32*ib+32]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+32*ib:]
			}
			scale, negligible, ok, err := b.fit(g, xb, qw, sigma2)
			if err != nil {
				return false, err
			}
			if !ok {
				// Every non-zero value of the block has importance 0:
				// make_qp_quants returns 0/0, no trial scale is taken
				// (each has sumqx = 0), the NaN skips the re-fit, and the
				// levels stay make_qp_quants' 0..4, off the grid. The
				// reference aborts ("Oops: found point ... not on grid",
				// or GGML_ASSERT(scale >= 0) where they are on it). We
				// quantize the block with uniform importance instead, as
				// the reference's iq1_s_r4 and iq1_m do for such a block
				// ("it is better to simply ignore the imatrix") and as
				// callers treat an all-zero importance vector. Every
				// other block and row keeps the reference's bytes.
				substituted = true
				scale, negligible, ok, err = b.fit(g, xb, unitImportance[:32], sigma2)
				if err != nil {
					return false, err
				}
				if !ok {
					return false, errIQ2XXSOffGrid
				}
			}
			if negligible {
				scales[ib] = 0
				continue
			}
			for k := 0; k < 4; k++ {
				gi := uint32(g.kmap[g.pack(b.L[8*k:])])
				q2[2*ib] |= gi << (8 * k)
				q2[2*ib+1] |= uint32(b.signs[k]) << (7 * k)
			}
			scales[ib] = scale
			maxScale = max32(maxScale, scale)
		}
		if maxScale == 0 {
			clear(blk[2:])
			continue
		}
		d := maxScale / 31
		putF16(blk[0:2], d)
		id := 1 / d
		for ib := 0; ib < 8; ib++ {
			l := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			q2[2*ib+1] |= uint32(l) << 28
		}
		for i, v := range q2 {
			binary.LittleEndian.PutUint32(blk[2+4*i:], v)
		}
	}
	return substituted, nil
}

// unitImportance is a super-block of uniform importance weights, for the
// blocks the reference cannot quantize with theirs.
var unitImportance = func() (w [qkK]float32) {
	for i := range w {
		w[i] = 1
	}
	return w
}()

// iq2xxsBlock is the scratch and result of one block of 32 of iq2_xxs.
type iq2xxsBlock struct {
	search             kernel.Search
	weight, xval, waux [32]float32
	L, Laux            [32]int8
	Lqp                [32]uint8
	signs              [4]uint8
	jobs               [4]nbJob
}

// fit is the body of quantize_row_iq2_xxs_impl's loop over blocks of 32:
// it returns the block's scale, leaving the grid levels in b.L and the signs
// in b.signs. negligible reports a block below GROUP_MAX_EPS (the reference
// writes it as zeros with scale 0); ok is false where the reference aborts
// (a scale that is not a number, or levels off the grid). err is
// errNoNeighbour where the values overflow a neighbour search (the reference
// asserts there too, before it could abort as above).
func (b *iq2xxsBlock) fit(g *codeGrid, xb, qw []float32, sigma2 float32) (scale float32, negligible, ok bool, err error) {
	const kMaxQ = 3
	weight, xval, waux := b.weight[:], b.xval[:], b.waux[:]
	blockWeights(weight, xb, qw, sigma2, iq2Weight(sigma2))
	for i := range waux {
		waux[i] = sqrt(weight[i])
	}
	splitSigns(xb, weight, xval, b.signs[:], true)
	max := maxOf(xval)
	if max < 1e-15 {
		clear(b.L[:])
		return 0, true, true, nil
	}
	scale = b.search.MakeQpQuants(kMaxQ+1, xval, b.Lqp[:], weight, kernel.RoundedProducts)
	for i, l := range b.Lqp {
		b.L[i] = int8(l)
	}
	effMax := scale * kMaxQ
	var best float32
	var trialSums oddSumsCache
	for is := -6; is <= 6; is++ {
		id := kernel.FMA32(float32(is), 0.1, 2*kMaxQ-1) / effMax
		thisScale := 1 / id
		levelsOf(b.Laux[:], id, xval, kMaxQ-1)
		nj := 0
		for k := 0; k < 4; k++ {
			if u := g.pack(b.Laux[8*k:]); g.kmap[u] < 0 {
				b.jobs[nj] = g.job(k, u)
				nj++
			}
		}
		if !g.findBestNeighbours(b.jobs[:nj], xval, waux, thisScale, b.Laux[:]) {
			return 0, false, false, errNoNeighbour
		}
		sumqx, sumq2 := trialSums.sums(weight, xval, b.Laux[:])
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			scale = sumqx / sumq2
			best = scale * sumqx
			b.L = b.Laux
		}
	}
	if scale > 0 {
		if !g.snapGroups(4, scale, kMaxQ-1, xval, waux, b.L[:], nil) {
			return 0, false, false, errNoNeighbour
		}
		sumqx, sumq2 := sumsOdd(weight, xval, b.L[:])
		if sumq2 > 0 {
			scale = sumqx / sumq2
		}
	}
	if scale < 0 {
		scale = -scale
		for k := range b.signs {
			b.signs[k] = ^b.signs[k] & 127
		}
	}
	return scale, false, scale >= 0 && g.onGrid(b.L[:], kMaxQ-1), nil
}

// sortedOrder returns the indices of x in increasing order of x, equal values
// in index order: the order glibc's qsort (a merge sort for arrays this small)
// leaves the reference's (value, index) pairs in.
func sortedOrder(x []float32, idx []int) []int {
	idx = idx[:len(x)]
	if useNeighbourAVX2 && len(x)%8 == 0 && len(x) > 0 && allFinite(x) {
		if useAVX512 && (len(x) == 16 || len(x) == 32) {
			sortRanks512(&x[0], len(x), &idx[0])
			return idx
		}
		sortRanksAVX2(&x[0], len(x), &idx[0])
		return idx
	}
	if len(x) <= 32 {
		// Insertion sort on the values themselves: stable, and for the
		// finite values the quantizers see the same order as below.
		var keys [32]float32
		for i, v := range x {
			j := i
			for j > 0 && keys[j-1] > v {
				keys[j], idx[j] = keys[j-1], idx[j-1]
				j--
			}
			keys[j], idx[j] = v, i
		}
		return idx
	}
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	return idx
}

// quantizeIQ2XSRow is quantize_row_iq2_xs_impl. It returns errNoNeighbour
// where the values overflow its searches.
func quantizeIQ2XSRow(dst []byte, x, imatrix []float32) error {
	const kMaxQ = 3
	g := iq2xsGrid()
	var scales [16]float32
	var weight, xval, waux [16]float32
	var L, Laux [16]int8
	var signs [2]uint8
	var q2 [32]uint16
	var index, auxIndex [2]int
	var jobs [2]nbJob
	var sumx, sumw [24]float32
	var splits [iq2xsSplitLen]float32
	var splitScores [iq2xsScoresLen]float32
	var order [16]int
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[74*ibl : 74*ibl+74]
		putF16(blk[0:2], 0)
		clear(q2[:])
		sc := blk[66:74]
		clear(sc)
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < 16; ib++ {
			xb := xbl[16*ib : 16*ib+16]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+16*ib:]
			}
			blockWeights(weight[:], xb, qw, sigma2, iq2WeightUnfused(sigma2))
			for i := range waux {
				waux[i] = sqrt(weight[i])
			}
			splitSigns(xb, weight[:], xval[:], signs[:], true)
			max := maxOf(xval[:])
			if max < 1e-15 {
				scales[ib] = 0
				clear(L[:])
				continue
			}
			// Exact search over the split of the sorted values into levels 1, 3, 5.
			for j, i := range sortedOrder(xval[:], order[:]) {
				sumx[j+1] = kernel.FMA32(weight[i], xval[i], sumx[j])
				sumw[j+1] = sumw[j] + weight[i]
			}
			iq2xsSplitSums(&sumx, &sumw, &splits)
			st := splitState{i1: -1, i2: -1, slot: -1}
			splitScanScores(splits[:], splitScores[:], 16, 1, &st)
			scale := st.scale
			var best float32
			effMax := scale * (2*kMaxQ - 1)
			index = [2]int{}
			var trialSums oddSumsCache
			for is := -7; is <= 7; is++ {
				id := kernel.FMA32(float32(is), 0.1, 2*kMaxQ-1) / effMax
				thisScale := 1 / id
				levelsOf(Laux[:], id, xval[:], kMaxQ-1)
				nj := 0
				for k := 0; k < 2; k++ {
					if u := g.pack(Laux[8*k:]); g.kmap[u] < 0 {
						jobs[nj] = g.job(k, u)
						nj++
					}
				}
				if !g.findBestNeighbours(jobs[:nj], xval[:], waux[:], thisScale, Laux[:]) {
					return errNoNeighbour
				}
				for k := 0; k < 2; k++ {
					auxIndex[k] = int(g.kmap[g.pack(Laux[8*k:])])
				}
				sumqx, sumq2 := trialSums.sums(weight[:], xval[:], Laux[:])
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = scale * sumqx
					L = Laux
					index = auxIndex
				}
			}
			if scale != 0 {
				for iter := 0; iter < 3; iter++ {
					id := 1 / scale
					changed := false
					for k := 0; k < 2; k++ {
						for i := 0; i < 8; i++ {
							Laux[8*k+i] = levelOf(id, xval[8*k+i], kMaxQ-1)
						}
						u := g.pack(Laux[8*k:])
						gi := int(g.kmap[u])
						if gi < 0 {
							gi = g.findBestNeighbour(u, xval[8*k:8*k+8], waux[8*k:8*k+8], scale, Laux[8*k:])
							if gi < 0 {
								return errNoNeighbour
							}
						}
						auxIndex[k] = gi
						if gi != index[k] {
							changed = true
						}
					}
					if !changed {
						break
					}
					sumqx, sumq2 := sumsOdd(weight[:], xval[:], Laux[:])
					if !(sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2)) {
						break
					}
					scale = sumqx / sumq2
					best = scale * sumqx
					L = Laux
					index = auxIndex
				}
			}
			if scale < 0 {
				scale = -scale
				for k := range signs {
					signs[k] = ^signs[k] & 127
				}
			}
			for k := 0; k < 2; k++ {
				q2[2*ib+k] = uint16(g.kmap[g.pack(L[8*k:])]) | uint16(signs[k])<<9
			}
			scales[ib] = scale
			maxScale = max32(maxScale, scale)
		}
		if maxScale == 0 {
			clear(blk[2:66])
			continue
		}
		d := maxScale / 31
		putF16(blk[0:2], d)
		id := 1 / d
		var sumqx, sumq2 float32
		for ib := 0; ib < 16; ib++ {
			l := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			sc[ib/2] |= uint8(l) << (4 * (ib % 2))
			l = 2*l + 1
			xb := xbl[16*ib : 16*ib+16]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+16*ib:]
			}
			blockWeights(weight[:], xb, qw, sigma2, iq2WeightUnfused(sigma2))
			for k := 0; k < 2; k++ {
				grid := tables.IQ2XSGrid[q2[2*ib+k]&511]
				s := tables.KSignsIQ2XS[q2[2*ib+k]>>9]
				for j := 0; j < 8; j++ {
					w := weight[8*k+j]
					q := float32(0.125*float32(l)) * float32(uint8(grid>>(8*j)))
					if s&(1<<j) != 0 {
						q = -q
					}
					wq := w * q
					sumqx = kernel.FMA32(wq, xb[8*k+j], sumqx)
					sumq2 = kernel.FMA32(wq, q, sumq2)
				}
			}
		}
		for i, v := range q2 {
			binary.LittleEndian.PutUint16(blk[2+2*i:], v)
		}
		if sumq2 > 0 {
			putF16(blk[0:2], float32(1.05*sumqx)/sumq2)
		}
	}
	return nil
}

// iq2sTrials is the number of trial scales of iq2_s (is = -9..9).
const iq2sTrials = 19

// quantizeIQ2SRow is quantize_row_iq2_s_impl. It returns errNoNeighbour
// where the values overflow its searches.
func quantizeIQ2SRow(dst []byte, x, imatrix []float32) error {
	const kMaxQ = 3
	g := iq2sGrid()
	var scales [16]float32
	// weight and xval padded with zeros to the 32 values of the trial
	// sums; trialL holds trial t's levels in row t, columns 0..15.
	var weightPad, xvalPad [32]float32
	weight, xval := weightPad[:16], xvalPad[:16]
	var waux [16]float32
	// L keeps the previous block's levels where no trial scale passes
	// (sumqx*sumqx underflows, e.g. a block of values near 1e-8 just above
	// GROUP_MAX_EPS_IQ2_S), as in the reference. There, at the first such
	// block of a row, L holds whatever its stack held: the previous row's
	// levels within one call, garbage otherwise (refquant on testdata's
	// "max-at-eps" row alone aborts: "Oops: found point 21845 not on grid").
	// No build can match that; we start every row from level 0.
	var L [16]int8
	var isOnGrid [2]bool
	var trialL, trialCols [32][32]int8
	var sums [64]float32
	var trialOnGrid [iq2sTrials][2]bool
	var trialJobsEnd [iq2sTrials]int
	var jobs [2 * iq2sTrials]nbJob
	var signs [2]uint8
	for ibl := 0; ibl < len(x)/qkK; ibl++ {
		blk := dst[82*ibl : 82*ibl+82]
		clear(blk)
		qs, qh, sc := blk[2:66], blk[66:74], blk[74:82]
		var maxScale float32
		xbl := x[qkK*ibl : qkK*(ibl+1)]
		sigma2 := 2 * sumSquaresUnfused(xbl) / qkK
		for ib := 0; ib < 16; ib++ {
			xb := xbl[16*ib : 16*ib+16]
			var qw []float32
			if imatrix != nil {
				qw = imatrix[qkK*ibl+16*ib:]
			}
			blockWeights(weight[:], xb, qw, sigma2, iq2WeightUnfused(sigma2))
			for i := range waux {
				waux[i] = sqrt(weight[i])
			}
			splitSigns(xb, weight[:], xval[:], signs[:], false)
			max := maxOf(xval[:])
			if max < 1e-8 {
				scales[ib] = 0
				continue
			}
			var best float32
			scale := max / (2*kMaxQ - 1)
			isOnGrid = [2]bool{true, true}
			// The trial scales in three passes: every trial's rounded
			// levels and off-grid groups, one neighbour search for all of
			// them, then the reference's comparison in trial order.
			nj := 0
			for t := 0; t < iq2sTrials; t++ {
				id := kernel.FMA32(float32(t-iq2sTrials/2), 0.1, 2*kMaxQ-1) / max
				levelsOfIQ2STrial(trialL[t][:16], id, xval, kMaxQ-1)
				for k := 0; k < 2; k++ {
					u := g.pack(trialL[t][8*k:])
					trialOnGrid[t][k] = g.kmap[u] >= 0
					if !trialOnGrid[t][k] {
						jobs[nj] = g.job(k, u)
						jobs[nj].scale = 1 / id
						nj++
					}
				}
				trialJobsEnd[t] = nj
			}
			if useNeighbourAVX2 {
				g.searchJobsScaled(xval, waux[:], &g.qvec, jobs[:nj])
				for _, j := range jobs[:nj] {
					if j.pos < 0 {
						return errNoNeighbour
					}
				}
			}
			first := 0
			var trialSums oddSumsCache
			for t := 0; t < iq2sTrials; t++ {
				Lt := trialL[t][:16]
				for _, j := range jobs[first:trialJobsEnd[t]] {
					o := 8 * int(j.group)
					if useNeighbourAVX2 {
						g.setLevels(g.laneIndex(int(j.laneOff+j.pos)), Lt[o:])
					} else if g.findBestNeighbour(int(j.u), xval[o:o+8], waux[o:o+8], j.scale, Lt[o:]) < 0 {
						return errNoNeighbour
					}
				}
				first = trialJobsEnd[t]
				if !useNeighbourAVX2 {
					sums[t], sums[32+t] = trialSums.sums(weight, xval, Lt)
				}
			}
			if useNeighbourAVX2 {
				// Columns 16..31 of the levels and the padding of the
				// weights and values stay 0: each adds fma(0, q, sum) = sum.
				sumsOddTrialsAVX2(&weightPad[0], &xvalPad[0], &trialL, &trialCols, &sums)
			}
			for t := 0; t < iq2sTrials; t++ {
				sumqx, sumq2 := sums[t], sums[32+t]
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					scale = sumqx / sumq2
					best = scale * sumqx
					L = [16]int8(trialL[t][:16])
					isOnGrid = trialOnGrid[t]
				}
			}
			if (!isOnGrid[0] || !isOnGrid[1]) && scale > 0 {
				id := 1 / scale
				for k := 0; k < 2; k++ {
					if isOnGrid[k] {
						continue
					}
					for i := 0; i < 8; i++ {
						L[8*k+i] = levelOf(id, xval[8*k+i], kMaxQ-1)
					}
					if u := g.pack(L[8*k:]); g.kmap[u] < 0 && g.findBestNeighbour(u, xval[8*k:8*k+8], waux[8*k:8*k+8], scale, L[8*k:]) < 0 {
						return errNoNeighbour
					}
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
			for k := 0; k < 2; k++ {
				gi := int(g.kmap[g.pack(L[8*k:])])
				i8 := 2*ib + k
				qs[i8] = uint8(gi)
				qh[i8/4] |= uint8(gi>>8) << (2 * (i8 % 4))
				qs[32+i8] = signs[k]
			}
			scales[ib] = scale
			maxScale = max32(maxScale, scale)
		}
		if maxScale == 0 {
			continue
		}
		d := maxScale / 31
		putF16(blk[0:2], d*0.9875)
		id := 1 / d
		for ib := 0; ib < 16; ib++ {
			l := max(0, min(15, round(0.5*kernel.FMA32(id, scales[ib], -1))))
			if ib%2 == 0 {
				sc[ib/2] = uint8(l)
			} else {
				sc[ib/2] |= uint8(l) << 4
			}
		}
	}
	return nil
}

// levelOfUnfused is levelOf with id*x rounded before 1 is subtracted. The
// reference build that made the golden files does this in the trial-scale
// loop of iq2_s for the first group of 8 (the second is fused): block 151 of blk.3.ffn_up_shexp.weight in
// e2e/out-recipe-iq.gguf has id*x one ulp above 2 when fused and exactly 2
// (a level-rounding tie, broken to even) when not. A local GCC 12 build of
// ggml-quants.c fuses it; the golden file decides.
func levelOfUnfused(id, x float32, maxL int) int8 {
	return int8(max(0, min(maxL, round(0.5*(float32(id*x)-1)))))
}

// levelsOfIQ2STrial is the level rounding of iq2_s's trial scales over its 16
// values: GCC compiles the two groups of that loop differently
// (quantize_row_iq2_s_impl, Zen 4 build): group 0 rounds id*x before
// subtracting 1 (levelOfUnfused), group 1 fuses id*x-1 into one VFMADD
// (levelOf). It shows where id*x lands within half an ulp of a level
// boundary (stress s202 row 21 block 14: id*x rounds to exactly 2, fused it
// is just above).
func levelsOfIQ2STrial(L []int8, id float32, x []float32, maxL int) {
	L, x = L[:16], x[:16]
	if useNeighbourAVX2 {
		levelsIQ2STrialAVX2(&L[0], id, &x[0], 16, maxL)
		return
	}
	for i, v := range x[:8] {
		L[i] = levelOfUnfused(id, v, maxL)
	}
	for i, v := range x[8:] {
		L[8+i] = levelOf(id, v, maxL)
	}
}

// allFinite reports whether no value is NaN or infinite (ranks order only
// finite values the way a sort does).
func allFinite(x []float32) bool {
	for _, v := range x {
		if v-v != 0 {
			return false
		}
	}
	return true
}
