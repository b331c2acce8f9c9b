//go:build amd64 && !purego

package formats

import "github.com/gquant/gquant/internal/cpu"

// useInterleaveAVX2 selects the assembly interleave of the 8-row block
// types; tests clear it to check the portable code on the same machine.
var useInterleaveAVX2 = cpu.X86.HasAVX2

//go:noescape
func interleaveRows8AVX2(dst, src *byte, rowBytes, nb, hdr, words int)

// interleaveRows8SIMD is chunkInterleaver's interleave of one group of 8
// rows of nb blocks each with AVX2, for 1- or 2-byte headers (or none) and
// 4 or 8 words of quants per block; row k's blocks start at base[k*rowBytes:]. It returns false, having done nothing, where it
// does not apply.
func interleaveRows8SIMD(group, base []byte, rowBytes, nb, hdr, words int) bool {
	bs := hdr + 4*words
	if !useInterleaveAVX2 || nb <= 0 || hdr < 0 || hdr > 2 || (words != 4 && words != 8) ||
		rowBytes < nb*bs || len(base) < 7*rowBytes+nb*bs || len(group) < 8*nb*bs {
		return false
	}
	interleaveRows8AVX2(&group[0], &base[0], rowBytes, nb, hdr, words)
	return true
}
