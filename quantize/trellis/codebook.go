package trellis

import (
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/gquant/gquant/formats"
)

// A codebook is the reference's QuantizerIQKT for one type: every codeword
// of the trellis generator, a coarse partition of the codeword space into
// clusters (by which side of each dimension's midpoint, or which of five
// bins, a point falls), and for each cluster the codewords nearest to it.
// The search first finds the cluster of the scaled input, then scans only
// that cluster's codewords.
type codebook struct {
	group     int       // weights per codeword: 8, or 4 for iq4_kt
	abs       bool      // magnitudes only (iq3_kt)
	values    []float32 // every codeword, group values each
	mid       [8]float32
	clusters  []float32   // cluster centroids, group values each
	inCluster [][]int32   // codeword indices of each cluster, a multiple of 8
	cValues   [][]float32 // the codewords of inCluster, laid out contiguously
}

// newCodebook builds the codebook of 1<<bits codewords of the given group
// size from seed offset, with nclusters clusters (256 binary ones for groups
// of 8, 625 five-bin ones for groups of 4) of which every codeword joins its
// neighbours nearest.
func newCodebook(group, bits int, abs bool, offset uint32, nclusters, neighbours int) *codebook {
	n := 1 << bits
	cb := &codebook{group: group, abs: abs, values: make([]float32, n*group)}
	for i := 0; i < n; i++ {
		formats.KTCodeword(cb.values[i*group:(i+1)*group], uint32(i)+offset, abs)
	}
	cb.clusterPoints(nclusters)
	cb.finalizeClusters(neighbours)
	return cb
}

// bin5 is the five-way bin of one coordinate of a 4-value codeword.
func bin5(x float32) int {
	switch {
	case x < -48:
		return 0
	case x < -16:
		return 1
	case x < 16:
		return 2
	case x < 48:
		return 3
	}
	return 4
}

// clusterOf returns the cluster a (scaled) point falls in.
func (cb *codebook) clusterOf(v []float32) int {
	u := 0
	if cb.group == 8 {
		for k := 0; k < 8; k++ {
			if v[k] > cb.mid[k] {
				u |= 1 << k
			}
		}
		return u
	}
	s := 1
	for k := 0; k < 4; k++ {
		u += s * bin5(v[k])
		s *= 5
	}
	return u
}

// clusterPoints finds the midpoints and the centroid of each cluster.
func (cb *codebook) clusterPoints(nclusters int) {
	g := cb.group
	npoint := len(cb.values) / g
	if g == 8 {
		if cb.abs {
			// Median of each coordinate (as integers, the way the reference sorts them).
			p := make([]int, npoint)
			for k := 0; k < g; k++ {
				for i := range p {
					p[i] = int(cb.values[i*g+k])
				}
				sort.Ints(p)
				if npoint%2 == 0 {
					cb.mid[k] = 0.5 * float32(p[npoint/2]+p[npoint/2-1])
				} else {
					cb.mid[k] = float32(p[npoint/2])
				}
			}
		} else {
			for k := 0; k < g; k++ {
				lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
				for i := 0; i < npoint; i++ {
					lo = min(lo, cb.values[i*g+k])
					hi = max(hi, cb.values[i*g+k])
				}
				cb.mid[k] = 0.5 * (lo + hi)
			}
		}
	}
	// Codewords are small integers, so these sums are exact in any order.
	sum := make([]float32, nclusters*g)
	count := make([]int, nclusters)
	for i := 0; i < npoint; i++ {
		v := cb.values[i*g : (i+1)*g]
		u := cb.clusterOf(v)
		count[u]++
		for k := range v {
			sum[u*g+k] += v[k]
		}
	}
	cb.clusters = make([]float32, nclusters*g)
	for c := range count {
		if count[c] == 0 {
			continue // an empty cluster keeps a zero centroid, as in the reference
		}
		for k := 0; k < g; k++ {
			cb.clusters[c*g+k] = sum[c*g+k] / float32(count[c])
		}
	}
}

// dist2 is the squared distance the reference uses to assign codewords to
// clusters: differences rounded, squares accumulated with fused multiply-adds.
func dist2(a, b []float32) float32 {
	var s float32
	for k := range a {
		d := a[k] - b[k]
		s = fmaSquare(d, s)
	}
	return s
}

// fmaSquare is d*d+s rounded once to float32 (kernel.FMA32 for this hot
// loop, small enough to inline): d*d is exact in float64; if the float64 sum
// rounded and landed exactly halfway between two float32 values, nudge it
// toward the exact value before the final rounding.
func fmaSquare(d, s float32) float32 {
	p := float64(d) * float64(d)
	t := p + float64(s)
	if bits := math.Float64bits(t); bits&(1<<29-1) == 1<<28 {
		return fma32(d, d, s)
	}
	return float32(t)
}

// approxDist2 is the squared distance in float64: within a relative 1e-6 of
// dist2 (which rounds at most 16 times to float32), and cheap. The searches
// below rank with it first and compute dist2 only near the cut.
func approxDist2(a, b []float32) float64 {
	if len(a) == 8 && len(b) == 8 {
		a, b := (*[8]float32)(a), (*[8]float32)(b)
		d0, d1 := float64(a[0]-b[0]), float64(a[1]-b[1])
		d2, d3 := float64(a[2]-b[2]), float64(a[3]-b[3])
		d4, d5 := float64(a[4]-b[4]), float64(a[5]-b[5])
		d6, d7 := float64(a[6]-b[6]), float64(a[7]-b[7])
		return (d0*d0 + d1*d1 + d2*d2 + d3*d3) + (d4*d4 + d5*d5 + d6*d6 + d7*d7)
	}
	var s float64
	for k := range a {
		d := float64(a[k] - b[k])
		s += d * d
	}
	return s
}

// nearMargin widens a cut made on approxDist2 so that it certainly keeps
// every candidate whose dist2 could be on the kept side.
const nearMargin = 1 + 1e-5

// finalizeClusters puts every codeword into the clusters of its neighbours
// nearest centroids (ties: the lower cluster), then pads each cluster whose
// size is not a multiple of 8 with the nearest codewords not yet in it (ties:
// the lower index).
func (cb *codebook) finalizeClusters(neighbours int) {
	g := cb.group
	npoint := len(cb.values) / g
	ncluster := len(cb.clusters) / g
	which := make([]int32, neighbours*npoint)
	parallelFor(npoint, func(lo, hi int) {
		approx := make([]float64, ncluster)
		kth := make([]float64, 0, neighbours)
		best := make([]float32, neighbours)
		for ip := lo; ip < hi; ip++ {
			ibest := which[neighbours*ip : neighbours*(ip+1)]
			vp := cb.values[ip*g : (ip+1)*g]
			kth = kth[:0]
			for ic := 0; ic < ncluster; ic++ {
				approx[ic] = approxDist2(vp, cb.clusters[ic*g:(ic+1)*g])
				kth = insertSmallest(kth, approx[ic], neighbours)
			}
			cut := kth[len(kth)-1] * nearMargin
			for j := range best {
				best[j], ibest[j] = float32(math.Inf(1)), -1
			}
			for ic := 0; ic < ncluster; ic++ {
				if approx[ic] > cut {
					continue
				}
				d := dist2(vp, cb.clusters[ic*g:(ic+1)*g])
				for j := 0; j < neighbours; j++ {
					if d < best[j] {
						copy(best[j+1:], best[j:neighbours-1])
						copy(ibest[j+1:], ibest[j:neighbours-1])
						best[j], ibest[j] = d, int32(ic)
						break
					}
				}
			}
		}
	})
	in := make([][]int32, ncluster)
	for ip := 0; ip < npoint; ip++ {
		for _, ic := range which[neighbours*ip : neighbours*(ip+1)] {
			in[ic] = append(in[ic], int32(ip))
		}
	}
	// Pad each cluster with the codewords nearest to it that are not in it
	// yet: keeping the few smallest in (distance, index) order picks the same
	// ones as the reference's full sort.
	type candidate struct {
		d  float32
		ip int32
	}
	parallelFor(ncluster, func(lo, hi int) {
		approx := make([]float64, npoint)
		var kth []float64
		var nearest []candidate
		for ic := lo; ic < hi; ic++ {
			nadd := 8*((len(in[ic])+7)/8) - len(in[ic])
			if nadd == 0 {
				continue
			}
			vc := cb.clusters[ic*g : (ic+1)*g]
			kth = kth[:0]
		points:
			for ip := 0; ip < npoint; ip++ {
				approx[ip] = math.Inf(1)
				for _, c := range which[neighbours*ip : neighbours*(ip+1)] {
					if int(c) == ic {
						continue points
					}
				}
				approx[ip] = approxDist2(cb.values[ip*g:(ip+1)*g], vc)
				kth = insertSmallest(kth, approx[ip], nadd)
			}
			cut := kth[len(kth)-1] * nearMargin
			nearest = nearest[:0]
			for ip := 0; ip < npoint; ip++ {
				if approx[ip] > cut {
					continue
				}
				c := candidate{dist2(cb.values[ip*g:(ip+1)*g], vc), int32(ip)}
				// Points come in increasing index order, so a tie never displaces.
				if len(nearest) == nadd && !(c.d < nearest[nadd-1].d) {
					continue
				}
				if len(nearest) < nadd {
					nearest = append(nearest, c)
				} else {
					nearest[nadd-1] = c
				}
				for i := len(nearest) - 1; i > 0 && c.d < nearest[i-1].d; i-- {
					nearest[i], nearest[i-1] = nearest[i-1], nearest[i]
				}
			}
			for _, c := range nearest {
				in[ic] = append(in[ic], c.ip)
			}
		}
	})
	cb.inCluster = in
	cb.cValues = make([][]float32, ncluster)
	for ic, pts := range in {
		cv := make([]float32, 0, len(pts)*g)
		for _, p := range pts {
			cv = append(cv, cb.values[int(p)*g:(int(p)+1)*g]...)
		}
		cb.cValues[ic] = cv
	}
}

// insertSmallest keeps in s (ascending) the n smallest values seen.
func insertSmallest(s []float64, v float64, n int) []float64 {
	if len(s) == n {
		if v >= s[n-1] {
			return s
		}
		s = s[:n-1]
	}
	i := len(s)
	s = append(s, v)
	for ; i > 0 && v < s[i-1]; i-- {
		s[i] = s[i-1]
	}
	s[i] = v
	return s
}

// parallelFor splits [0, n) into one contiguous range per CPU.
func parallelFor(n int, f func(lo, hi int)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), n))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
