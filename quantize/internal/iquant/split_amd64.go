//go:build amd64 && !purego

package iquant

import "github.com/gquant/gquant/internal/cpu"

// useSplitAVX2 selects the assembly split scores (split_amd64.s). It is off
// with the purego tag, which tests the portable code.
var useSplitAVX2 = cpu.X86.HasFMA && cpu.X86.HasAVX2

// useAVX512 selects this package's AVX-512 kernels (the iq1_s and iq1_m
// split searches, the rank sort), on top of the AVX2 paths, which stay the
// fallback and what machines without AVX-512 run.
var useAVX512 = useSplitAVX2 && cpu.X86.HasAVX512

//go:noescape
func iq2xsSplitSumsAVX2(sumx, sumw *float32, out *float32)

//go:noescape
func iq1sSplitSumsAVX2(sumx, sumw *float32, n int, vals *[6]float32, out *float32)

//go:noescape
func iq1mSplitSumsAVX2(sx1, sx2, sw1, sw2 *float32, vals *[6][8]float32, out *float32)

//go:noescape
func splitScanAVX2(out *float32, n, slots int, st *splitState)

// splitTopAVX2 lists the candidate chunks of splitScanTop (splittop_amd64.s).
//
//go:noescape
func splitTopAVX2(out *float32, n, slots int, scores, chunkMax *float32, cand *[2 * splitTopMax]uint32) int

// iq1sSplitTop512 lists the candidate chunks of the iq1_s split search
// (split512_amd64.s; see splitTop512).
//
//go:noescape
func iq1sSplitTop512(sumx, sumw *float32, vals *[6]float32, scores *float32, cand *[2 * splitTop512Max]uint64) int

// iq1mSplitTop512 lists the candidate vectors of the iq1_m split search
// (split512_amd64.s; see iq1mSplitSearch512).
//
//go:noescape
func iq1mSplitTop512(sx1, sx2, sw1, sw2 *float32, vals *[6]float32, idx *[iq1mTop512Vecs][32]int32, scores *float32, cand *[2 * splitTop512Max]uint64) int
