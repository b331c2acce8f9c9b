//go:build amd64 && !purego

package trellis

import (
	"math/rand/v2"
	"testing"
)

// TestPruneLeftPack checks the list pass's table: for every mask, its set
// bits in increasing order, then zeros.
func TestPruneLeftPack(t *testing.T) {
	for m := range pruneLeftPack {
		var want [8]uint32
		n := 0
		for i := uint32(0); i < 8; i++ {
			if m&(1<<i) != 0 {
				want[n] = i
				n++
			}
		}
		if pruneLeftPack[m] != want {
			t.Fatalf("mask %08b: %v, want %v", m, pruneLeftPack[m], want)
		}
	}
}

// TestPruned4 holds the AVX-512 and AVX2 pruned searches for groups of 4 to
// the scans (searchBlock4AVX512, searchBlock4AVX2) on both iq4_kt
// codebooks: on random blocks it must decide at least 90 % of them and then
// choose the scan's codewords; with weights whose scores overflow it must
// fail wherever the scan finds nothing; and on blocks whose groups sit
// exactly on a codeword of a cluster's copied run of 8 (a score of 0 in two
// lanes of the last pair) it must choose that codeword, not report a tie
// and not lose it to the masking of the copies.
func TestPruned4(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	for _, wide := range []bool{false, true} {
		if wide && !hasAVX512 {
			continue
		}
		t.Run(map[bool]string{false: "avx2", true: "avx512"}[wide], func(t *testing.T) { testPruned4(t, wide) })
	}
}

func testPruned4(t *testing.T, wide bool) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, book := range []func() *codebook{iq4ktBook, iq4ktBookAlt} {
		cb := book()
		q, p := cb.pruned4Layout(), cb.pairs()
		if q.spans == nil {
			t.Fatal("no pruned layout for groups of 4")
		}
		// search runs the pruned search and the scan; a scan that finds
		// no codeword (every score +Inf) fails the test unless the caller
		// allows it (scanFails), and then the pruned search must fail too.
		infinite := 0
		search := func(id float32, x, w *[blockSize]float32, scanFails bool) (got, want [8]int32, ok bool) {
			var scan, pruned int
			if wide {
				scan = searchBlock4AVX512(&p.lanes[0], &p.spans[0], id, x, w, &want, &cb.values[0], nil)
				pruned = searchPruned4AVX512(&q.pairs[0], &q.boxes[0], &q.ids[0], &q.spans[0], id, x, w, &got, nil)
			} else {
				scan = searchBlock4AVX2(&cb.flatLanes[0], &cb.spans[0], id, x, w, &want, &cb.values[0], nil)
				pruned = searchPruned4AVX2(&q.pairs[0], &q.boxes[0], &q.ids[0], &q.spans[0], id, x, w, &got, nil)
			}
			if scan != 0 {
				if !scanFails {
					t.Fatal("the scan failed")
				}
				if pruned == 0 {
					t.Fatalf("the scan found no codeword, the pruned search %v", got)
				}
				infinite++
			}
			return got, want, scan == 0 && pruned == 0
		}
		decided := 0
		const trials = 2000
		for range trials {
			var x, w [blockSize]float32
			for i := range x {
				x[i] = float32(r.NormFloat64())
				w[i] = float32(r.ExpFloat64())
			}
			got, want, ok := search(float32(20+60*r.Float64()), &x, &w, false)
			if ok {
				decided++
				if got != want {
					t.Fatalf("pruned search %v, scan %v", got, want)
				}
			}
		}
		if decided < trials*9/10 {
			t.Fatalf("the pruned search decided %d of %d blocks", decided, trials)
		}
		// Weights near the float32 limit: every candidate's score can
		// overflow to +Inf while a bound stays finite (a coordinate inside
		// the box adds 0). No candidate can then win; the search must say
		// so rather than list the padding after a cluster's last pair.
		for trial := range 200 {
			var x, w [blockSize]float32
			for i := range x {
				x[i] = float32(r.NormFloat64())
				w[i] = float32(r.ExpFloat64())
				if trial%2 == 0 || r.IntN(4) == 0 {
					w[i] = 3e38
				}
			}
			got, want, ok := search(float32(20+60*r.Float64()), &x, &w, true)
			if ok && got != want {
				t.Fatalf("huge weights: pruned search %v, scan %v", got, want)
			}
		}
		if infinite < 20 {
			t.Fatalf("only %d blocks with a group whose every score is +Inf", infinite)
		}
		// Groups on codewords of copied runs, in their own cluster.
		copies := 0
		for c := 0; c < len(cb.inCluster) && copies < 200; c++ {
			if q.spans[4*c+3] == 0 {
				continue
			}
			last := int(q.spans[4*c]) + int(q.spans[4*c+1]) - 1
			var own []int32
			for _, cw := range q.ids[16*last : 16*last+8] {
				if cb.clusterOf(cb.values[4*int(cw):][:4]) == c {
					own = append(own, int32(cw))
				}
			}
			if len(own) == 0 {
				continue
			}
			var x, w [blockSize]float32
			for g := 0; g < blockSize/4; g++ {
				cw := own[r.IntN(len(own))]
				for k := 0; k < 4; k++ {
					x[4*g+k] = cb.values[4*int(cw)+k]
					w[4*g+k] = 1 + float32(r.Float64())
				}
			}
			got, want, ok := search(1, &x, &w, false)
			if !ok {
				t.Fatalf("cluster %d: a group on a copied codeword %v was not decided", c, own)
			}
			copies++
			if got != want {
				t.Fatalf("cluster %d: pruned search %v, scan %v", c, got, want)
			}
		}
		if copies < 50 {
			t.Fatalf("only %d blocks on copied codewords decided", copies)
		}
	}
}
