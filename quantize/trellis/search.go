package trellis

import "math"

// The search reproduces the reference's AVX2 code lane for lane. Scores are
// summed in the order its horizontal adds use. Its eight lanes each keep
// their own best (strictly smaller wins) and are then compared in lane order;
// the winner is therefore the candidate with the smallest score, ties going
// to the lower lane, then to the earlier candidate within the lane. The scan
// below keeps that winner directly, and drops a candidate as soon as half its
// score (a lower bound: the terms are not negative and rounding is monotonic)
// exceeds the best score so far.

// hsum8 adds eight lane values the way the reference's horizontal sums do.
func hsum8(s *[8]float32) float32 {
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// laneOf4 is the reference's lane of candidate j+k (k = 0..7) in the search
// over groups of 4, where a lane pair holds two codewords: lanes 0..7 cover
// candidates j+0, j+2, j+4, j+6, j+1, j+3, j+5, j+7.
var laneOf4 = [8]int32{0, 4, 1, 5, 2, 6, 3, 7}

// findBestMatch chooses, for each group of the 32-weight block xb, the
// codeword nearest (in weighted squared distance) to xb/d and writes its
// index to bestIdx. A zero d gives index 0 everywhere.
func (cb *codebook) findBestMatch(d float32, xb, weight []float32, bestIdx []int32) {
	ng := blockSize / cb.group
	if d == 0 {
		clear(bestIdx[:ng])
		return
	}
	id := 1 / d
	if cb.group == 8 {
		for l := 0; l < ng; l++ {
			var vx, w [8]float32
			for k := range vx {
				vx[k] = float32(id * xb[8*l+k])
				w[k] = weight[8*l+k]
			}
			c := cb.clusterOf(vx[:])
			points := cb.inCluster[c]
			values := cb.cValues[c]
			if len(points) == 0 {
				values = cb.values
			}
			best, jbest := float32(math.Inf(1)), -1
			n := len(values) / 8
			for j := 0; j < n; j++ {
				q := (*[8]float32)(values[8*j : 8*j+8])
				d0, d4, d2, d6 := q[0]-vx[0], q[4]-vx[4], q[2]-vx[2], q[6]-vx[6]
				a := float32(float32(w[0]*float32(d0*d0))+float32(w[4]*float32(d4*d4))) +
					float32(float32(w[2]*float32(d2*d2))+float32(w[6]*float32(d6*d6)))
				if a > best {
					continue
				}
				d1, d5, d3, d7 := q[1]-vx[1], q[5]-vx[5], q[3]-vx[3], q[7]-vx[7]
				b := float32(float32(w[1]*float32(d1*d1))+float32(w[5]*float32(d5*d5))) +
					float32(float32(w[3]*float32(d3*d3))+float32(w[7]*float32(d7*d7)))
				score := a + b
				// Lane j%8 first, then position j/8 within the lane.
				if score < best || score == best && (j&7 < jbest&7 || j&7 == jbest&7 && j < jbest) {
					best, jbest = score, j
				}
			}
			if jbest < 0 {
				panic("trellis: codebook search found no codeword")
			}
			if len(points) == 0 {
				bestIdx[l] = int32(jbest)
			} else {
				bestIdx[l] = points[jbest]
			}
		}
		return
	}
	for l := 0; l < ng; l++ {
		var vx, w [4]float32
		for k := range vx {
			vx[k] = float32(id * xb[4*l+k])
			w[k] = weight[4*l+k]
		}
		c := cb.clusterOf(vx[:])
		points := cb.inCluster[c]
		values := cb.cValues[c]
		if len(points) == 0 {
			panic("trellis: empty codebook cluster")
		}
		best, jbest := float32(math.Inf(1)), -1
		for j := range points {
			q := (*[4]float32)(values[4*j : 4*j+4])
			d0, d2 := q[0]-vx[0], q[2]-vx[2]
			a := float32(w[0]*float32(d0*d0)) + float32(w[2]*float32(d2*d2))
			if a > best {
				continue
			}
			d1, d3 := q[1]-vx[1], q[3]-vx[3]
			score := a + (float32(w[1]*float32(d1*d1)) + float32(w[3]*float32(d3*d3)))
			if score < best || score == best && (laneOf4[j&7] < laneOf4[jbest&7] || j&7 == jbest&7 && j < jbest) {
				best, jbest = score, j
			}
		}
		if jbest < 0 {
			panic("trellis: codebook search found no codeword")
		}
		bestIdx[l] = points[jbest]
	}
}

// findBestScale returns the weighted least-squares scale of the codewords
// bestIdx for xb and the error reduction it achieves (sumqx²/sumq2).
func (cb *codebook) findBestScale(xb, weight []float32, bestIdx []int32) (scale, score float32) {
	var vqx, vq2 [8]float32
	g := cb.group
	for l := 0; l < blockSize; l += 8 {
		for k := 0; k < 8; k++ {
			p := l + k
			q := cb.values[g*int(bestIdx[p/g])+p%g]
			qw := float32(q * weight[p])
			vqx[k] = fma32(qw, xb[p], vqx[k])
			vq2[k] = fma32(qw, q, vq2[k])
		}
	}
	sumqx, sumq2 := hsum8(&vqx), hsum8(&vq2)
	if sumq2 > 0 {
		return sumqx / sumq2, float32(sumqx*sumqx) / sumq2
	}
	return 0, 0
}
