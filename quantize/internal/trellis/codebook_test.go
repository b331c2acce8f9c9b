package trellis

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/tables"
)

// The codebooks must be the reference's exactly: a single codeword in a
// different cluster changes search results. The fingerprints below were
// taken from codebooks that reproduce the reference's output for every
// golden kernel case byte for byte (TestGoldenKernels in quantize/golden_test.go), so
// they pin the tables; the invariants are the reference's own assertions.
var codebookTests = []struct {
	name        string
	book        func() *codebook
	group, bits int
	neighbours  int
	fingerprint string
}{
	{"iq1_kt", iq1ktBook, 8, 13, 32, "259a13f0bfb1093c06043f5d"},
	{"iq2_kt", iq2ktBook, 8, 16, 8, "a51bbac77cb693158e186c7a"},
	{"iq3_kt", iq3ktBook, 8, 16, 8, "6996086b624e6cf702aed75b"},
	{"iq4_kt", iq4ktBook, 4, 15, 6, "17e980a797ed95870ff651f0"},
	{"iq4_kt/alt", iq4ktBookAlt, 4, 15, 6, "75c7b4ece45d09d280ebc77e"},
}

func (cb *codebook) fingerprint() string {
	h := sha256.New()
	put := func(v any) { binary.Write(h, binary.LittleEndian, v) }
	put(cb.values)
	put(cb.mid)
	put(cb.clusters)
	for _, pts := range cb.inCluster {
		put(int32(len(pts)))
		put(pts)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

func TestCodebooks(t *testing.T) {
	for _, tc := range codebookTests {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.bits > 13 {
				t.Skip("building the large codebooks takes seconds")
			}
			cb := tc.book()
			if got := len(cb.values); got != tc.group<<tc.bits {
				t.Fatalf("%d codeword values, want %d", got, tc.group<<tc.bits)
			}
			member := make([]int, 1<<tc.bits)
			for ic, pts := range cb.inCluster {
				if len(pts)%8 != 0 {
					t.Errorf("cluster %d has %d codewords, not a multiple of 8", ic, len(pts))
				}
				if len(cb.lanes[ic]) != len(pts)/8*laneRun(tc.group) {
					t.Errorf("cluster %d: %d lane bytes for %d codewords", ic, len(cb.lanes[ic]), len(pts))
				}
				for _, p := range pts {
					member[p]++
				}
			}
			for p, n := range member {
				if n < tc.neighbours {
					t.Fatalf("codeword %d is in %d clusters, want at least %d", p, n, tc.neighbours)
				}
			}
			if got := cb.fingerprint(); got != tc.fingerprint {
				t.Errorf("fingerprint %s, want %s", got, tc.fingerprint)
			}
		})
	}
}

// TestCodewords checks the generator against values worked out by hand from
// its definition: seed 4096 multiplied by 0xCBAC1FED is 0xC1FED000, whose
// four bytes masked to 6 bits are 0x01, 0x3E, 0x10, 0x00 (sum 79, value -47).
func TestCodewords(t *testing.T) {
	var v [8]float32
	formats.KTCodeword(v[:], 4096, false)
	if v[0] != -47 {
		t.Errorf("first value of seed 4096: %v, want -47", v[0])
	}
	formats.KTCodeword(v[:], 4096, true)
	if v[0] != 47 {
		t.Errorf("first magnitude of seed 4096: %v, want 47", v[0])
	}
}

// TestBestIndexIQ4NL checks the table-driven search against a plain scan
// for the nearest scale value.
func TestBestIndexIQ4NL(t *testing.T) {
	values := tables.KTScaleValues
	for x := float32(-140); x <= 130; x += 1.0 / 64 {
		got := bestIndexIQ4NL(x)
		want, bestDist := 0, float32(math.Inf(1))
		for i, v := range values {
			if d := abs32(x - float32(v)); d < bestDist {
				want, bestDist = i, d
			}
		}
		if got != want && abs32(x-float32(values[got])) != bestDist {
			t.Fatalf("x=%v: index %d (%d), nearest is %d (%d)", x, got, values[got], want, values[want])
		}
	}
}

// TestClusterShortcuts rebuilds the iq1_kt clusters the reference's way
// (every distance exact, full sort of the padding candidates) and compares
// them with the pruned build.
func TestClusterShortcuts(t *testing.T) {
	cb := iq1ktBook()
	const neighbours = 32
	g := cb.group
	npoint, ncluster := len(cb.values)/g, len(cb.clusters)/g
	in := make([][]int32, ncluster)
	which := make([][]int32, npoint)
	for ip := 0; ip < npoint; ip++ {
		best := make([]float32, neighbours)
		ibest := make([]int32, neighbours)
		for j := range best {
			best[j], ibest[j] = float32(math.Inf(1)), -1
		}
		for ic := 0; ic < ncluster; ic++ {
			d := dist2(cb.values[ip*g:(ip+1)*g], cb.clusters[ic*g:(ic+1)*g])
			for j := 0; j < neighbours; j++ {
				if d < best[j] {
					copy(best[j+1:], best[j:neighbours-1])
					copy(ibest[j+1:], ibest[j:neighbours-1])
					best[j], ibest[j] = d, int32(ic)
					break
				}
			}
		}
		for _, ic := range ibest {
			in[ic] = append(in[ic], int32(ip))
		}
		which[ip] = ibest
	}
	for ic := range in {
		if len(in[ic]) > 0 && len(in[ic])%8 == 0 {
			continue
		}
		type cand struct {
			d  float32
			ip int32
		}
		var extra []cand
		for ip := 0; ip < npoint; ip++ {
			if !slices.Contains(which[ip], int32(ic)) {
				extra = append(extra, cand{dist2(cb.values[ip*g:(ip+1)*g], cb.clusters[ic*g:(ic+1)*g]), int32(ip)})
			}
		}
		sort.Slice(extra, func(i, j int) bool {
			if extra[i].d != extra[j].d {
				return extra[i].d < extra[j].d
			}
			return extra[i].ip < extra[j].ip
		})
		nadd := 8*((len(in[ic])+7)/8) - len(in[ic])
		for i := 0; i < nadd; i++ {
			in[ic] = append(in[ic], extra[i].ip)
		}
	}
	for ic := range in {
		if !slices.Equal(in[ic], cb.inCluster[ic]) {
			t.Fatalf("cluster %d: pruned build %v, reference build %v", ic, cb.inCluster[ic], in[ic])
		}
	}
}

func BenchmarkCodebookIQ2KT(b *testing.B) {
	for i := 0; i < b.N; i++ {
		newCodebook(8, 16, false, formats.KTOffset, 256, 8)
	}
}
