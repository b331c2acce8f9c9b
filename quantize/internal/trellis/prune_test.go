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
