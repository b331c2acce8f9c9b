//go:build amd64 && !purego

#include "textflag.h"
#include "search512_amd64.h"

// The AVX-512 block search for groups of 4 (see pair.go): searchBlock4AVX2
// with two runs per 16-lane vector. Lanes 0..7 see the even runs of a
// cluster and lanes 8..15 the odd ones; each lane keeps its first strict
// minimum, its codeword and its run, and the two halves are merged at the
// end: the smaller score, on a tie the earlier run. With no NaN score (the
// range check) that is each reference lane's first strict minimum over all
// its runs, and the reference's lane reduction follows.



// Frame: 0(SP) vx (32 float32), 128(SP) the bins (32 int32).
//
// func searchBlock4AVX512(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int
TEXT ·searchBlock4AVX512(SB), NOSPLIT, $256-72
	MOVQ lanes+0(FP), R8
	MOVQ spans+8(FP), R9
	MOVQ x+24(FP), AX
	MOVQ w+32(FP), R10
	MOVQ idx+40(FP), R11
	MOVQ values+48(FP), R13

	// The range check: |id*x| <= 2^60 and 0 <= w < +Inf (false for NaN).
	RANGE_X(id+16(FP), K1)
	RANGE_W(fail)

	VBROADCASTSS id+16(FP), Y0
	BINS4_BLOCK

	VPBROADCASTD s4Two<>(SB), Z18
	XORQ DI, DI // group
	XORQ R12, R12 // 16*group

group:
	BIN_CLUSTER
	MOVL 0(R9)(AX*8), SI
	MOVL 4(R9)(AX*8), CX
	TESTL CX, CX
	JEQ fail
	ADDQ R8, SI
	VBROADCASTSS 0(SP)(R12*1), Z8
	VBROADCASTSS 4(SP)(R12*1), Z9
	VBROADCASTSS 8(SP)(R12*1), Z10
	VBROADCASTSS 12(SP)(R12*1), Z11
	VBROADCASTSS 0(R10)(R12*1), Z12
	VBROADCASTSS 4(R10)(R12*1), Z13
	VBROADCASTSS 8(R10)(R12*1), Z14
	VBROADCASTSS 12(R10)(R12*1), Z15
	VBROADCASTSS s4PosInf<>(SB), Z4
	VPTERNLOGD $0xff, Z5, Z5, Z5 // indices: -1
	VMOVDQU32 s4Runs<>(SB), Z16
	VPXORD Z17, Z17, Z17
	PCALIGN $64

scan:
	VCVTPH2PS 0(SI), Z0
	VSUBPS Z8, Z0, Z0
	VMULPS Z0, Z0, Z0
	VMULPS Z12, Z0, Z0
	VCVTPH2PS 64(SI), Z1
	VSUBPS Z10, Z1, Z1
	VMULPS Z1, Z1, Z1
	VMULPS Z14, Z1, Z1
	VADDPS Z1, Z0, Z0
	VCVTPH2PS 32(SI), Z1
	VSUBPS Z9, Z1, Z1
	VMULPS Z1, Z1, Z1
	VMULPS Z13, Z1, Z1
	VCVTPH2PS 96(SI), Z2
	VSUBPS Z11, Z2, Z2
	VMULPS Z2, Z2, Z2
	VMULPS Z15, Z2, Z2
	VADDPS Z2, Z1, Z1
	VADDPS Z1, Z0, Z0
	VCMPPS $0x11, Z4, Z0, K1 // score < best
	VMOVDQU32 128(SI), K1, Z5
	VMOVDQA32 Z16, K1, Z17
	VMINPS Z0, Z4, Z4
	VPADDD Z18, Z16, Z16
	ADDQ $192, SI
	DECL CX
	JNE scan

	MERGE16(Z17, Y17)
	VBROADCASTSS s4PosInf<>(SB), Y7

	REDUCE(fail)
	MOVL BX, 0(R11)(DI*4)
	SHLQ $4, BX
	PREFETCHT0 (R13)(BX*1)
	ADDQ $16, R12
	INCQ DI
	CMPQ DI, $8
	JNE group

	MOVQ sums+56(FP), CX
	TESTQ CX, CX
	JEQ ok
	MOVQ x+24(FP), DX
	SUMS4

ok:
	MOVQ $0, ret+64(FP)
	VZEROUPPER
	RET

fail:
	MOVQ $1, ret+64(FP)
	VZEROUPPER
	RET

// searchBlock8AVX512 is searchBlock4AVX512 for the four groups of 8 of a
// block: the clusters are vx > mid, a pair of runs is 320 bytes (coordinate
// k at 32*k, the indices at 256), the weights live in Z16..Z23 and the
// scores add up in searchBlock8AVX2's order.
//
// Frame: 0(SP) vx (32 float32), 128(SP) the clusters (4 int32).
//
// func searchBlock8AVX512(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int
TEXT ·searchBlock8AVX512(SB), NOSPLIT, $256-80
	MOVQ lanes+0(FP), R8
	MOVQ spans+8(FP), R9
	MOVQ x+32(FP), AX
	MOVQ w+40(FP), R10
	MOVQ idx+48(FP), R11
	MOVQ values+56(FP), R13

	// The range check: |id*x| <= 2^60 and 0 <= w < +Inf (false for NaN).
	RANGE_X(id+24(FP), K1)
	RANGE_W(fail8)

	MOVQ mid+16(FP), DX
	VMOVUPS 0(DX), Y6
	VBROADCASTSS id+24(FP), Y0

	CLUSTER8(0, 0, 128)
	CLUSTER8(1, 0, 128)
	CLUSTER8(2, 0, 128)
	CLUSTER8(3, 0, 128)

	XORQ DI, DI // group
	XORQ R12, R12 // 32*group

group8:
	MOVL 128(SP)(DI*4), AX
	MOVL 0(R9)(AX*8), SI
	MOVL 4(R9)(AX*8), CX
	TESTL CX, CX
	JEQ fail8
	ADDQ R8, SI
	GROUP_VXW(0)
	SCAN_PAIRS(scan8, fail8)
	NEXT_GROUP8(group8)

	MOVQ sums+64(FP), CX
	TESTQ CX, CX
	JEQ ok8
	MOVQ x+32(FP), DX
	SUMS8

ok8:
	MOVQ $0, ret+72(FP)
	VZEROUPPER
	RET

fail8:
	MOVQ $1, ret+72(FP)
	VZEROUPPER
	RET

// TERM2(off, k, xa, xb, ta, tb) is coordinate k's term of both scores of
// searchBlock8x2AVX512 (codewords at SI+off, vx of the two scales in xa
// and xb, the weight broadcast from the group's at R10+R12): the
// codeword's values are converted once for both.
#define TERM2(off, k, xa, xb, ta, tb) \
	VCVTPH2PS off(SI), Z30 \
	VSUBPS xa, Z30, ta \
	VMULPS ta, ta, ta \
	VMULPS.BCST (4*k)(R10)(R12*1), ta, ta \
	VSUBPS xb, Z30, tb \
	VMULPS tb, tb, tb \
	VMULPS.BCST (4*k)(R10)(R12*1), tb, tb

// MERGE2(best, idx, pair, ypair) is MERGE16 for one scale's state of
// searchBlock8x2AVX512, which keeps pairs, not runs (an odd run of pair q
// is before an even run of pair p exactly when q < p), and leaves the
// result in Y4, Y5.
#define MERGE2(best, idx, pair, ypair) \
	VMOVAPS best, Z4 \
	VMOVDQA32 idx, Z5 \
	MERGE16(pair, ypair)

// searchBlock8x2AVX512 is two calls of searchBlock8AVX512 for the same
// block at two scales of the same sign (inverse scales id1, id2, results
// in idx1, sums1 and idx2, sums2) in one pass over the codewords, where
// every group falls in the same cluster at both scales: each codeword is
// read and converted once and scored twice. It returns 2, doing nothing,
// where a group's clusters differ, and 1, with the results incomplete,
// where searchBlock8AVX512 would fail at either scale.
//
// Frame: 0(SP) vx at id1, 128(SP) vx at id2 (32 float32 each), 256(SP)
// the clusters (4 int32), 272(SP) the clusters at id2.
//
// func searchBlock8x2AVX512(lanes *byte, spans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int
TEXT ·searchBlock8x2AVX512(SB), NOSPLIT, $320-96
	MOVQ lanes+0(FP), R8
	MOVQ spans+8(FP), R9
	MOVQ x+32(FP), AX
	MOVQ w+40(FP), R10

	TWO_SCALES(id1+24(FP), id2+28(FP), mid+16(FP), fail2, other2)

	XORQ DI, DI // group
	XORQ R12, R12 // 32*group

group2:
	MOVL 256(SP)(DI*4), AX
	MOVL 0(R9)(AX*8), SI
	MOVL 4(R9)(AX*8), CX
	TESTL CX, CX
	JEQ fail2
	ADDQ R8, SI
	BCAST8(0, SP, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	BCAST8(128, SP, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	VBROADCASTSS s4PosInf<>(SB), Z24
	VMOVAPS Z24, Z27
	VPTERNLOGD $0xff, Z25, Z25, Z25 // indices: -1
	VMOVDQA32 Z25, Z28
	VPXORD Z26, Z26, Z26 // pairs
	VPXORD Z29, Z29, Z29
	XORQ BX, BX // pair
	PCALIGN $64

scan2:
	TERM2(0, 0, Z8, Z16, Z0, Z4)
	TERM2(128, 4, Z12, Z20, Z1, Z5)
	VADDPS Z1, Z0, Z0
	VADDPS Z5, Z4, Z4
	TERM2(64, 2, Z10, Z18, Z1, Z5)
	TERM2(192, 6, Z14, Z22, Z2, Z6)
	VADDPS Z2, Z1, Z1
	VADDPS Z6, Z5, Z5
	VADDPS Z1, Z0, Z0
	VADDPS Z5, Z4, Z4
	TERM2(32, 1, Z9, Z17, Z1, Z5)
	TERM2(160, 5, Z13, Z21, Z2, Z6)
	VADDPS Z2, Z1, Z1
	VADDPS Z6, Z5, Z5
	TERM2(96, 3, Z11, Z19, Z2, Z6)
	TERM2(224, 7, Z15, Z23, Z3, Z7)
	VADDPS Z3, Z2, Z2
	VADDPS Z7, Z6, Z6
	VADDPS Z2, Z1, Z1
	VADDPS Z6, Z5, Z5
	VADDPS Z1, Z0, Z0
	VADDPS Z5, Z4, Z4
	VCMPPS $0x11, Z24, Z0, K1 // score < best
	VMOVDQU32 256(SI), K1, Z25
	VPBROADCASTD BX, K1, Z26
	VMINPS Z0, Z24, Z24
	VCMPPS $0x11, Z27, Z4, K2
	VMOVDQU32 256(SI), K2, Z28
	VPBROADCASTD BX, K2, Z29
	VMINPS Z4, Z27, Z27
	INCL BX
	ADDQ $320, SI
	DECL CX
	JNE scan2

	MOVQ idx1+48(FP), R11
	MERGE2(Z24, Z25, Z26, Y26)
	VBROADCASTSS s4PosInf<>(SB), Y7
	REDUCE(fail2)
	MOVL BX, 0(R11)(DI*4)
	MOVQ idx2+56(FP), R11
	MERGE2(Z27, Z28, Z29, Y29)
	VBROADCASTSS s4PosInf<>(SB), Y7
	REDUCE(fail2)
	MOVL BX, 0(R11)(DI*4)
	ADDQ $32, R12
	INCQ DI
	CMPQ DI, $4
	JNE group2

	SUMS_BOTH(values+64(FP), x+32(FP), sums1+72(FP), idx1+48(FP), sums2+80(FP), idx2+56(FP))
	MOVQ $0, ret+88(FP)
	VZEROUPPER
	RET

fail2:
	MOVQ $1, ret+88(FP)
	VZEROUPPER
	RET

other2:
	MOVQ $2, ret+88(FP)
	VZEROUPPER
	RET
