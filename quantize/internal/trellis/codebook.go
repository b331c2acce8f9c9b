package trellis

import (
	"encoding/binary"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
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
	clusters  []float32 // cluster centroids, group values each
	inCluster [][]int32 // codeword indices of each cluster, a multiple of 8
	lanes     [][]byte  // the codewords of inCluster in lane layout (see toLanes)
	allLanes  []byte    // every codeword in lane layout (searched for an empty cluster)

	// The block searches' view of the same lanes: one buffer holding every
	// cluster's runs (then, for groups of 8, allLanes), and per cluster its
	// byte offset in it and its number of runs (an empty cluster of groups
	// of 8 spans allLanes). Nil for codebooks built by hand in tests.
	flatLanes []byte
	spans     []uint32

	// The pruned search's layout, built on first use (see prune.go).
	prunedOnce sync.Once
	pruned     pruneLayout

	// The AVX-512 pruned search's layout, built on first use (see
	// prune512.go).
	pruned16Once sync.Once
	pruned16     prune16Layout

	// The AVX-512 searches' layout, built on first use (see pair.go).
	pairOnce sync.Once
	pair     pairLayout

	// The pruned searches' layout for groups of 4, built on first use
	// (see prune4.go).
	pruned4Once sync.Once
	pruned4     prune4Layout

	// smallClusters: the clusters (of groups of 8) average fewer than
	// pairScanRuns runs, so the AVX-512 scan of all their codewords costs
	// less than the pruned search (see searchBlock).
	smallClusters bool

	// The portable search's layout, built on first use (see portableLanes).
	portableOnce sync.Once
	portable     []floatLanes // per cluster, then every codeword (groups of 8)
}

// floatLanes are codewords in the lane layout of the portable search: runs
// of 8*g float32, coordinate k of the candidate in lane i at k*8+i (lanes
// as in toLanes), and the candidates' indices in lane order.
type floatLanes struct {
	values []float32
	ids    []int32
}

// portableLanes returns the codewords of each cluster (and, last, all of
// them) in the portable search's layout: decoding the compact one costs more
// than the search itself without SIMD.
func (cb *codebook) portableLanes() []floatLanes {
	cb.portableOnce.Do(func() {
		g := cb.group
		sets := cb.inCluster
		if g == 8 {
			all := make([]int32, len(cb.values)/g)
			for i := range all {
				all[i] = int32(i)
			}
			sets = append(sets[:len(sets):len(sets)], all)
		}
		cb.portable = make([]floatLanes, len(sets))
		for ic, pts := range sets {
			fl := floatLanes{make([]float32, len(pts)*g), make([]int32, len(pts))}
			for b := 0; b < len(pts)/8; b++ {
				for lane := 0; lane < 8; lane++ {
					c := lane
					if g == 4 {
						c = int(laneCandidate4[lane])
					}
					p := pts[8*b+c]
					fl.ids[8*b+lane] = p
					for k := 0; k < g; k++ {
						fl.values[8*g*b+k*8+lane] = cb.values[int(p)*g+k]
					}
				}
			}
			cb.portable[ic] = fl
		}
	})
	return cb.portable
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

// bin5 is the five-way bin of one coordinate of a 4-value codeword: the
// number of the bounds -48, -16, 16, 48 that x is not below (all four for a
// NaN, as the reference's chain of x < bound tests gives), without branches.
func bin5(x float32) int {
	return notBelow(x, -48) + notBelow(x, -16) + notBelow(x, 16) + notBelow(x, 48)
}

// notBelow is 1 unless x < bound (a SETcc, not a branch: coordinates are
// random, so branches would mispredict).
func notBelow(x, bound float32) int {
	if x < bound {
		return 0
	}
	return 1
}

// above is 1 if x > bound.
func above(x, bound float32) int {
	if x > bound {
		return 1
	}
	return 0
}

// clusterOf returns the cluster a (scaled) point falls in.
func (cb *codebook) clusterOf(v []float32) int {
	if cb.group == 8 {
		v := (*[8]float32)(v)
		m := &cb.mid
		return above(v[0], m[0]) | above(v[1], m[1])<<1 | above(v[2], m[2])<<2 | above(v[3], m[3])<<3 |
			above(v[4], m[4])<<4 | above(v[5], m[5])<<5 | above(v[6], m[6])<<6 | above(v[7], m[7])<<7
	}
	v4 := (*[4]float32)(v)
	return bin5(v4[0]) + 5*bin5(v4[1]) + 25*bin5(v4[2]) + 125*bin5(v4[3])
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
		return kernel.FMA32(d, d, s)
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
	total := 0
	for _, pts := range in {
		total += len(pts)
	}
	cb.smallClusters = total/8 < pairScanRuns*len(in)
	cb.buildLanes()
}

// buildLanes lays out the codewords of every cluster (and, for groups of 8,
// all of them) in lane layout, in one buffer (see flatLanes).
func (cb *codebook) buildLanes() {
	g, run := cb.group, laneRun(cb.group)
	npoint := len(cb.values) / g
	total := 0
	for _, pts := range cb.inCluster {
		total += len(pts) / 8 * run
	}
	if g == 8 {
		total += npoint / 8 * run
	}
	if total >= 1<<32 {
		panic("trellis: codebook lanes do not fit 32-bit offsets")
	}
	cb.flatLanes = make([]byte, 0, total)
	cb.lanes = make([][]byte, len(cb.inCluster))
	cb.spans = make([]uint32, 2*len(cb.inCluster))
	for ic, pts := range cb.inCluster {
		start := len(cb.flatLanes)
		cb.flatLanes = append(cb.flatLanes, toLanes(cb.values, g, pts)...)
		cb.lanes[ic] = cb.flatLanes[start:len(cb.flatLanes):len(cb.flatLanes)]
		cb.spans[2*ic], cb.spans[2*ic+1] = uint32(start), uint32(len(pts)/8)
	}
	if g != 8 {
		return
	}
	all := make([]int32, npoint)
	for i := range all {
		all[i] = int32(i)
	}
	start := len(cb.flatLanes)
	cb.flatLanes = append(cb.flatLanes, toLanes(cb.values, g, all)...)
	cb.allLanes = cb.flatLanes[start:]
	for ic, pts := range cb.inCluster {
		if len(pts) == 0 {
			cb.spans[2*ic], cb.spans[2*ic+1] = uint32(start), uint32(npoint/8)
		}
	}
}

// toLanes lays out the codewords pts (a multiple of 8 of them) the way the
// reference's search holds them in its eight AVX2 lanes, transposed, and
// compact: the codewords are integers in [-126, 126], exact in fp16, so
// each run of eight candidates takes laneRun(g) bytes: coordinate k of the
// candidate in lane i as fp16 at 2*(k*8+i), then the candidates' indices as
// uint32 at 16*g+4*i (all little endian; 32 bits, so that the search blends
// them straight from memory). Lane i holds candidate i for groups of 8; for
// groups of 4, where a register holds two codewords, lanes 0..7 hold
// candidates 0, 2, 4, 6, 1, 3, 5, 7 (laneCandidate4). The search then needs
// no horizontal sums, reads about half the memory of float32 codewords, and
// finds the winner's index in the memory it has just read.
func toLanes(values []float32, g int, pts []int32) []byte {
	run := laneRun(g)
	t := make([]byte, len(pts)/8*run)
	for b := 0; b < len(pts)/8; b++ {
		blk := t[b*run : (b+1)*run]
		for lane := 0; lane < 8; lane++ {
			c := lane
			if g == 4 {
				c = int(laneCandidate4[lane])
			}
			p := int(pts[8*b+c])
			for k := 0; k < g; k++ {
				v := values[p*g+k]
				h := formats.FP32ToFP16(v)
				if v != float32(int8(v)) || formats.FP16ToFP32(h) != v {
					panic("trellis: codeword value is not a small integer")
				}
				binary.LittleEndian.PutUint16(blk[2*(k*8+lane):], h)
			}
			binary.LittleEndian.PutUint32(blk[16*g+4*lane:], uint32(p))
		}
	}
	return t
}

// laneRun is the number of bytes a run of eight codewords of g values takes
// in lane layout.
func laneRun(g int) int { return 16*g + 32 }

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
