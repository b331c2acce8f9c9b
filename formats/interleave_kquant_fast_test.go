package formats

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestKR4FastMatchesGeneric checks the direct q4_K and q6_K interleavers
// and deinterleavers against the generic ones they replace, on random
// bytes (every bit of either layout is used, so random blocks cover all).
func TestKR4FastMatchesGeneric(t *testing.T) {
	for _, tc := range []struct {
		name         string
		generic      interleaver
		bs, gs       int
		interleave   func(group, base []byte, ne0 int)
		deinterleave func(base, group []byte, ne0 int)
	}{
		{"q4_k_r4", kInterleaver(q4KSize, q4KR4Size, q4KUnpack, q4KPack, q4KR4Put, q4KR4Get), q4KSize, q4KR4Size, q4KR4Interleave, q4KR4Deinterleave},
		{"q6_k_r4", kInterleaver(q6KSize, q6KR4Size, q6KUnpack, q6KPack, q6KR4Put, q6KR4Get), q6KSize, q6KR4Size, q6KR4Interleave, q6KR4Deinterleave},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, ne0 := range []int{256, 512, 4096} {
			nb := ne0 / qkK
			base := make([]byte, 4*nb*tc.bs)
			for i := range base {
				base[i] = byte(rng.Uint32())
			}
			want := make([]byte, nb*tc.gs)
			got := bytes.Repeat([]byte{0xa5}, len(want)) // stale bytes must not leak through
			tc.generic.interleave(want, base, ne0)
			tc.interleave(got, base, ne0)
			if !bytes.Equal(got, want) {
				t.Errorf("%s ne0 %d: direct and generic interleave differ", tc.name, ne0)
			}
			for i := range got {
				got[i] = byte(rng.Uint32())
			}
			wantBase := make([]byte, len(base))
			gotBase := bytes.Repeat([]byte{0xa5}, len(base))
			tc.generic.deinterleave(wantBase, got, ne0)
			tc.deinterleave(gotBase, got, ne0)
			if !bytes.Equal(gotBase, wantBase) {
				t.Errorf("%s ne0 %d: direct and generic deinterleave differ", tc.name, ne0)
			}
		}
	}
}

func BenchmarkQ4KR4Interleave(b *testing.B) {
	const ne0, rows = 4096, 4 * 112
	nb := ne0 / qkK
	base := make([]byte, rows*nb*q4KSize)
	group := make([]byte, rows/4*nb*q4KR4Size)
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		for g := range rows / 4 {
			q4KR4Interleave(group[g*nb*q4KR4Size:], base[g*4*nb*q4KSize:], ne0)
		}
	}
}
