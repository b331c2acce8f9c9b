//go:build amd64 && !purego

#include "textflag.h"
#include "search512_amd64.h"

// The filtered two-scale search (see filter.go): an estimate of every
// candidate's score at both scales from one read of the cluster's pairs in
// the pruned layout (int8), then the reference's score only for the pairs
// with an estimate within the error margin of the smallest.

DATA f127<>+0(SB)/4, $0x42fe0000 // 127, above every codeword value's magnitude
GLOBL f127<>(SB), RODATA|NOPTR, $4
DATA fMinus2<>+0(SB)/4, $0xc0000000 // -2
GLOBL fMinus2<>(SB), RODATA|NOPTR, $4
DATA fLimit<>+0(SB)/4, $0x71800000 // 2^100: the largest bound S the filter takes
GLOBL fLimit<>(SB), RODATA|NOPTR, $4
DATA fMargin<>+0(SB)/4, $0x37800000 // 2^-16: the margin's share of S
GLOBL fMargin<>(SB), RODATA|NOPTR, $4
DATA fTiny<>+0(SB)/4, $0x03800000 // 2^-120: the margin's floor, for subnormal terms
GLOBL fTiny<>(SB), RODATA|NOPTR, $4

// The frame: 0 vx at id1, 128 vx at id2 (32 float32 each), 256 the
// clusters (4 int32; CLUSTER8X2's), 288 the group's n1, 320 its n2 (8
// float32 each: -2*vx), 352 the thresholds (2 float32), 360 the margins (2
// float32), 368 the cluster's pairs (8 bytes), 376 the position of its
// first codeword in ids (8 bytes), 384 PICK_POS's scratch (64 bytes), 448
// the addresses idx1 and idx2, 512 the estimates: per pair, 16 float32 at
// id1 then 16 at id2, and three pairs more.
#define F_N1 288
#define F_N2 320
#define F_TH 352
#define F_MARGIN 360
#define F_NP 368
#define F_IDS 376
#define F_POS 384
#define F_OUT 448
#define F_EST 512

// filterMaxPairs bounds a cluster's pairs (the estimates are on the stack);
// a larger one returns 3.
#define filterMaxPairs 256

// BOUND8(vxoff, dst) leaves in dst (an X register) S = Σ w(127+|vx|)² for
// the group's scaled inputs at vxoff(SP)(R12*1) (weights in Y3, |.| mask in
// Y7, 127 in Y6), an upper bound of every candidate's exact score. Y2
// scratch.
#define BOUND8(vxoff, ydst, xdst) \
	VANDPS vxoff(SP)(R12*1), Y7, ydst \
	VADDPS Y6, ydst, ydst \
	VMULPS ydst, ydst, ydst \
	VMULPS Y3, ydst, ydst \
	VEXTRACTF128 $1, ydst, X2 \
	VADDPS X2, xdst, xdst \
	VMOVHLPS xdst, xdst, X2 \
	VADDPS X2, xdst, xdst \
	VMOVSHDUP xdst, X2 \
	VADDSS X2, xdst, xdst

// MARGIN(xs, off) checks S (xs) against fLimit, jumping to out unless
// below, and stores S*2^-16 + 2^-120 at off(SP). X2 scratch.
#define MARGIN(xs, off) \
	VMOVSS fLimit<>(SB), X2 \
	VUCOMISS X2, xs \
	JCC out \
	JPS out \
	VMULSS fMargin<>(SB), xs, xs \
	VADDSS fTiny<>(SB), xs, xs \
	VMOVSS xs, off(SP)

// ESTIMATE(k, wr, n1r, n2r) adds coordinate k's terms wq(q+n) to the
// estimates of the pair at SI at both scales (Z4, Z5): the product wq is
// shared, so each scale costs an addition and a fused multiply-add, and the
// additions run beside the multiplications.
#define ESTIMATE(k, wr, n1r, n2r) \
	I8_COORD(k, Z0) \
	VMULPS wr, Z0, Z1 \
	VADDPS n1r, Z0, Z2 \
	VADDPS n2r, Z0, Z3 \
	VFMADD231PS Z2, Z1, Z4 \
	VFMADD231PS Z3, Z1, Z5

// FILTERED(chunk, next, hit, sub, skip, done) scores (SCORE_PAIR) the
// pairs among the CX > 0 at SI (pruned layout) that have an estimate (at
// DX, 128 bytes per pair, +Inf past the last) not above the threshold Z27.
// It looks at four pairs at a time (their smallest estimates), and at each
// of the four only where one is not above. BX counts the pairs; AX, R11 and
// R13 scratch, with SCORE_PAIR's.
#define FILTERED(chunk, next, hit, sub, skip, done) \
	VBROADCASTSS s4PosInf<>(SB), Z4 \
	VPXORD Z5, Z5, Z5 \
	KXORW K6, K6, K6 \
	XORQ BX, BX \
chunk: \
	VMOVUPS (DX), Z0 \
	VMINPS 128(DX), Z0, Z0 \
	VMINPS 256(DX), Z0, Z0 \
	VMINPS 384(DX), Z0, Z0 \
	VCMPPS $0x1D, Z0, Z27, K1 \
	KORTESTW K1, K1 \
	JNE hit \
next: \
	ADDQ $4, BX \
	ADDQ $512, SI \
	ADDQ $512, DX \
	SUBL $4, CX \
	JGT chunk \
	JMP done \
hit: \
	MOVQ SI, R13 \
	MOVQ DX, R11 \
	MOVL $4, AX \
sub: \
	VCMPPS $0x1D, (R11), Z27, K1 \
	KORTESTW K1, K1 \
	JEQ skip \
	SCORE_PAIR(BX) \
skip: \
	INCQ BX \
	ADDQ $128, SI \
	ADDQ $128, R11 \
	DECL AX \
	JNE sub \
	SUBQ $4, BX \
	MOVQ R13, SI \
	JMP next \
done:

// RESOLVE(loop, kept) replaces each of the four entries at R11 that has
// bit 31 set by the codeword at that position in ids (at SI). AX, BX and CX
// scratch.
#define RESOLVE(loop, kept) \
	XORQ CX, CX \
loop: \
	MOVL (R11)(CX*4), AX \
	BTRL $31, AX \
	JCC kept \
	MOVL (SI)(AX*4), BX \
	MOVL BX, (R11)(CX*4) \
kept: \
	INCQ CX \
	CMPQ CX, $4 \
	JNE loop

// PASS2(vx, th, est, idx, chunk, next, hit, sub, skip, done, tie, full,
// found) runs pass 2 for one scale (scaled inputs at vx on the stack, its
// threshold at th, estimates from est) and stores the group's codeword in
// the array whose address is at idx on the stack: the winner of the scored
// pairs (as its position in ids with bit 31 set, its line fetched: RESOLVE
// reads them all at the end, so that their cache misses overlap), or, where the smallest
// score is not reached exactly once, the reference's scan of the cluster
// in the pairLayout.
#define PASS2(vx, th, est, idx, chunk, next, hit, sub, skip, done, tie, full, found) \
	GROUP_VXW(vx) \
	VBROADCASTSS th(SP), Z27 \
	MOVQ R14, SI \
	LEAQ est(SP), DX \
	MOVQ F_NP(SP), CX \
	FILTERED(chunk, next, hit, sub, skip, done) \
	PICK_POS(tie, F_POS) \
	ADDL F_IDS(SP), BX \
	MOVQ ids+8(FP), AX \
	PREFETCHT0 (AX)(BX*4) \
	ORL $0x80000000, BX \
	JMP found \
tie: \
	MOVL 256(SP)(DI*4), AX \
	MOVQ lspans+32(FP), BX \
	MOVL 0(BX)(AX*8), SI \
	MOVL 4(BX)(AX*8), CX \
	TESTL CX, CX \
	JEQ fail \
	ADDQ lanes+24(FP), SI \
	SCAN_PAIRS(full, fail) \
found: \
	MOVQ idx(SP), R11 \
	MOVL BX, 0(R11)(DI*4)

// searchFiltered8x2AVX512 is searchBlock8x2AVX512 (the same results and
// return values) over the pruned layout (pairs, ids, spans of a
// prune16Layout), scoring exactly only the candidates the estimates leave
// in, and the reference's scan (lanes, lspans: a pairLayout) where the
// smallest score is not reached exactly once. It returns 3, with the
// results incomplete, where a bound S reaches 2^100 or a cluster has no
// pruned pairs or more than filterMaxPairs.
//
// func searchFiltered8x2AVX512(pairs *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id1, id2 float32, x, w *[32]float32, idx1, idx2 *[4]int32, values *float32, sums1, sums2 *[16]float32) int
TEXT ·searchFiltered8x2AVX512(SB), 0, $33664-120
	MOVQ pairs+0(FP), R8
	MOVQ spans+16(FP), R9
	MOVQ x+56(FP), AX
	MOVQ w+64(FP), R10

	TWO_SCALES(id1+48(FP), id2+52(FP), mid+40(FP), fail, other)

	MOVQ idx1+72(FP), AX
	MOVQ AX, F_OUT(SP)
	MOVQ idx2+80(FP), AX
	MOVQ AX, (F_OUT+8)(SP)
	XORQ DI, DI // group
	XORQ R12, R12 // 32*group

group:
	MOVL 256(SP)(DI*4), AX
	SHLQ $4, AX
	MOVL 0(R9)(AX*1), R14 // first pair
	MOVL 4(R9)(AX*1), CX // pairs
	TESTL CX, CX
	JEQ out
	CMPL CX, $filterMaxPairs
	JHI out
	MOVQ CX, F_NP(SP)
	MOVQ R14, BX
	SHLQ $4, BX
	MOVQ BX, F_IDS(SP)
	SHLQ $7, R14
	ADDQ R8, R14 // the cluster's pairs

	// The margins of both scales, and n = -2*vx (exact).
	VMOVUPS (R10)(R12*1), Y3
	VBROADCASTSS s4Abs<>(SB), Y7
	VBROADCASTSS f127<>(SB), Y6
	BOUND8(0, Y0, X0)
	BOUND8(128, Y1, X1)
	MARGIN(X0, F_MARGIN)
	MARGIN(X1, F_MARGIN+4)
	VBROADCASTSS fMinus2<>(SB), Y6
	VMULPS 0(SP)(R12*1), Y6, Y0
	VMOVUPS Y0, F_N1(SP)
	VMULPS 128(SP)(R12*1), Y6, Y1
	VMOVUPS Y1, F_N2(SP)
	// Pass 1: the estimates of every pair at both scales, and their minima.
	BCAST8(0, R10, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	VBROADCASTSS (F_N1+0)(SP), Z16
	VBROADCASTSS (F_N1+4)(SP), Z17
	VBROADCASTSS (F_N1+8)(SP), Z18
	VBROADCASTSS (F_N1+12)(SP), Z19
	VBROADCASTSS (F_N1+16)(SP), Z20
	VBROADCASTSS (F_N1+20)(SP), Z21
	VBROADCASTSS (F_N1+24)(SP), Z22
	VBROADCASTSS (F_N1+28)(SP), Z23
	VBROADCASTSS (F_N2+0)(SP), Z24
	VBROADCASTSS (F_N2+4)(SP), Z25
	VBROADCASTSS (F_N2+8)(SP), Z26
	VBROADCASTSS (F_N2+12)(SP), Z27
	VBROADCASTSS (F_N2+16)(SP), Z28
	VBROADCASTSS (F_N2+20)(SP), Z29
	VBROADCASTSS (F_N2+24)(SP), Z30
	VBROADCASTSS (F_N2+28)(SP), Z31
	MOVQ R14, SI
	LEAQ F_EST(SP), DX
	VBROADCASTSS s4PosInf<>(SB), Z6
	VMOVAPS Z6, Z7
	PCALIGN $64

estimate:
	I8_COORD(0, Z0)
	VMULPS Z8, Z0, Z1
	VADDPS Z16, Z0, Z2
	VADDPS Z24, Z0, Z3
	VMULPS Z2, Z1, Z4
	VMULPS Z3, Z1, Z5
	ESTIMATE(1, Z9, Z17, Z25)
	ESTIMATE(2, Z10, Z18, Z26)
	ESTIMATE(3, Z11, Z19, Z27)
	ESTIMATE(4, Z12, Z20, Z28)
	ESTIMATE(5, Z13, Z21, Z29)
	ESTIMATE(6, Z14, Z22, Z30)
	ESTIMATE(7, Z15, Z23, Z31)
	VMOVUPS Z4, 0(DX)
	VMOVUPS Z5, 64(DX)
	VMINPS Z4, Z6, Z6
	VMINPS Z5, Z7, Z7
	ADDQ $128, SI
	ADDQ $128, DX
	DECL CX
	JNE estimate
	// Three pairs of +Inf after the last, for pass 2's groups of four.
	VBROADCASTSS s4PosInf<>(SB), Z0
	VMOVUPS Z0, 0(DX)
	VMOVUPS Z0, 64(DX)
	VMOVUPS Z0, 128(DX)
	VMOVUPS Z0, 192(DX)
	VMOVUPS Z0, 256(DX)
	VMOVUPS Z0, 320(DX)

	// The thresholds: the smallest estimate plus the margin.
	HMIN16(Z6)
	VADDSS F_MARGIN(SP), X0, X0
	VMOVSS X0, F_TH(SP)
	HMIN16(Z7)
	VADDSS (F_MARGIN+4)(SP), X0, X0
	VMOVSS X0, (F_TH+4)(SP)

	// Pass 2 at each scale: the reference's scores of the pairs left in.
	PASS2(0, F_TH, F_EST, F_OUT, chunk1, next1, hit1, sub1, skip1, done1, tie1, full1, found1)
	PASS2(128, F_TH+4, F_EST+64, F_OUT+8, chunk2, next2, hit2, sub2, skip2, done2, tie2, full2, found2)

	ADDQ $32, R12
	INCQ DI
	CMPQ DI, $4
	JNE group

	MOVQ ids+8(FP), SI
	MOVQ idx1+72(FP), R11
	RESOLVE(res1, kept1)
	MOVQ idx2+80(FP), R11
	RESOLVE(res2, kept2)

	SUMS_BOTH(values+88(FP), x+56(FP), sums1+96(FP), idx1+72(FP), sums2+104(FP), idx2+80(FP))
	MOVQ $0, ret+112(FP)
	VZEROUPPER
	RET

fail:
	MOVQ $1, ret+112(FP)
	VZEROUPPER
	RET

other:
	MOVQ $2, ret+112(FP)
	VZEROUPPER
	RET

out:
	MOVQ $3, ret+112(FP)
	VZEROUPPER
	RET
