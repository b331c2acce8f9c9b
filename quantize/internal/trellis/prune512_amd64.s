//go:build amd64 && !purego

#include "textflag.h"
#include "search512_amd64.h"
#include "prune4_amd64.h"

// The AVX-512 pruned block search (see prune512.go). Per group: the bounds
// of all pairs of the cluster (16 per vector), the best score U of the pair
// with the smallest bound lbmin, the pairs whose bound is at most
// T = lbmin + (U-lbmin)/5 scored (a list that holds at least the pair of
// U, as T >= lbmin), then those above T whose bound is not above the
// smallest score so far, and the reference's scan of the whole cluster
// where the smallest score is not reached exactly once. The four groups
// take each step in turn.

// Below the range check's 2^60, every score and bound is in [0, +Inf], so
// the bounds argument holds.
DATA p16Fifth<>+0(SB)/4, $0x3e4ccccd // 0.2
GLOBL p16Fifth<>(SB), RODATA|NOPTR, $4
DATA p16Sixteen<>+0(SB)/4, $16
GLOBL p16Sixteen<>(SB), RODATA|NOPTR, $4
// 0..15: the pairs of a block of bounds.
DATA p16Iota<>+0(SB)/8, $0x0000000100000000
DATA p16Iota<>+8(SB)/8, $0x0000000300000002
DATA p16Iota<>+16(SB)/8, $0x0000000500000004
DATA p16Iota<>+24(SB)/8, $0x0000000700000006
DATA p16Iota<>+32(SB)/8, $0x0000000900000008
DATA p16Iota<>+40(SB)/8, $0x0000000b0000000a
DATA p16Iota<>+48(SB)/8, $0x0000000d0000000c
DATA p16Iota<>+56(SB)/8, $0x0000000f0000000e
GLOBL p16Iota<>(SB), RODATA|NOPTR, $64

// The frame: 0 vx (32 float32), 128 the clusters (4 int32), 192 the lanes'
// pairs (16 int32); per group g, at 256+256*g its state between the steps:
// the lanes' best scores (Z4) and pairs (Z5), the cluster's pairs (8
// bytes), its number of pairs (8), the list's length (8), the pair of
// lbmin (8), lbmin (4), T (4), the tie flags (K6, 4), its boxes (8); at
// 1280+2048*g the bounds (prune16MaxPairs float32) and at 9472+2112*g the
// list (prune16MaxPairs+16 uint32); at 17920 the winners' values (4 x 8
// int32) and at 18048 the addresses of their ids (4 pointers, 0 where the
// scan chose).
#define F_VX 0
#define F_C 128
#define F_POS 192
#define F_G 256
#define G_Z4 (F_G+0)
#define G_Z5 (F_G+64)
#define G_BASE (F_G+128)
#define G_P (F_G+136)
#define G_N (F_G+144)
#define G_ARG (F_G+152)
#define G_LBMIN (F_G+160)
#define G_T (F_G+164)
#define G_TIE (F_G+168)
#define G_BOX (F_G+176)
#define G_IDS (F_G+184)
#define F_LB 1280
#define F_LIST 9472
#define F_Q 17920
#define F_IDA 18048

// BOX16 is one coordinate's term of 16 pairs' bounds: the distance from x
// (xr) to the box [lo, hi] (boxes at SI, coordinate k), squared, times the
// weight wr, as BOXTERM (prune_amd64.s) computes it: c-x for c, x clamped
// to the box, at most each candidate's term.
#define BOX16(k, xr, wr, dst, tmp) \
	VCVTPH2PS (64*k)(SI), dst \
	VMAXPS xr, dst, dst \
	VCVTPH2PS (64*k+32)(SI), tmp \
	VMINPS tmp, dst, dst \
	VSUBPS xr, dst, dst \
	VMULPS dst, dst, dst \
	VMULPS wr, dst, dst

// LIST(label, cond) writes to the list at AX the pairs of the CX blocks of
// bounds at DX for which cond (a macro: the bounds at DX in, K1 out) holds,
// without branches (VPCOMPRESSD into a register, then a whole store: the
// list has room for 16 more), and leaves AX after the last. BX, Z2, Z3, Z7
// scratch.
#define LIST(label, cond) \
	VMOVDQU32 p16Iota<>(SB), Z7 \
	VPBROADCASTD p16Sixteen<>(SB), Z3 \
label: \
	cond \
	VPCOMPRESSD Z7, K1, Z2 \
	VMOVDQU32 Z2, (AX) \
	KMOVW K1, BX \
	POPCNTL BX, BX \
	LEAQ (AX)(BX*4), AX \
	VPADDD Z3, Z7, Z7 \
	ADDQ $64, DX \
	DECQ CX \
	JNE label

// Conditions of LIST: T (Z24) >= bound; bound > T and bound <= best (Z0).
#define BELOW_T \
	VCMPPS $0x1D, (DX), Z24, K1
#define ABOVE_T \
	VMOVUPS (DX), Z1 \
	VCMPPS $0x1E, Z24, Z1, K1 \
	VCMPPS $0x12, Z0, Z1, K2 \
	KANDW K2, K1, K1

// FETCH(label) prefetches the CX > 0 pairs listed at DX (pairs of the
// cluster at R8) before they are scored. AX, BX and SI scratch.
#define FETCH(label) \
	MOVQ CX, AX \
	MOVQ DX, SI \
label: \
	MOVL (SI), BX \
	SHLQ $7, BX \
	PREFETCHT0 0(R8)(BX*1) \
	PREFETCHT0 64(R8)(BX*1) \
	ADDQ $4, SI \
	DECQ AX \
	JNE label

// SCAN(label) scores the CX > 0 pairs listed at DX (pairs of the cluster at
// R8) and updates, per lane, the best score Z4, the pair Z5 that reached
// it and whether another candidate reached the same score (K6); a smaller
// score clears the flag. BX, SI scratch.
#define SCAN(label) \
label: \
	MOVL (DX), BX \
	MOVQ BX, SI \
	SHLQ $7, SI \
	ADDQ R8, SI \
	SCORE_PAIR(BX) \
	ADDQ $4, DX \
	DECQ CX \
	JNE label

// GROUP sets R12 = 32*DI, R14 = 256*DI and R8 to the group's pairs, and
// broadcasts the group's vx into Z8..Z15 and its weights into Z16..Z23.
#define GROUP \
	MOVQ DI, R12 \
	SHLQ $5, R12 \
	MOVQ DI, R14 \
	SHLQ $8, R14 \
	MOVQ (G_BASE)(SP)(R14*1), R8 \
	GROUP_VXW(F_VX)

// LBBASE sets DX to the group's bounds, LISTBASE AX to its list.
#define LBBASE \
	MOVQ R12, DX \
	SHLQ $6, DX \
	LEAQ (F_LB)(SP)(DX*1), DX
#define LISTBASE \
	IMUL3Q $66, R12, AX \
	LEAQ (F_LIST)(SP)(AX*1), AX

// BLOCKS sets CX to the group's blocks of bounds.
#define BLOCKS \
	MOVQ (G_P)(SP)(R14*1), CX \
	ADDQ $15, CX \
	SHRQ $4, CX

// searchPruned8AVX512 is searchBlock8AVX512 with the pruned search of each
// group's cluster (pairs, boxes and spans of a prune16Layout), falling back
// to the reference's scan over lanes and lspans (a pairLayout) where the
// smallest score is not reached exactly once. It returns nonzero, with idx
// incomplete, if a scaled input is beyond 2^60 in magnitude or NaN, a
// weight is negative, +Inf or NaN, a cluster has no pruned pairs, or a
// search finds no score below +Inf.
//
// The four groups go through each step in turn (bounds for all, then the
// first list for all, ...): each step waits on memory fetched by the step
// before, so the groups' cache misses overlap rather than stall one group
// after the other.
//
// func searchPruned8AVX512(pairs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int
TEXT ·searchPruned8AVX512(SB), 0, $18080-112
	MOVQ spans+24(FP), R9
	MOVQ x+64(FP), AX
	MOVQ w+72(FP), R10
	MOVQ idx+80(FP), R11
	MOVQ values+88(FP), R13

	// The range check: |id*x| <= 2^60 and 0 <= w < +Inf (false for NaN).
	RANGE_X(id+56(FP), K1)
	RANGE_W(fail)

	MOVQ mid+48(FP), DX
	VMOVUPS 0(DX), Y6
	VBROADCASTSS id+56(FP), Y0

	CLUSTER8(0, F_VX, F_C)
	CLUSTER8(1, F_VX, F_C)
	CLUSTER8(2, F_VX, F_C)
	CLUSTER8(3, F_VX, F_C)

	// Step 0, each group: its cluster's pairs and boxes, and a fetch of
	// the boxes' first block.
	XORQ DI, DI

setup:
	MOVQ DI, R14
	SHLQ $8, R14
	MOVL (F_C)(SP)(DI*4), AX
	SHLQ $4, AX
	MOVL 0(R9)(AX*1), R8 // first pair
	MOVL 4(R9)(AX*1), CX // pairs
	MOVL 8(R9)(AX*1), SI // first block of boxes
	TESTL CX, CX
	JEQ fail
	MOVQ R8, BX
	SHLQ $6, BX
	ADDQ ids+16(FP), BX
	MOVQ BX, (G_IDS)(SP)(R14*1)
	SHLQ $7, R8
	ADDQ pairs+0(FP), R8
	MOVQ R8, (G_BASE)(SP)(R14*1)
	MOVQ CX, (G_P)(SP)(R14*1)
	SHLQ $9, SI
	ADDQ boxes+8(FP), SI
	MOVQ SI, (G_BOX)(SP)(R14*1)
	ADDQ $15, CX
	SHRQ $4, CX

fetchBoxes:
	PREFETCHT0 0(SI)
	PREFETCHT0 64(SI)
	PREFETCHT0 128(SI)
	PREFETCHT0 192(SI)
	PREFETCHT0 256(SI)
	PREFETCHT0 320(SI)
	PREFETCHT0 384(SI)
	PREFETCHT0 448(SI)
	ADDQ $512, SI
	DECQ CX
	JNE fetchBoxes
	INCQ DI
	CMPQ DI, $4
	JNE setup

	// Step 1, each group: the bounds of all pairs, in the scores' order
	// of additions, their minimum lbmin, and a fetch of the pair with the
	// smallest bound.
	XORQ DI, DI

step1:
	GROUP
	MOVQ (G_BOX)(SP)(R14*1), SI
	BLOCKS
	LBBASE
	VBROADCASTSS s4PosInf<>(SB), Z4
	VMOVDQU32 p16Iota<>(SB), Z27
	VPBROADCASTD p16Sixteen<>(SB), Z28

	// Each lane keeps its smallest bound (Z4) and that pair (Z26, the
	// first of equal ones; the pairs of this block in Z27): the argmin
	// without a second pass, whose loads would wait on the masked store
	// below.
bounds:
	BOX16(0, Z8, Z16, Z0, Z1)
	BOX16(4, Z12, Z20, Z1, Z2)
	VADDPS Z1, Z0, Z0
	BOX16(2, Z10, Z18, Z1, Z2)
	BOX16(6, Z14, Z22, Z2, Z3)
	VADDPS Z2, Z1, Z1
	VADDPS Z1, Z0, Z0
	BOX16(1, Z9, Z17, Z1, Z2)
	BOX16(5, Z13, Z21, Z2, Z3)
	VADDPS Z2, Z1, Z1
	BOX16(3, Z11, Z19, Z2, Z3)
	BOX16(7, Z15, Z23, Z3, Z5)
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, (DX)
	VCMPPS $0x11, Z4, Z0, K2
	VMOVDQA32 Z27, K2, Z26
	VMINPS Z0, Z4, Z4
	VPADDD Z28, Z27, Z27
	ADDQ $512, SI
	ADDQ $64, DX
	DECQ CX
	JNE bounds

	// The last block's unused bounds (copies of the last pair's) become
	// +Inf, so that no list holds them.
	MOVQ (G_P)(SP)(R14*1), CX
	ANDL $15, CX
	JEQ lbmin
	MOVL $-1, BX
	SHLL CX, BX
	KMOVW BX, K1
	VBROADCASTSS s4PosInf<>(SB), Z1
	VMOVUPS Z1, K1, -64(DX)

lbmin:
	// The pair of the smallest bound: that of the first lane that holds
	// it, where a copy of the last pair stands for the last pair.
	HMIN16(Z4)
	VBROADCASTSS s4PosInf<>(SB), Z1
	VUCOMISS X1, X0
	JEQ fail // every bound +Inf: so is every score
	VMOVSS X0, (G_LBMIN)(SP)(R14*1)
	LBBASE
	VCMPPS $0, Z0, Z4, K1
	KMOVW K1, BX
	BSFL BX, BX
	VMOVD BX, X1
	VPERMD Z26, Z1, Z1
	VMOVD X1, AX
	MOVQ (G_P)(SP)(R14*1), BX
	DECQ BX
	CMPQ AX, BX
	CMOVQGT BX, AX
	// That pair is scored in step 2, and step 3 starts from its scores:
	// its bound becomes +Inf, so that neither list holds it.
	MOVL $0x7f800000, (DX)(AX*4)
	SHLQ $7, AX
	LEAQ (R8)(AX*1), SI
	MOVQ SI, (G_ARG)(SP)(R14*1)
	PREFETCHT0 0(SI)
	PREFETCHT0 64(SI)
	INCQ DI
	CMPQ DI, $4
	JNE step1

	// Step 2, each group: U, the best score of the pair with the smallest
	// bound (its scores the lanes' first state, kept for step 3), T =
	// lbmin + (U-lbmin)/5, and the list of the other pairs whose bound is
	// at most T, fetched.
	XORQ DI, DI

step2:
	GROUP
	MOVQ (G_ARG)(SP)(R14*1), SI
	SCORE16I8
	VMOVUPS Z0, (G_Z4)(SP)(R14*1)
	MOVQ SI, AX
	SUBQ R8, AX
	SHRQ $7, AX // the pair
	VPBROADCASTD AX, Z1
	VMOVDQU32 Z1, (G_Z5)(SP)(R14*1)
	VMOVAPS Z0, Z4
	HMIN16(Z4)
	VBROADCASTSS s4PosInf<>(SB), Z1
	VUCOMISS X1, X0
	JEQ fail // U is +Inf: leave it to the exhaustive search
	VBROADCASTSS (G_LBMIN)(SP)(R14*1), Z25
	VSUBPS Z25, Z0, Z1
	VBROADCASTSS p16Fifth<>(SB), Z2
	VMULPS Z2, Z1, Z1
	VADDPS Z25, Z1, Z24 // T
	VMOVSS X24, (G_T)(SP)(R14*1)
	LBBASE
	LISTBASE
	BLOCKS
	LIST(listA, BELOW_T)
	MOVQ AX, CX
	LISTBASE
	SUBQ AX, CX
	SHRQ $2, CX
	MOVQ CX, (G_N)(SP)(R14*1)
	JCXZQ next2
	MOVQ AX, DX
	FETCH(fetchA)

next2:
	INCQ DI
	CMPQ DI, $4
	JNE step2

	// Step 3, each group: the first list scored; then the list of the
	// pairs above T whose bound is not above the smallest score so far
	// (any pair left out scores above a score seen), fetched.
	XORQ DI, DI

step3:
	GROUP
	VMOVUPS (G_Z4)(SP)(R14*1), Z4
	VMOVDQU32 (G_Z5)(SP)(R14*1), Z5
	KXORW K6, K6, K6
	MOVQ (G_N)(SP)(R14*1), CX
	TESTQ CX, CX
	JEQ listB0
	LISTBASE
	MOVQ AX, DX
	SCAN(scanA)

listB0:
	HMIN16(Z4)
	VBROADCASTSS (G_T)(SP)(R14*1), Z24
	LBBASE
	LISTBASE
	BLOCKS
	LIST(listB, ABOVE_T)
	MOVQ AX, CX
	LISTBASE
	SUBQ AX, CX
	SHRQ $2, CX
	MOVQ CX, (G_N)(SP)(R14*1)
	VMOVUPS Z4, (G_Z4)(SP)(R14*1)
	VMOVDQU32 Z5, (G_Z5)(SP)(R14*1)
	KMOVW K6, BX
	MOVL BX, (G_TIE)(SP)(R14*1)
	TESTQ CX, CX
	JEQ next3
	MOVQ AX, DX
	FETCH(fetchB)

next3:
	INCQ DI
	CMPQ DI, $4
	JNE step3

	// Step 4, each group: the second list scored, and the winner.
	XORQ DI, DI

step4:
	GROUP
	VMOVUPS (G_Z4)(SP)(R14*1), Z4
	VMOVDQU32 (G_Z5)(SP)(R14*1), Z5
	KMOVW (G_TIE)(SP)(R14*1), K6
	MOVQ (G_N)(SP)(R14*1), CX
	TESTQ CX, CX
	JEQ winner
	LISTBASE
	MOVQ AX, DX
	SCAN(scanB)

winner:
	// The smallest score wins if one lane holds it and no other
	// candidate of that lane reached it. Its values are copied from its
	// pair (bytes 16k+lane, just scored) for the sums, and the line of its
	// id is fetched, to be read after the last group.
	PICK_POS(tie, F_POS)
	MOVQ BX, AX
	SHRQ $4, AX
	SHLQ $7, AX // 128 bytes per pair
	ADDQ R8, AX
	MOVQ BX, CX
	ANDQ $15, CX
	ADDQ CX, AX
	MOVBLSX 0(AX), CX
	MOVL CX, (F_Q+0)(SP)(R12*1)
	MOVBLSX 16(AX), CX
	MOVL CX, (F_Q+4)(SP)(R12*1)
	MOVBLSX 32(AX), CX
	MOVL CX, (F_Q+8)(SP)(R12*1)
	MOVBLSX 48(AX), CX
	MOVL CX, (F_Q+12)(SP)(R12*1)
	MOVBLSX 64(AX), CX
	MOVL CX, (F_Q+16)(SP)(R12*1)
	MOVBLSX 80(AX), CX
	MOVL CX, (F_Q+20)(SP)(R12*1)
	MOVBLSX 96(AX), CX
	MOVL CX, (F_Q+24)(SP)(R12*1)
	MOVBLSX 112(AX), CX
	MOVL CX, (F_Q+28)(SP)(R12*1)
	SHLQ $2, BX
	ADDQ (G_IDS)(SP)(R14*1), BX
	PREFETCHT0 (BX)
	MOVQ BX, (F_IDA)(SP)(DI*8)
	JMP next4

tie:
	// The reference's scan of the whole cluster (searchBlock8AVX512's).
	MOVL (F_C)(SP)(DI*4), AX
	MOVQ lspans+40(FP), BX
	MOVL 0(BX)(AX*8), SI
	MOVL 4(BX)(AX*8), CX
	TESTL CX, CX
	JEQ fail
	ADDQ lanes+32(FP), SI
	SCAN_PAIRS(full, fail)
	MOVL BX, 0(R11)(DI*4)
	MOVQ $0, (F_IDA)(SP)(DI*8)
	SHLQ $5, BX
	VCVTTPS2DQ (R13)(BX*1), Y0 // integers: exact
	VMOVDQU Y0, (F_Q)(SP)(R12*1)

next4:
	INCQ DI
	CMPQ DI, $4
	JNE step4

	MOVQ sums+96(FP), CX
	TESTQ CX, CX
	JEQ ids0
	MOVQ x+64(FP), DX
	SUMSQ(F_Q)

ids0:
	// The pruned winners' codewords: four independent loads.
	XORQ DI, DI

ids:
	MOVQ (F_IDA)(SP)(DI*8), BX
	TESTQ BX, BX
	JEQ kept
	MOVL (BX), BX
	MOVL BX, 0(R11)(DI*4)

kept:
	INCQ DI
	CMPQ DI, $4
	JNE ids

ok:
	MOVQ $0, ret+104(FP)
	VZEROUPPER
	RET

fail:
	MOVQ $1, ret+104(FP)
	VZEROUPPER
	RET

// GROUP4_VXW broadcasts group R12/16's scaled inputs (on the stack) into
// Z8..Z11 and its weights (at R10) into Z12..Z15, as SCORE4_16I8 takes them.
#define GROUP4_VXW \
	VBROADCASTSS 0(SP)(R12*1), Z8 \
	VBROADCASTSS 4(SP)(R12*1), Z9 \
	VBROADCASTSS 8(SP)(R12*1), Z10 \
	VBROADCASTSS 12(SP)(R12*1), Z11 \
	VBROADCASTSS 0(R10)(R12*1), Z12 \
	VBROADCASTSS 4(R10)(R12*1), Z13 \
	VBROADCASTSS 8(R10)(R12*1), Z14 \
	VBROADCASTSS 12(R10)(R12*1), Z15

// searchPruned4AVX512 is searchBlock4AVX512 with a pruned search of each
// group's cluster (pairs, boxes, ids, spans: the codebook's prune4Layout;
// see prune4.go): the bounds of all the cluster's pairs (16 per vector, in
// the scores' order of additions), the best score U of the pair with the
// smallest bound, the list of the pairs whose bound is not above U (the
// pair of U among them), each listed pair scored, each lane keeping its
// smallest score, the pair that reached it and whether another candidate
// reached the same. A pair left out scores above U, so none of its
// candidates can win or tie. It returns nonzero, with idx incomplete, if a
// scaled input is beyond 2^60 in magnitude or NaN, a weight is negative,
// +Inf or NaN, a cluster has no pruned pairs, or a group's smallest score is
// not reached by exactly one candidate (the reference's order among equal
// scores is its scan's: the exhaustive search decides).
//
// A group's data are random accesses into megabytes (its cluster's boxes,
// a few of its pairs, the winner's id), each needed by the step after the
// one that finds it: the eight groups take each step in turn, each step
// fetching what the next needs, so that their cache misses overlap.
//
// Frame: see prune4_amd64.h.
//
// func searchPruned4AVX512(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int
TEXT ·searchPruned4AVX512(SB), 0, $10112-80
	MOVQ spans+24(FP), R9
	MOVQ x+40(FP), AX
	MOVQ w+48(FP), R10
	MOVQ idx+56(FP), R11

	// The range check: |id*x| <= 2^60 and 0 <= w < +Inf (false for NaN).
	RANGE_X(id+32(FP), K1)
	RANGE_W(fail4)

	VBROADCASTSS id+32(FP), Y0
	BINS4_BLOCK

	// Step 0, each group: its cluster's pairs and ids, and a fetch of its
	// boxes.
	P4_SETUP(fail4)

	// Step 1, each group: the bounds of all its pairs, in the scores'
	// order of additions, and a fetch of the pair with the smallest.
	XORQ DI, DI
	XORQ R12, R12

step1_4:
	IMUL3Q $48, DI, R14
	GROUP4_VXW
	MOVQ S_PTR(SP)(R14*1), SI
	MOVQ S_NP(SP)(R14*1), CX
	ADDQ $15, CX
	SHRQ $4, CX
	P4_BOUNDS_BASE
	VBROADCASTSS s4PosInf<>(SB), Z4
	VMOVDQU32 p16Iota<>(SB), Z7
	VPBROADCASTD p16Sixteen<>(SB), Z6

	// Each lane keeps its smallest bound (Z4) and that pair (Z5, the
	// first of equal ones): the argmin without a second pass, whose loads
	// would wait on the masked store below.
bounds4:
	BOX16(0, Z8, Z12, Z0, Z1)
	BOX16(2, Z10, Z14, Z1, Z2)
	VADDPS Z1, Z0, Z0
	BOX16(1, Z9, Z13, Z1, Z2)
	BOX16(3, Z11, Z15, Z2, Z3)
	VADDPS Z2, Z1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, (DX)
	VCMPPS $0x11, Z4, Z0, K2
	VMOVDQA32 Z7, K2, Z5
	VMINPS Z0, Z4, Z4
	VPADDD Z6, Z7, Z7
	ADDQ $256, SI
	ADDQ $64, DX
	DECQ CX
	JNE bounds4

	// The last block's unused bounds (copies of the last pair's) become
	// +Inf, so that no pair is listed twice.
	MOVQ S_NP(SP)(R14*1), CX
	ANDL $15, CX
	JEQ lbmin4
	MOVL $-1, BX
	SHLL CX, BX
	KMOVW BX, K1
	VBROADCASTSS s4PosInf<>(SB), Z1
	VMOVUPS Z1, K1, -64(DX)

lbmin4:
	// The pair of the smallest bound: that of the first lane that holds
	// it, where a copy of the last pair stands for the last pair.
	HMIN16(Z4)
	VBROADCASTSS s4PosInf<>(SB), Z1
	VUCOMISS X1, X0
	JEQ fail4 // every bound +Inf: so is every score
	VCMPPS $0, Z0, Z4, K1
	KMOVW K1, BX
	BSFL BX, BX
	VMOVDQU32 Z5, P4_POS(SP)
	P4_ARGMIN(step1_4)

	// Step 2, each group: U, the best score of the pair with the smallest
	// bound (its scores kept for step 3), and the list of the other pairs
	// whose bound is not above U, fetched with the lines of their ids (one
	// line per pair: the winner's id is then at hand, where fetching it
	// once found took 9 % of the search in waits at its end).
	XORQ DI, DI
	XORQ R12, R12

step2_4:
	IMUL3Q $48, DI, R14
	GROUP4_VXW
	MOVQ S_PTR(SP)(R14*1), SI
	SCORE4_16I8
	VMOVUPS Z0, P4_S(SP)(R12*4)
	HMIN16(Z0)
	VBROADCASTSS s4PosInf<>(SB), Z1
	VUCOMISS X1, X0
	JEQ fail4 // U is +Inf: no score is below it, and every pair would be listed
	VBROADCASTSS X0, Z24 // U
	P4_BOUNDS_BASE
	P4_LIST_BASE
	MOVQ S_NP(SP)(R14*1), CX
	ADDQ $15, CX
	SHRQ $4, CX
	LIST(list4, BELOW_T)
	MOVQ AX, CX
	P4_LIST_BASE
	SUBQ AX, CX
	SHRQ $2, CX
	MOVQ CX, S_N(SP)(R14*1)
	JCXZQ next2_4
	MOVQ AX, DX
	MOVQ S_PAIRS(SP)(R14*1), R8
	MOVQ S_IDS(SP)(R14*1), SI

fetch4:
	MOVL (DX), BX
	SHLQ $6, BX
	PREFETCHT0 0(R8)(BX*1)
	PREFETCHT0 0(SI)(BX*1)
	ADDQ $4, DX
	DECQ CX
	JNE fetch4

next2_4:
	P4_NEXT(step2_4)

	// Step 3, each group: the listed pairs scored, the lanes of copies
	// at +Inf, and the winner's values and id address.
	XORQ DI, DI
	XORQ R12, R12

step3_4:
	IMUL3Q $48, DI, R14
	GROUP4_VXW

	// The pair of U, scored in step 2, is kept first, as any other.
	VBROADCASTSS s4PosInf<>(SB), Z4
	VPXORD Z5, Z5, Z5
	KXORW K6, K6, K6
	P4_LIST_BASE
	MOVQ AX, DX
	MOVQ S_N(SP)(R14*1), CX
	MOVQ S_PAIRS(SP)(R14*1), R8
	MOVQ S_PTR(SP)(R14*1), BX
	SUBQ R8, BX
	SHRQ $6, BX
	VMOVUPS P4_S(SP)(R12*4), Z0
	INCQ CX
	JMP copies4

scan4:
	MOVL (DX), BX
	MOVQ BX, SI
	SHLQ $6, SI
	ADDQ R8, SI
	SCORE4_16I8
	ADDQ $4, DX

copies4:
	CMPQ BX, S_ODD(SP)(R14*1)
	JNE track4
	MOVL $0xff00, AX
	KMOVW AX, K3
	VBROADCASTSS s4PosInf<>(SB), K3, Z0 // the copies

track4:
	TRACK_PAIR(BX)
	DECQ CX
	JNE scan4

	// The smallest score wins if one lane holds it and no other candidate
	// of that lane reached it.
	PICK_POS(fail4, P4_POS)
	P4_WINNER(step3_4)

	P4_END(fail4)
