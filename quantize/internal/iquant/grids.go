package iquant

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"

	"github.com/gquant/gquant/quantize/internal/kernel"

	"github.com/gquant/gquant/internal/tables"
)

// A codeGrid is the quantizer's view of one IQ lattice, built the way the
// reference's iq2xs_init_impl / iq3xs_init_impl build it: the grid points
// (each coordinate stored as 2l+1 for level l), a map from every packed level
// vector to its grid index, and, for level vectors off the grid, the list of
// grid points at the nwant smallest distinct squared distances, in order of
// (distance, index) as the reference's qsort leaves them.
type codeGrid struct {
	dim, bits  int
	points     []int8   // dim values 2l+1 per grid point
	levels     []uint8  // dim levels l per grid point
	kmap       []int32  // packed levels -> grid index, or ^(laneOff<<9 | chunks) off the grid
	nbStart    []int32  // packed levels off the grid -> offset into neighbours
	neighbours []uint16 // per off-grid vector: count, dim level spans, candidates

	// The vector search's view of the candidates: per off-grid vector
	// (from laneOff, in chunks of eight, both kept in kmap so that one load
	// tells whether u is on the grid and where its candidates are) one word
	// per candidate, padded to a multiple of eight with copies of the last,
	// holding for each coordinate c the 3-bit lane (c<<bits + level) & 7 of
	// its table register at bit 3c (laneIndex turns a word back into the
	// candidate's grid index). expand[p][j] is the coordinate of lane j of
	// table register p, qvec the value 2l+1 of the level of each lane.
	lanes  []uint32
	expand [4][8]int32
	qvec   [8]float32
}

func buildCodeGrid(kgrid []uint16, dim, bits, mapSize, nwant int) *codeGrid {
	if !(dim == 8 && bits == 2) && !(dim == 4 && bits == 3) {
		// pack and the vector search's table layout assume one of these.
		panic("iquant: grids are 8 levels of 2 bits or 4 of 3 bits")
	}
	g := &codeGrid{dim: dim, bits: bits, points: make([]int8, len(kgrid)*dim), levels: make([]uint8, len(kgrid)*dim), kmap: make([]int32, mapSize), nbStart: make([]int32, mapSize)}
	mask := 1<<bits - 1
	for p := range g.expand {
		for j := range g.expand[p] {
			g.expand[p][j] = int32((8*p + j) >> bits)
		}
	}
	for j := range g.qvec {
		g.qvec[j] = float32(2*(j&mask) + 1)
	}
	for k, v := range kgrid {
		for i := 0; i < dim; i++ {
			g.levels[k*dim+i] = uint8(int(v) >> (bits * i) & mask)
			g.points[k*dim+i] = int8(2*g.levels[k*dim+i] + 1)
		}
	}
	for i := range g.kmap {
		g.kmap[i] = -1
	}
	for k, v := range kgrid {
		g.kmap[v] = int32(k)
	}
	// Squared distances come from two tables over half level vectors: the
	// distance of u to grid point j is half[uLo][jLo] + half[uHi][jHi].
	halfBits := bits * dim / 2
	halfSize := 1 << halfBits
	half := make([]uint16, halfSize*halfSize)
	for a := 0; a < halfSize; a++ {
		for b := 0; b < halfSize; b++ {
			d2 := 0
			for i := 0; i < dim/2; i++ {
				d := 2 * (a>>(bits*i)&mask - b>>(bits*i)&mask)
				d2 += d * d
			}
			half[a*halfSize+b] = uint16(d2)
		}
	}
	gLo, gHi := make([]uint16, len(kgrid)), make([]uint16, len(kgrid))
	for j, v := range kgrid {
		gLo[j], gHi[j] = v&uint16(halfSize-1), v>>halfBits
	}
	dist := make([]uint16, len(kgrid))
	gLo, gHi = gLo[:len(dist)], gHi[:len(dist)]
	var buckets [3][]uint16
	if nwant > len(buckets) {
		panic("iquant: at most 3 neighbour distances")
	}
	for u := range g.kmap {
		if g.kmap[u] >= 0 {
			continue
		}
		rowLo := half[(u&(halfSize-1))*halfSize:][:halfSize]
		rowHi := half[(u>>halfBits)*halfSize:][:halfSize]
		// The nwant smallest distinct distances (levels, ascending, unused
		// entries 0xffff), kept while the distances are computed; then
		// every point at one of them, by distance, then index (what sorting
		// (d2, j) pairs gives).
		levels := [3]uint16{0xffff, 0xffff, 0xffff}
		top := nwant - 1
		for j := range dist {
			d := rowLo[gLo[j]&uint16(halfSize-1)] + rowHi[gHi[j]&uint16(halfSize-1)]
			dist[j] = d
			if d >= levels[top] {
				continue
			}
			for k := 0; k <= top; k++ {
				if d == levels[k] {
					break
				}
				if d < levels[k] {
					copy(levels[k+1:top+1], levels[k:top])
					levels[k] = d
					break
				}
			}
		}
		nlev := 0
		for nlev < nwant && levels[nlev] != 0xffff {
			nlev++
		}
		for k := range buckets {
			buckets[k] = buckets[k][:0]
		}
		for j, d := range dist {
			if d > levels[top] {
				continue
			}
			for k := 0; k < nlev; k++ {
				if d == levels[k] {
					buckets[k] = append(buckets[k], uint16(j))
					break
				}
			}
		}
		start := len(g.neighbours)
		g.nbStart[u] = int32(start)
		g.neighbours = append(g.neighbours, make([]uint16, 1+dim)...)
		for _, b := range buckets[:nlev] {
			g.neighbours = append(g.neighbours, b...)
		}
		g.neighbours[start] = uint16(len(g.neighbours) - start - 1 - dim)
		for i := 0; i < dim; i++ {
			lo, hi := mask, 0
			for _, n := range g.neighbours[start+1+dim:] {
				l := int(g.levels[int(n)*dim+i])
				lo, hi = min(lo, l), max(hi, l)
			}
			g.neighbours[start+1+i] = uint16(lo | hi<<8)
		}
		cands := g.neighbours[start+1+dim:]
		chunks := (len(cands) + 7) / 8
		if len(g.lanes) >= 1<<22 || chunks >= 1<<9 {
			panic("iquant: neighbour lanes overflow their kmap encoding")
		}
		g.kmap[u] = ^int32(len(g.lanes)<<9 | chunks)
		for k := 0; k < chunks*8; k++ {
			n := int(cands[min(k, len(cands)-1)])
			var word uint32
			for c := 0; c < dim; c++ {
				word |= uint32((c<<bits+int(g.levels[n*dim+c]))&7) << (3 * c)
			}
			g.lanes = append(g.lanes, word)
		}
	}
	return g
}

// laneIndex returns the grid index of the candidate in lanes[i]. The low
// bits of each coordinate's 3-bit lane field are its level, so the word
// packs into the candidate's kmap key: a lookup in kmap (a few hundred KB,
// and just read for the searched vector) instead of in a table of grid
// indices parallel to lanes (3 MB for iq1_s, a cache miss on the critical
// path after every search).
func (g *codeGrid) laneIndex(i int) int {
	w := g.lanes[i]
	if g.bits == 3 {
		return int(g.kmap[w&0xfff]) // fields of 3 bits are the levels as pack lays them out
	}
	// Eight 2-bit levels in the low bits of 3-bit fields: drop the top bit
	// of each field, then close the gaps in three halving steps.
	w &= 0x6db6db
	w = w&0x0c30c3 | w&0x618618>>1 // fields at 0, 2, 6, 8, 12, 14, 18, 20
	w = w&0x00f00f | w&0x3c03c0>>2 // nibbles at 0, 4, 12, 16
	w = w&0xff | w>>4&0xff00
	return int(g.kmap[w])
}

// An nbJob is one off-grid group for the vector search: the group's
// position in the values (in groups of dim), where its candidates start in
// lanes and how many chunks of eight they fill; the search sets pos (the
// position in neighboursOf(u), or -1). The assembly reads group, laneOff,
// chunks and scale and writes pos, and assumes this layout (24 bytes).
type nbJob struct {
	group, laneOff, chunks, pos int32
	u                           int32
	scale                       float32 // the trial scale of the search
}

// job describes the search of off-grid vector u for the values of group k.
func (g *codeGrid) job(k, u int) nbJob {
	info := ^g.kmap[u]
	return nbJob{group: int32(k), laneOff: info >> 9, chunks: info & 511, u: int32(u)}
}

// searchJobs runs the vector search (neighbourJobsAVX2) of the jobs over
// groups of dim values of xval and weight, with level l of coordinate c
// standing for q[(c<<bits + l) & 7].
func (g *codeGrid) searchJobs(xval, weight []float32, scale float32, q *[8]float32, jobs []nbJob) {
	if len(jobs) == 0 {
		return
	}
	for i := range jobs {
		jobs[i].scale = scale
	}
	g.searchJobsScaled(xval, weight, q, jobs)
}

// searchJobsScaled is searchJobs with each job's own scale (nbJob.scale).
func (g *codeGrid) searchJobsScaled(xval, weight []float32, q *[8]float32, jobs []nbJob) {
	if len(jobs) == 0 {
		return
	}
	last := 0
	for _, j := range jobs {
		last = max(last, int(j.group+1)*g.dim)
	}
	_, _ = xval[last-1], weight[last-1] // the assembly reads every job's group
	neighbourJobsAVX2(&xval[0], &weight[0], q, &g.expand, &g.lanes[0], &jobs[0], len(jobs), g.dim)
}

// findBestNeighbours is findBestNeighbour for several groups of dim values
// at one scale: each job's group k gets its levels in L[k*dim:]. It reports
// false, with L partly written, where a group has no neighbour at a finite
// distance (the reference asserts there; the caller returns errNoNeighbour).
func (g *codeGrid) findBestNeighbours(jobs []nbJob, xval, weight []float32, scale float32, L []int8) bool {
	if !useNeighbourAVX2 {
		for _, j := range jobs {
			o := int(j.group) * g.dim
			if g.findBestNeighbour(int(j.u), xval[o:o+g.dim], weight[o:o+g.dim], scale, L[o:]) < 0 {
				return false
			}
		}
		return true
	}
	g.searchJobs(xval, weight, scale, &g.qvec, jobs)
	for _, j := range jobs {
		if j.pos < 0 {
			return false
		}
		g.setLevels(g.laneIndex(int(j.laneOff+j.pos)), L[int(j.group)*g.dim:])
	}
	return true
}

// neighboursOf returns the candidate grid points of an off-grid level vector.
func (g *codeGrid) neighboursOf(u int) []uint16 {
	start := int(g.nbStart[u])
	n := int(g.neighbours[start])
	return g.neighbours[start+1+g.dim : start+1+g.dim+n]
}

// levelSpansOf returns, per coordinate, the lowest and highest level (lo |
// hi<<8) among the candidate grid points of an off-grid level vector.
func (g *codeGrid) levelSpansOf(u int) []uint16 {
	start := int(g.nbStart[u])
	return g.neighbours[start+1 : start+1+g.dim]
}

// pack returns the packed level vector of L (dim levels). The grids are
// 8 levels of 2 bits or 4 of 3 bits, spelled out so the shifts are constants.
//
// The levels are read as one little-endian word and their bit fields folded
// together (levels are 0..2^bits-1, as the quantizers produce them).
func (g *codeGrid) pack(L []int8) int {
	if g.bits == 2 {
		w := binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Pointer(&L[:8][0])), 8))
		w = (w | w>>6) & 0x000f000f000f000f // level pairs as nibbles of 16-bit lanes
		w |= w >> 12                        // nibble pairs as bytes 0 and 4
		return int(w&0xff | w>>24&0xff00)
	}
	w := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Pointer(&L[:4][0])), 4))
	w |= w >> 5 // level pairs in bits 0..5 and 16..21
	return int(w&0x3f | w>>10&0xfc0)
}

// onGrid reports whether every group of g.dim levels in L is a grid point
// (levels above maxL never are: pack would fold them into other fields).
func (g *codeGrid) onGrid(L []int8, maxL int) bool {
	for _, l := range L {
		if int(l) > maxL || l < 0 {
			return false
		}
	}
	for k := 0; k+g.dim <= len(L); k += g.dim {
		if g.kmap[g.pack(L[k:])] < 0 {
			return false
		}
	}
	return true
}

// setLevels writes the levels of grid point k into L.
func (g *codeGrid) setLevels(k int, L []int8) {
	if g.dim == 8 {
		// One 8-byte move (levels are 0..7, the same bytes as int8).
		dst := unsafe.Slice((*byte)(unsafe.Pointer(&L[:8][0])), 8)
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(g.levels[k*8:k*8+8]))
		return
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(&L[:4][0])), 4)
	binary.LittleEndian.PutUint32(dst, binary.LittleEndian.Uint32(g.levels[k*4:k*4+4]))
}

// findBestNeighbour is iq2_find_best_neighbour / iq3_find_best_neighbour:
// among the neighbours of u, the point closest to xval at this scale in the
// weighted squared distance; L receives its levels. It returns -1, leaving L
// as it was, where no neighbour is at a finite distance: the values are so
// large that every sum overflows, where the reference asserts (its callers
// then return errNoNeighbour).
//
// Per neighbour the reference sums weight*diff*diff over the coordinates with
// diff = scale*q - x fused and the sum fused. diff and weight*diff depend only
// on the coordinate and its level, so they are computed once per call for
// every level; each neighbour then costs one fused add per coordinate.
func (g *codeGrid) findBestNeighbour(u int, xval, weight []float32, scale float32, L []int8) int {
	var idx int
	if useNeighbourAVX2 {
		jobs := [1]nbJob{g.job(0, u)}
		g.searchJobs(xval, weight, scale, &g.qvec, jobs[:])
		idx = -1
		if k := jobs[0].pos; k >= 0 {
			idx = g.laneIndex(int(jobs[0].laneOff + k))
		}
	} else {
		var diffs, wdiffs [8 * 8]float32 // [coordinate*8 + level]
		nonNegative := g.neighbourTables(u, xval, weight, scale, &diffs, &wdiffs)
		idx = g.bestNeighbourGo(g.neighboursOf(u), &diffs, &wdiffs, nonNegative)
	}
	if idx < 0 {
		return -1
	}
	g.setLevels(idx, L)
	return idx
}

// snapGroups puts groups 0..n-1 of L (g.dim values each) on the grid at the
// given scale, skipping those marked in skip (nil: none): each value gets
// its nearest level of x/scale (at most maxL), and a group whose levels are
// not a grid point takes its best neighbour. The final re-fit of iq2_xxs,
// iq3_xxs and iq3_s.
//
// The off-grid groups' neighbour searches run as one batch
// (findBestNeighbours), eight at a time: the groups are disjoint, so the
// order of the searches does not matter. It reports false where a search
// finds no neighbour at a finite distance (see findBestNeighbours).
func (g *codeGrid) snapGroups(n int, scale float32, maxL int, xval, weight []float32, L []int8, skip []bool) bool {
	id := 1 / scale
	d := g.dim
	var jobs [8]nbJob
	nj := 0
	for k := 0; k < n; k++ {
		if skip != nil && skip[k] {
			continue
		}
		u := 0
		for i := 0; i < d; i++ {
			u |= int(levelOf(id, xval[d*k+i], maxL)) << (g.bits * i)
		}
		if gi := int(g.kmap[u]); gi >= 0 {
			g.setLevels(gi, L[d*k:])
			continue
		}
		if nj == len(jobs) {
			if !g.findBestNeighbours(jobs[:nj], xval, weight, scale, L) {
				return false
			}
			nj = 0
		}
		jobs[nj] = g.job(k, u)
		nj++
	}
	return g.findBestNeighbours(jobs[:nj], xval, weight, scale, L)
}

// neighbourTables fills diffs and wdiffs ([coordinate*8 + level]) for the
// levels some neighbour of u uses, and reports whether no weight is negative.
func (g *codeGrid) neighbourTables(u int, xval, weight []float32, scale float32, diffs, wdiffs *[64]float32) bool {
	dim := g.dim
	xval, weight = xval[:dim], weight[:dim]
	spans := g.levelSpansOf(u)[:dim]
	nonNegative := true
	for i, x := range xval {
		w := weight[i]
		nonNegative = nonNegative && w >= 0
		// Only the levels some candidate uses at this coordinate.
		for l := int(spans[i] & 7); l <= int(spans[i]>>8&7); l++ {
			q := float32(2*l + 1)
			d := fmaTieFree(scale, q, -x)
			diffs[i*8+l&63] = d
			wdiffs[i*8+l&63] = w * d
		}
	}
	return nonNegative
}

// bestNeighbourGo is the portable search: the grid index among cands with
// the smallest sum, first on ties, or -1 when no sum is below MaxFloat32.
func (g *codeGrid) bestNeighbourGo(cands []uint16, diffs, wdiffs *[64]float32, nonNegative bool) int {
	dim := g.dim
	best := float32(math.MaxFloat32)
	idx := -1
	for _, n := range cands {
		p := g.levels[int(n)*dim : int(n)*dim+dim]
		// With no negative weight every term weight*diff*diff is >= 0
		// and rounding is monotonic, so the partial sums never decrease:
		// once one reaches best, this neighbour cannot win.
		var d2 float32
		for i, l := range p {
			j := i*8 + int(l&7)
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
	return idx
}

var (
	gridOnce                                  [6]sync.Once
	gridIQ2XXS, gridIQ2XS, gridIQ2S, gridIQ1S *codeGrid
	gridIQ3XXS, gridIQ3S                      *codeGrid
)

// The grids are built on first use: the larger ones take a fraction of a second.
func iq2xxsGrid() *codeGrid {
	gridOnce[0].Do(func() { gridIQ2XXS = buildCodeGrid(tables.KGrid2Bit256[:], 8, 2, 43692, 2) })
	return gridIQ2XXS
}

func iq2xsGrid() *codeGrid {
	gridOnce[1].Do(func() { gridIQ2XS = buildCodeGrid(tables.KGrid2Bit512[:], 8, 2, 43692, 2) })
	return gridIQ2XS
}

func iq2sGrid() *codeGrid {
	gridOnce[2].Do(func() { gridIQ2S = buildCodeGrid(tables.KGrid2Bit1024[:], 8, 2, 43692, 1) })
	return gridIQ2S
}

func iq1sGrid() *codeGrid {
	gridOnce[3].Do(func() { gridIQ1S = buildCodeGrid(tables.KGrid1Bit2048[:], 8, 2, 43692, 3) })
	return gridIQ1S
}

func iq3xxsGrid() *codeGrid {
	gridOnce[4].Do(func() { gridIQ3XXS = buildCodeGrid(tables.KGrid3Bit256[:], 4, 3, 4096, 2) })
	return gridIQ3XXS
}

func iq3sGrid() *codeGrid {
	gridOnce[5].Do(func() { gridIQ3S = buildCodeGrid(tables.KGrid3Bit512[:], 4, 3, 4096, 3) })
	return gridIQ3S
}
