package trellis

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestPrunedLayout checks the pruned layout of the codebooks of groups of
// 8: each cluster's runs hold its codewords (the same set, each once; the
// last block filled up with copies of the last run), as int8 at 8*k+lane,
// and each run's box holds the smallest and largest value of each
// coordinate over the run.
func TestPrunedLayout(t *testing.T) {
	books := map[string]func() *codebook{"iq1_kt": iq1ktBook, "iq2_kt": iq2ktBook, "iq3_kt": iq3ktBook}
	for name, book := range books {
		if testing.Short() && name != "iq1_kt" {
			continue
		}
		cb := book()
		p := cb.prunedLayout()
		if p.spans == nil {
			t.Fatalf("%s: no pruned layout", name)
		}
		for c, pts := range cb.inCluster {
			first, nr := int(p.spans[2*c]), int(p.spans[2*c+1])
			if nr != len(pts)/8 {
				t.Fatalf("%s cluster %d: %d runs, want %d", name, c, nr, len(pts)/8)
			}
			nruns := 8 * ((nr + 7) / 8)
			var got []int32
			for r := 0; r < nruns; r++ {
				at := 8*first + r
				run := p.runs[at*pruneRunBytes:][:pruneRunBytes]
				box := p.boxes[(first+r/8)*pruneBoxBytes:][:pruneBoxBytes]
				src := r
				if r >= nr {
					src = nr - 1 // a copy of the last run
				}
				for lane := 0; lane < 8; lane++ {
					cw := int32(p.ids[8*at+lane])
					if cw != int32(p.ids[8*(8*first+src)+lane]) {
						t.Fatalf("%s cluster %d run %d lane %d: codeword %d, not the copy of run %d", name, c, r, lane, cw, src)
					}
					if r < nr {
						got = append(got, cw)
					}
					for k := 0; k < 8; k++ {
						v := cb.values[int(cw)*8+k]
						if float32(int8(run[8*k+lane])) != v {
							t.Fatalf("%s cluster %d run %d lane %d coordinate %d: %d, want %v", name, c, r, lane, k, int8(run[8*k+lane]), v)
						}
					}
				}
				for k := 0; k < 8; k++ {
					lo := formats.FP16ToFP32(binary.LittleEndian.Uint16(box[32*k+2*(r%8):]))
					hi := formats.FP16ToFP32(binary.LittleEndian.Uint16(box[32*k+16+2*(r%8):]))
					wantLo, wantHi := float32(127), float32(-127)
					for lane := 0; lane < 8; lane++ {
						v := float32(int8(run[8*k+lane]))
						wantLo, wantHi = min(wantLo, v), max(wantHi, v)
					}
					if lo != wantLo || hi != wantHi {
						t.Fatalf("%s cluster %d run %d coordinate %d: box [%v, %v], want [%v, %v]", name, c, r, k, lo, hi, wantLo, wantHi)
					}
				}
			}
			want := slices.Clone(pts)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s cluster %d: the runs hold other codewords than the cluster", name, c)
			}
		}
	}
}

// TestPruned16Layout checks the AVX-512 pruned layout of the codebooks of
// groups of 8: each cluster's pairs hold its codewords (each once, plus,
// for an odd number of runs, a copy of eight of them), as int8 at
// 16*k+lane with their indices in ids, and each pair's box holds
// the smallest and largest value of each coordinate over the pair; the
// last block's unused boxes repeat the last pair's.
func TestPruned16Layout(t *testing.T) {
	books := map[string]func() *codebook{"iq1_kt": iq1ktBook, "iq2_kt": iq2ktBook, "iq3_kt": iq3ktBook}
	for name, book := range books {
		if testing.Short() && name != "iq1_kt" {
			continue
		}
		cb := book()
		q := cb.pruned16Layout()
		if q.spans == nil {
			t.Fatalf("%s: no AVX-512 pruned layout", name)
		}
		for c, pts := range cb.inCluster {
			first, np, block := int(q.spans[4*c]), int(q.spans[4*c+1]), int(q.spans[4*c+2])
			if want := (len(pts)/8 + 1) / 2; np != want {
				t.Fatalf("%s cluster %d: %d pairs, want %d", name, c, np, want)
			}
			var got []int32
			for j := 0; j < 16*((np+15)/16); j++ {
				src := min(j, np-1)
				pair := q.pairs[(first+src)*prune16PairBytes:][:prune16PairBytes]
				ids := q.ids[16*(first+src):][:16]
				box := q.boxes[(block+j/16)*prune16BoxBytes:][:prune16BoxBytes]
				for k := 0; k < 8; k++ {
					wantLo, wantHi := float32(127), float32(-127)
					for lane := 0; lane < 16; lane++ {
						cw := int32(ids[lane])
						v := float32(int8(pair[16*k+lane]))
						if v != cb.values[int(cw)*8+k] {
							t.Fatalf("%s cluster %d pair %d lane %d coordinate %d: %v, want %v", name, c, src, lane, k, v, cb.values[int(cw)*8+k])
						}
						wantLo, wantHi = min(wantLo, v), max(wantHi, v)
					}
					lo := formats.FP16ToFP32(binary.LittleEndian.Uint16(box[64*k+2*(j%16):]))
					hi := formats.FP16ToFP32(binary.LittleEndian.Uint16(box[64*k+32+2*(j%16):]))
					if lo != wantLo || hi != wantHi {
						t.Fatalf("%s cluster %d pair %d coordinate %d: box [%v, %v], want [%v, %v]", name, c, j, k, lo, hi, wantLo, wantHi)
					}
				}
				if j < np {
					for lane := 0; lane < 16; lane++ {
						got = append(got, int32(ids[lane]))
					}
				}
			}
			slices.Sort(got)
			got = slices.Compact(got)
			want := slices.Clone(pts)
			slices.Sort(want)
			if !slices.Equal(got, want) || 16*np-len(pts) > 8 {
				t.Fatalf("%s cluster %d: the pairs hold other codewords than the cluster", name, c)
			}
		}
	}
}
