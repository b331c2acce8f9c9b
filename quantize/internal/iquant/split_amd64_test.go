//go:build amd64 && !purego

package iquant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sameFloat reports whether a and b have the same bits or are both NaN.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// checkSplitLanes compares the valid lanes of two split-score layouts with
// per chunk floats per chunk for a block of n values.
func checkSplitLanes(t *testing.T, name string, n, perChunk int, got, want []float32) {
	t.Helper()
	pos := 0
	for i1 := 0; i1 <= n; i1++ {
		for c := i1; c <= n; c += 8 {
			for lane := 0; lane < 8 && c+lane <= n; lane++ {
				for k := lane; k < perChunk; k += 8 {
					if !sameFloat(got[pos+k], want[pos+k]) {
						t.Fatalf("%s: i1=%d i2=%d slot %d: assembly %g (%#x), Go %g (%#x)", name, i1, c+lane, k/8,
							got[pos+k], math.Float32bits(got[pos+k]), want[pos+k], math.Float32bits(want[pos+k]))
					}
				}
			}
			pos += perChunk
		}
	}
	if pos > len(got) {
		t.Fatalf("%s: layout of %d floats, buffer %d", name, pos, len(got))
	}
}

// randomPrefix fills s[0..n] with prefix sums of random terms in one of the
// modes (ties, zeros, huge values, NaN) and s[n+1:] with garbage.
func randomPrefix(r *rand.Rand, s []float32, n int, mode int) {
	s[0] = 0
	for j := 1; j <= n; j++ {
		var v float32
		switch mode {
		case 0:
			v = float32(r.NormFloat64())
		case 1: // small integers: many exact ties and zero differences
			v = float32(r.IntN(5) - 2)
		case 2:
			v = float32(r.ExpFloat64() * 1e-3)
		case 3:
			v = float32(r.NormFloat64() * 1e18)
		case 4:
			v = float32(r.NormFloat64())
			if r.IntN(10) == 0 {
				v = float32(math.NaN())
			}
		case 5: // sums landing on float32 ties after scaling
			v = float32(r.IntN(1<<24)) * 0x1p-20
		}
		s[j] = s[j-1] + v
	}
	for j := n + 1; j < len(s); j++ {
		s[j] = float32(r.NormFloat64() * 1e30)
	}
}

// TestSplitSumsAVX2MatchesGo checks the assembly split scores of iq2_xs,
// iq1_s and iq1_m against the portable ones, bit for bit.
func TestSplitSumsAVX2MatchesGo(t *testing.T) {
	if !useSplitAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useSplitAVX2 = true }()
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 3000; iter++ {
		mode := iter % 6
		var sx, sw, sx2, sw2 [24]float32
		randomPrefix(r, sx[:], 16, mode)
		randomPrefix(r, sw[:], 16, mode)
		randomPrefix(r, sx2[:], 16, mode)
		randomPrefix(r, sw2[:], 16, mode)
		var got, want [iq2xsSplitLen]float32
		useSplitAVX2 = false
		iq2xsSplitSums(&sx, &sw, &want)
		useSplitAVX2 = true
		iq2xsSplitSums(&sx, &sw, &got)
		checkSplitLanes(t, "iq2_xs", 16, 16, got[:], want[:])

		var gotM, wantM [iq1mSplitLen]float32
		useSplitAVX2 = false
		iq1mSplitSums(&sx, &sx2, &sw, &sw2, &wantM)
		useSplitAVX2 = true
		iq1mSplitSums(&sx, &sx2, &sw, &sw2, &gotM)
		checkSplitLanes(t, "iq1_m", 16, 64, gotM[:], wantM[:])

		var lx, lw [40]float32
		randomPrefix(r, lx[:], 32, mode)
		randomPrefix(r, lw[:], 32, mode)
		var gotS, wantS [iq1sSplitLen]float32
		useSplitAVX2 = false
		iq1sSplitSums(lx[:], lw[:], 32, &wantS)
		useSplitAVX2 = true
		iq1sSplitSums(lx[:], lw[:], 32, &gotS)
		checkSplitLanes(t, "iq1_s", 32, 32, gotS[:], wantS[:])

		checkScan(t, "iq2_xs", want[:], 16, 1, 0)
		checkScan(t, "iq1_m", wantM[:], 16, 4, 0)
		checkScan(t, "iq1_s", wantS[:], 32, 2, -1.1754943508222875e-38)
	}
	for n := 1; n <= 40; n++ {
		c := 0
		for i1 := 0; i1 <= n; i1++ {
			c += (n - i1 + 8) / 8
		}
		if splitChunks(n) != c {
			t.Errorf("splitChunks(%d) = %d, want %d", n, splitChunks(n), c)
		}
	}
	if n := splitChunks(16); n*16 != iq2xsSplitLen || n*64 != iq1mSplitLen {
		t.Errorf("splitChunks(16) = %d does not match the buffer sizes", n)
	}
	if n := splitChunks(32); n*32 != iq1sSplitLen {
		t.Errorf("splitChunks(32) = %d does not match the buffer size", n)
	}
}

// checkScan runs splitScan with and without assembly over a layout (its
// garbage lanes included) and demands the same choice.
func checkScan(t *testing.T, name string, out []float32, n, slots int, best float32) {
	t.Helper()
	init := splitState{best: best, scale: 0.5, i1: -1, i2: -1, slot: -1}
	got, want := init, init
	useSplitAVX2 = false
	splitScan(out, n, slots, &want)
	useSplitAVX2 = true
	splitScan(out, n, slots, &got)
	if !sameFloat(got.best, want.best) || !sameFloat(got.scale, want.scale) || got.i1 != want.i1 || got.i2 != want.i2 || got.slot != want.slot {
		t.Fatalf("%s scan: assembly %+v, Go %+v", name, got, want)
	}
	// The shortcut through the largest scores (when it applies).
	scores := make([]float32, splitScoresLen(n, slots))
	top := init
	splitScanScores(out, scores, n, slots, &top)
	if !sameFloat(top.best, want.best) || !sameFloat(top.scale, want.scale) || top.i1 != want.i1 || top.i2 != want.i2 || top.slot != want.slot {
		t.Fatalf("%s scan with scores: %+v, Go %+v", name, top, want)
	}
}

// TestSplitScanBestGoingDown checks the scan on layouts built so that the
// running best sometimes decreases after an update (scores within an ulp of
// each other), where the assembly must fall back to visiting every later
// position of the chunk.
func TestSplitScanBestGoingDown(t *testing.T) {
	if !useSplitAVX2 {
		t.Skip("no AVX2/FMA")
	}
	defer func() { useSplitAVX2 = true }()
	r := rand.New(rand.NewPCG(11, 12))
	decreases := 0
	for iter := 0; iter < 20000; iter++ {
		var out [iq1mSplitLen]float32
		target := float32(1 + r.Float64())
		for i := range out {
			q2 := float32(0.5 + r.Float64())
			qx := float32(math.Sqrt(float64(target * q2)))
			qx = math.Float32frombits(math.Float32bits(qx) + uint32(r.IntN(5)) - 2)
			if r.IntN(2) == 0 {
				qx = -qx
			}
			out[i] = qx
			if i%16 >= 8 {
				out[i] = q2
				out[i-8] = qx
			}
		}
		// Count the decreases the reference order meets, to be sure the
		// fallback runs.
		st := splitState{i1: -1, i2: -1, slot: -1}
		prev := st.best
		pos := 0
		for i1 := 0; i1 <= 16; i1++ {
			for c := i1; c <= 16; c += 8 {
				ch := out[pos : pos+64]
				pos += 64
				for lane := 0; lane < 8 && c+lane <= 16; lane++ {
					for k := 0; k < 4; k++ {
						sumqx, sumq2 := ch[16*k+lane], ch[16*k+8+lane]
						if sumq2 > 0 && float32(sumqx*sumqx) > float32(st.best*sumq2) {
							st.scale = sumqx / sumq2
							st.best = st.scale * sumqx
							if st.best < prev {
								decreases++
							}
							prev = st.best
						}
					}
				}
			}
		}
		checkScan(t, "near ties", out[:], 16, 4, 0)
	}
	if decreases == 0 {
		t.Fatal("no layout made the best decrease")
	}
	t.Logf("%d decreases", decreases)
}

// TestSplitScanFallbackAfterDecrease builds chunks where an update lowers
// the best and a later position that failed against the chunk's starting
// best passes against the lowered one, in a later lane and in a later slot
// of the same lane.
func TestSplitScanFallbackAfterDecrease(t *testing.T) {
	if !useSplitAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(13, 14))
	passes := func(qx, q2, best float32) bool { return q2 > 0 && float32(qx*qx) > float32(best*q2) }
	found := 0
	for try := 0; try < 20_000_000 && found < 20; try++ {
		b0 := float32(1 + r.Float64())
		q21 := float32(0.5 + r.Float64())
		qx1 := math.Float32frombits(math.Float32bits(float32(math.Sqrt(float64(b0*q21)))) + uint32(r.IntN(3)))
		if !passes(qx1, q21, b0) {
			continue
		}
		s := qx1 / q21
		b1 := s * qx1
		if !(b1 < b0) {
			continue
		}
		// A later position failing against b0 but passing against b1.
		var qx2, q22 float32
		ok := false
		for k := 0; k < 1000 && !ok; k++ {
			q22 = float32(0.5 + r.Float64())
			base := math.Float32bits(float32(math.Sqrt(float64(b0 * q22))))
			for d := -2; d <= 2 && !ok; d++ {
				qx2 = math.Float32frombits(base + uint32(d))
				ok = passes(qx2, q22, b1) && !passes(qx2, q22, b0)
			}
		}
		if !ok {
			continue
		}
		found++
		for _, place := range [][2]int{{5, 1}, {0, 3}} { // {lane, slot} of the second position
			var out [iq1mSplitLen]float32
			out[0], out[8] = qx1, q21 // lane 0, slot 0
			lane, slot := place[0], place[1]
			out[16*slot+lane], out[16*slot+8+lane] = qx2, q22
			checkScan(t, "fallback", out[:], 16, 4, b0)
			got := splitState{best: b0, scale: 0.5, i1: -1, i2: -1, slot: -1}
			splitScan(out[:], 16, 4, &got)
			if got.i2 != int32(lane) || got.slot != int32(slot) {
				t.Fatalf("lane %d slot %d: the second position did not win: %+v", lane, slot, got)
			}
		}
	}
	if found == 0 {
		t.Fatal("no decreasing update found")
	}
}

// TestSplitScanTopOnQuantizerData runs the shortcut of splitScanScores on
// split scores of realistic blocks (Gaussian values, positive weights, also
// coarse ones that tie) for the three layouts, demands the full scan's
// choice and that the shortcut applies to most blocks.
func TestSplitScanTopOnQuantizerData(t *testing.T) {
	if !useSplitAVX2 {
		t.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewPCG(13, 14))
	applied, total := 0, 0
	for iter := 0; iter < 6000; iter++ {
		n, slots := 16, 4
		switch iter % 3 {
		case 1:
			n, slots = 16, 1
		case 2:
			n, slots = 32, 2
		}
		var sx, sw, sx2, sw2 [40]float32
		for j := 1; j <= n; j++ {
			w := float32(r.ExpFloat64())
			x := float32(r.NormFloat64())
			if iter%5 == 4 {
				w, x = float32(r.IntN(4)), float32(r.IntN(9)-4)/4
			}
			sw[j], sx[j] = sw[j-1]+w, sx[j-1]+w*x
			w2, x2 := float32(r.ExpFloat64()), float32(r.NormFloat64())
			sw2[j], sx2[j] = sw2[j-1]+w2, sx2[j-1]+w2*x2
		}
		// Sorted-value prefix sums are increasing in x; these are not,
		// which only makes the scores less regular.
		var out []float32
		best := float32(0)
		switch slots {
		case 4:
			var o [iq1mSplitLen]float32
			iq1mSplitSums((*[24]float32)(sx[:24]), (*[24]float32)(sx2[:24]), (*[24]float32)(sw[:24]), (*[24]float32)(sw2[:24]), &o)
			out = o[:]
		case 1:
			var o [iq2xsSplitLen]float32
			iq2xsSplitSums((*[24]float32)(sx[:24]), (*[24]float32)(sw[:24]), &o)
			out = o[:]
		case 2:
			var o [iq1sSplitLen]float32
			iq1sSplitSums(sx[:], sw[:], 32, &o)
			out = o[:]
			best = -1.1754943508222875e-38
		}
		checkScan(t, "quantizer data", out, n, slots, best)
		scores := make([]float32, splitScoresLen(n, slots))
		st := splitState{best: best, i1: -1, i2: -1, slot: -1}
		total++
		if splitScanTop(out, scores, n, slots, &st) {
			applied++
		}
	}
	if applied < total*9/10 {
		t.Errorf("shortcut applied to %d of %d blocks", applied, total)
	}
	t.Logf("shortcut applied to %d of %d blocks", applied, total)
}
