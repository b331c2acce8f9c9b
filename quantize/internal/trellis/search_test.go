package trellis

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/stressrows"
)

// referenceSearch is the reference's AVX2 search written out lane by lane
// over codewords stored one after the other (group values each): every run
// of eight candidates gives each lane one score, summed in the order of the
// reference's horizontal adds; a lane keeps its first strict minimum, and
// the lanes are then compared in order.
func referenceSearch(values []float32, g int, vx, w []float32) (float32, int) {
	var best [8]float32
	var index [8]int
	for i := range best {
		best[i], index[i] = float32(math.Inf(1)), -1
	}
	e := make([]float32, g)
	for j := 0; j < len(values)/g; j += 8 {
		for lane := 0; lane < 8; lane++ {
			c := j + lane
			if g == 4 {
				c = j + int(laneCandidate4[lane])
			}
			for k := 0; k < g; k++ {
				d := values[c*g+k] - vx[k]
				e[k] = float32(w[k] * float32(d*d))
			}
			var score float32
			if g == 8 {
				score = float32(float32(e[0]+e[4])+float32(e[2]+e[6])) + float32(float32(e[1]+e[5])+float32(e[3]+e[7]))
			} else {
				score = float32(e[0]+e[2]) + float32(e[1]+e[3])
			}
			if score < best[lane] {
				best[lane], index[lane] = score, c
			}
		}
	}
	b, jb := float32(math.Inf(1)), -1
	for lane := range best {
		if best[lane] < b {
			b, jb = best[lane], index[lane]
		}
	}
	return b, jb
}

// TestNearest checks the portable and the assembly searches against the
// lane-by-lane model of the reference on random codebooks of integers (as
// the trellis codewords are): small values, inputs and weights (many exact
// ties, which the lane order must break), and the full range of values with
// general float inputs and weights.
func TestNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, g := range []int{8, 4} {
		for trial := 0; trial < 3000; trial++ {
			n := 8 * (1 + r.IntN(40))
			ints := trial%2 == 0
			draw := func(scale float64) float32 {
				if ints {
					return float32(r.IntN(int(2*scale+1))) - float32(scale)
				}
				return float32(scale * r.NormFloat64())
			}
			codeword := func() float32 {
				if ints {
					return draw(4)
				}
				return float32(r.IntN(253) - 126)
			}
			values := make([]float32, n*g)
			for i := range values {
				values[i] = codeword()
			}
			vx, w := make([]float32, g), make([]float32, g)
			for k := range vx {
				vx[k] = draw(4)
				if !ints {
					vx[k] = draw(40)
				}
				w[k] = float32(math.Abs(float64(draw(2))))
				if ints {
					w[k] = float32(1 + r.IntN(2))
				}
			}
			// The codewords of the cluster are a random choice of those
			// of a larger codebook.
			book := make([]float32, 2*len(values))
			for i := range book {
				book[i] = codeword()
			}
			pts := make([]int32, n)
			for i, p := range r.Perm(2 * n)[:n] {
				pts[i] = int32(p)
				copy(book[p*g:(p+1)*g], values[i*g:(i+1)*g])
			}
			cb := &codebook{group: g, values: book, inCluster: [][]int32{pts}, lanes: [][]byte{toLanes(book, g, pts)}}
			wantScore, want := referenceSearch(values, g, vx, w)
			if want >= 0 {
				want = int(pts[want])
			}
			fl := cb.portableLanes()[0]
			var gotScore float32
			var got int32
			if g == 8 {
				gotScore, got = nearest8Go(fl.values, fl.ids, (*[8]float32)(vx), (*[8]float32)(w))
			} else {
				gotScore, got = nearest4Go(fl.values, fl.ids, (*[4]float32)(vx), (*[4]float32)(w))
			}
			if int(got) != want || math.Float32bits(gotScore) != math.Float32bits(wantScore) {
				t.Fatalf("group %d trial %d: portable search %d (score %v), reference %d (%v)", g, trial, got, gotScore, want, wantScore)
			}
			if want < 0 || !useAVX2 {
				continue
			}
			var gotAsm int32
			if g == 8 {
				gotAsm, _ = cb.nearest8(0, (*[8]float32)(vx), (*[8]float32)(w))
			} else {
				gotAsm, _ = cb.nearest4(0, (*[4]float32)(vx), (*[4]float32)(w))
			}
			if int(gotAsm) != want {
				t.Fatalf("group %d trial %d: assembly search %d, reference %d", g, trial, gotAsm, want)
			}
		}
	}
}

// TestLaneLayout checks that toLanes puts coordinate k of the candidate in
// lane i of a run at fp16 number k*8+i and its index at byte 16*g+2*i.
func TestLaneLayout(t *testing.T) {
	for _, g := range []int{8, 4} {
		values := make([]float32, 16*g)
		for i := range values {
			values[i] = float32(i - 8*g)
		}
		pts := []int32{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}
		lanes := toLanes(values, g, pts)
		run := laneRun(g)
		for b := 0; b < 2; b++ {
			for lane := 0; lane < 8; lane++ {
				c := lane
				if g == 4 {
					c = int(laneCandidate4[lane])
				}
				p := pts[8*b+c]
				for k := 0; k < g; k++ {
					if got, want := formats.FP16ToFP32(binary.LittleEndian.Uint16(lanes[b*run+2*(k*8+lane):])), values[int(p)*g+k]; got != want {
						t.Fatalf("group %d run %d lane %d coordinate %d: %v, want %v", g, b, lane, k, got, want)
					}
				}
				if got := int32(binary.LittleEndian.Uint32(lanes[b*run+16*g+4*lane:])); got != p {
					t.Fatalf("group %d run %d lane %d: index %d, want %d", g, b, lane, got, p)
				}
			}
		}
	}
}

// TestFMAFast checks the inlined fused multiply-add against kernel.FMA32 on
// random operands and on products that land halfway between two float32
// values plus a tiny or zero addend, where rounding the float64 result again
// can go wrong: there fmaFast must report a tie.
func TestFMAFast(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ties := 0
	for i := 0; i < 400000; i++ {
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64())
		c := float32(r.NormFloat64())
		if i%2 == 1 {
			// (2^12+i)(2^12+j)/2^24 has up to 26 significant bits.
			a = float32(4096+r.IntN(4096)) / 4096 * float32(r.IntN(3)-1|1)
			b = float32(4096+r.IntN(4096)) / 4096 * float32(r.IntN(3)-1|1)
			c = float32([]float64{0, 1e-30, -1e-30, 1e-9, -1e-9}[r.IntN(5)])
		}
		got, tie := fmaFast(a, b, c)
		want := kernel.FMA32(a, b, c)
		if tie != 0 {
			ties++
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fmaFast(%v, %v, %v) = %v without a tie, kernel.FMA32 %v", a, b, c, got, want)
		}
	}
	if ties < 1000 {
		t.Fatalf("only %d ties: the test does not reach the tie case", ties)
	}
}

// TestKernelsPortable quantizes seeded random rows of every rowKind (256 or
// 512 weights, plain and with an importance vector that is zero on whole
// blocks) at every assembly level and wants the portable search's bytes
// (the portable search follows the reference: TestRefCases and the golden
// tests in ../ check it).
func TestKernelsPortable(t *testing.T) {
	if len(asmLevels) < 2 {
		t.Skip("no assembly searches on this CPU")
	}
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	perKind := 3
	if testing.Short() {
		perKind = 1
	}
	r := rand.New(rand.NewPCG(7, 8))
	for ik, kind := range rowKinds {
		for n := 0; n < perKind; n++ {
			cols := 256 * (1 + r.IntN(2))
			if kind.Name == "zero-half" || kind.Name == "one-block" {
				cols = 512
			}
			src := make([]float32, cols)
			stressrows.MakeRow(kind, r, src)
			imatrix := makeImatrix(r, cols)
			for _, typ := range refTypes {
				// Every type sees each kind, with and without the imatrix,
				// but not every combination each time.
				var w []float32
				if (ik+n+int(typ))%2 == 1 {
					w = imatrix
				}
				k := Kernels(kernel.Options{})[typ]
				rs, err := typ.RowSize(int64(cols))
				if err != nil {
					t.Fatal(err)
				}
				portable := make([]byte, rs)
				setAsmLevel(0)
				if err := k(portable, src, 1, cols, w); err != nil {
					t.Fatal(err)
				}
				for _, level := range asmLevels[1:] {
					setAsmLevel(level)
					asm := make([]byte, rs)
					if err := k(asm, src, 1, cols, w); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(asm, portable) {
						t.Errorf("%s, %s row %d of %d (imatrix %v): level %d gives other bytes than the portable search", typ, kind.Name, n, cols, w != nil, level)
					}
				}
			}
		}
	}
}

// TestFindBestScale checks the fused assembly sums against the portable
// ones, bit for bit, for groups of 8 and 4.
func TestFindBestScale(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, g := range []int{8, 4} {
		cb := &codebook{group: g, values: make([]float32, 1024*g)}
		for i := range cb.values {
			cb.values[i] = float32(r.IntN(253) - 126)
		}
		for trial := 0; trial < 2000; trial++ {
			xb, w := make([]float32, blockSize), make([]float32, blockSize)
			for i := range xb {
				xb[i] = float32(0.02 * r.NormFloat64())
				w[i] = float32(r.ExpFloat64())
			}
			idx := make([]int32, blockSize/g)
			for i := range idx {
				idx[i] = int32(r.IntN(1024))
			}
			d1, s1 := cb.findBestScale(xb, w, idx)
			useAVX2 = false
			d2, s2 := cb.findBestScale(xb, w, idx)
			useAVX2 = true
			if math.Float32bits(d1) != math.Float32bits(d2) || math.Float32bits(s1) != math.Float32bits(s2) {
				t.Fatalf("group %d trial %d: assembly (%v, %v), portable (%v, %v)", g, trial, d1, s1, d2, s2)
			}
		}
	}
}

// TestSearchBlock checks the one-call block searches, exhaustive and pruned
// (indices and the scale sums), against the per-group searches and
// findBestScale on the real codebooks: inputs spread over and beyond the
// codewords' range, zero and tiny weights, equal inputs, integer inputs with
// integer weights at scale 1 (exact ties between codewords, which the
// pruned search hands to the reference's scan), groups of zero weights
// (every score 0), the codewords themselves (a score of 0), negative
// weights and inputs near 2^60 after scaling (outside the pruned search's
// range).
func TestSearchBlock(t *testing.T) {
	if len(asmLevels) < 3 {
		t.Skip("no assembly searches on this CPU")
	}
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	books := []struct {
		name string
		book func() *codebook
	}{{"iq1_kt", iq1ktBook}, {"iq2_kt", iq2ktBook}, {"iq3_kt", iq3ktBook}, {"iq4_kt", iq4ktBook}, {"iq4_kt/alt", iq4ktBookAlt}}
	r := rand.New(rand.NewPCG(13, 14))
	const kinds = 9
	for _, tc := range books {
		if testing.Short() && tc.name != "iq1_kt" && tc.name != "iq4_kt" {
			continue
		}
		cb := tc.book()
		ng := blockSize / cb.group
		trials := 3000
		if cb.group == 8 && tc.name != "iq1_kt" {
			trials = 600
		}
		for trial := 0; trial < trials; trial++ {
			kind := trial % kinds
			xb, w := make([]float32, blockSize), make([]float32, blockSize)
			d := float32(r.NormFloat64()) / 60
			for i := range xb {
				switch kind {
				case 0:
					xb[i] = float32(r.NormFloat64())
				case 1:
					xb[i] = float32(r.IntN(5) - 2) // many equal distances
				case 2:
					xb[i] = float32(3 * r.NormFloat64()) // far outside the codewords
				case 3:
					xb[i] = float32(r.NormFloat64() / 1e3)
				default:
					xb[i] = float32(r.NormFloat64())
				}
				w[i] = float32(r.ExpFloat64())
				if r.IntN(8) == 0 {
					w[i] = [...]float32{0, 1e-30, 1e-4}[r.IntN(3)]
				}
			}
			switch kind {
			case 4: // integers at scale 1, integer weights: exact ties
				d = 1
				for i := range xb {
					xb[i] = float32(r.IntN(81) - 40)
					w[i] = float32(1 + r.IntN(2))
				}
			case 5: // a group of zero weights: every score 0
				g := r.IntN(ng) * cb.group
				clear(w[g : g+cb.group])
			case 6: // codewords, scaled by d
				d = 1 / float32(1+r.IntN(64))
				for l := 0; l < ng; l++ {
					cw := r.IntN(len(cb.values) / cb.group)
					for k := 0; k < cb.group; k++ {
						xb[l*cb.group+k] = d * cb.values[cw*cb.group+k]
					}
				}
			case 7: // a negative weight
				w[r.IntN(blockSize)] = -float32(r.ExpFloat64())
			case 8: // near 2^60 after scaling, on either side
				d = 1
				xb[r.IntN(blockSize)] = [...]float32{0x1p60, 0x1.000002p60, -0x1.8p60, 0x1.fffffep59}[r.IntN(4)]
			}
			if cb.abs {
				for i := range xb {
					xb[i] = abs32(xb[i])
				}
			}
			if trial%50 == 0 {
				d = 0
			}
			wantIdx := make([]int32, ng)
			useBlockSearch = false
			if !cb.findBestMatch(d, xb, w, wantIdx) {
				t.Fatalf("%s trial %d (kind %d): per-group search found no codeword", tc.name, trial, kind)
			}
			wantScale, wantScore := cb.findBestScale(xb, w, wantIdx)
			useBlockSearch = true
			for _, level := range asmLevels[1:] {
				setAsmLevel(level)
				gotIdx := make([]int32, ng)
				gotScale, gotScore, ok := cb.matchAndScale(d, xb, w, gotIdx)
				if !ok || !slices.Equal(gotIdx, wantIdx) {
					t.Fatalf("%s trial %d (kind %d) level %d: block search %v, per-group search %v", tc.name, trial, kind, level, gotIdx, wantIdx)
				}
				if math.Float32bits(gotScale) != math.Float32bits(wantScale) || math.Float32bits(gotScore) != math.Float32bits(wantScore) {
					t.Fatalf("%s trial %d (kind %d) level %d: block search scale %v score %v, per-group %v %v", tc.name, trial, kind, level, gotScale, gotScore, wantScale, wantScore)
				}
				if !cb.findBestMatch(d, xb, w, gotIdx) || !slices.Equal(gotIdx, wantIdx) {
					t.Fatalf("%s trial %d (kind %d) level %d: findBestMatch %v, per-group search %v", tc.name, trial, kind, level, gotIdx, wantIdx)
				}
			}
		}
	}
}

// TestMatchAndScale2 holds matchAndScale2's single pass at two scales, the
// one that scores every codeword (searchBlock8x2AVX512, level 5) and the
// filtered one (searchFiltered8x2AVX512, level 6), to two matchAndScale
// calls, bit for bit, on the inputs of TestSearchBlock's kinds at pairs of
// scales of either sign: 10 % apart as iq1_kt's trials are (where a
// coordinate near a cluster's midpoint puts a group in two clusters, and
// the pass declines), equal, and far apart; and with weights so large that
// the filter hands the block to the full pass.
func TestMatchAndScale2(t *testing.T) {
	if len(asmLevels) < 6 {
		t.Skip("no AVX-512 searches on this CPU")
	}
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	r := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct {
		name string
		book func() *codebook
	}{{"iq1_kt", iq1ktBook}, {"iq2_kt", iq2ktBook}} {
		if testing.Short() && tc.name != "iq1_kt" {
			continue
		}
		cb := tc.book()
		fused, filtered, handed := 0, 0, 0
		for trial := 0; trial < 4000; trial++ {
			xb, w := make([]float32, blockSize), make([]float32, blockSize)
			for i := range xb {
				xb[i] = float32(r.NormFloat64())
				w[i] = float32(r.ExpFloat64())
				if r.IntN(8) == 0 {
					w[i] = [...]float32{0, 1e-30, 1e-4}[r.IntN(3)]
				}
			}
			d1 := float32(r.NormFloat64()) / 60
			d2 := d1 * [...]float32{124.0 / 116, 1, 3}[r.IntN(3)]
			switch trial % 6 {
			case 1: // integers at scale 1, integer weights: exact ties
				d1, d2 = 1, 1
				for i := range xb {
					xb[i] = float32(r.IntN(81) - 40)
					w[i] = float32(1 + r.IntN(2))
				}
			case 2: // a group of zero weights
				g := 8 * r.IntN(4)
				clear(w[g : g+8])
			case 3: // a negative weight: out of the search's range
				w[r.IntN(blockSize)] = -1
			case 4: // near 2^60 after scaling
				d1, d2 = 1, 2
				xb[r.IntN(blockSize)] = 0x1p60
			case 5: // a bound beyond the filter's 2^100
				w[r.IntN(blockSize)] = 1e27
			}
			var want1, want2, got1, got2 [blockSize / 8]int32
			setAsmLevel(4)
			ws1, we1, ok1 := cb.matchAndScale(d1, xb, w, want1[:])
			ws2, we2, ok2 := cb.matchAndScale(d2, xb, w, want2[:])
			if !ok1 || !ok2 {
				t.Fatalf("%s trial %d (d %v, %v): no codeword", tc.name, trial, d1, d2)
			}
			for _, level := range []int{5, 6} {
				setAsmLevel(level)
				gs1, ge1, gs2, ge2, ok := cb.matchAndScale2(d1, d2, xb, w, got1[:], got2[:])
				if !ok || got1 != want1 || got2 != want2 || math.Float32bits(gs1) != math.Float32bits(ws1) || math.Float32bits(ge1) != math.Float32bits(we1) ||
					math.Float32bits(gs2) != math.Float32bits(ws2) || math.Float32bits(ge2) != math.Float32bits(we2) {
					t.Fatalf("%s trial %d level %d (d %v, %v): one pass %v %v (scales %v %v, scores %v %v), two searches %v %v (%v %v, %v %v)",
						tc.name, trial, level, d1, d2, got1, got2, gs1, gs2, ge1, ge2, want1, want2, ws1, ws2, we1, we2)
				}
			}
			if d1 == 0 || d2 == 0 {
				continue
			}
			p, q := cb.pairs(), cb.pruned16Layout()
			x, wv := (*[blockSize]float32)(xb), (*[blockSize]float32)(w)
			if searchBlock8x2AVX512(&p.lanes[0], &p.spans[0], &cb.mid, 1/d1, 1/d2, x, wv, &got1, &got2, &cb.values[0], new([16]float32), new([16]float32)) == 0 {
				fused++
			}
			switch searchFiltered8x2AVX512(&q.pairs[0], &q.ids[0], &q.spans[0], &p.lanes[0], &p.spans[0], &cb.mid, 1/d1, 1/d2, x, wv, &got1, &got2, &cb.values[0], new([16]float32), new([16]float32)) {
			case 0:
				filtered++
			case 3:
				handed++
			}
		}
		if fused < 1000 || filtered < 1000 || handed < 100 {
			t.Errorf("%s: of 4000 trials, the full pass ran for %d, the filtered one for %d and handed %d to the full one", tc.name, fused, filtered, handed)
		}
	}
}

// TestFilterClusters checks that every cluster of iq1_kt, the type whose
// trials take the filtered search, fits the filter (filterMaxPairs pairs),
// so that it never hands a block to the full pass for its size.
func TestFilterClusters(t *testing.T) {
	q := iq1ktBook().pruned16Layout()
	if q.spans == nil {
		t.Fatal("iq1_kt has no pruned layout")
	}
	for c := 0; c < len(q.spans)/4; c++ {
		if n := q.spans[4*c+1]; n == 0 || n > filterMaxPairs {
			t.Errorf("iq1_kt cluster %d has %d pruned pairs, the filter takes 1..%d", c, n, filterMaxPairs)
		}
	}
}
