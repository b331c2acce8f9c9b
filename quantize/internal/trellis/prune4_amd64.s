//go:build amd64 && !purego

#include "textflag.h"
#include "search_amd64.h"
#include "prune4_amd64.h"

// searchPruned4AVX2 is searchPruned4AVX512 (prune512_amd64.s) with 256-bit
// vectors, over the same prune4Layout: a pair of 16 codewords is scored as
// its two runs of 8 (the candidate in lane i of run h of pair p is the
// pair's lane 8h+i), the bounds of eight pairs fill a vector, and the
// pairs to score are listed without branches (pruneLeftPack moves a block's
// listed pairs to the front), as searchPruned8AVX2 lists its runs.

DATA p4PosInf<>+0(SB)/4, $0x7f800000
GLOBL p4PosInf<>(SB), RODATA|NOPTR, $4
DATA p4Abs<>+0(SB)/4, $0x7fffffff
GLOBL p4Abs<>(SB), RODATA|NOPTR, $4
// Below 2^60 in magnitude, every score and bound is in [0, +Inf].
DATA p4Big<>+0(SB)/4, $0x5d800000
GLOBL p4Big<>(SB), RODATA|NOPTR, $4
DATA p4Lanes<>+0(SB)/4, $0
DATA p4Lanes<>+4(SB)/4, $1
DATA p4Lanes<>+8(SB)/4, $2
DATA p4Lanes<>+12(SB)/4, $3
DATA p4Lanes<>+16(SB)/4, $4
DATA p4Lanes<>+20(SB)/4, $5
DATA p4Lanes<>+24(SB)/4, $6
DATA p4Lanes<>+28(SB)/4, $7
GLOBL p4Lanes<>(SB), RODATA|NOPTR, $32
DATA p4Eight<>+0(SB)/4, $8
GLOBL p4Eight<>(SB), RODATA|NOPTR, $4
DATA p4Lanes8<>+0(SB)/4, $8
DATA p4Lanes8<>+4(SB)/4, $9
DATA p4Lanes8<>+8(SB)/4, $10
DATA p4Lanes8<>+12(SB)/4, $11
DATA p4Lanes8<>+16(SB)/4, $12
DATA p4Lanes8<>+20(SB)/4, $13
DATA p4Lanes8<>+24(SB)/4, $14
DATA p4Lanes8<>+28(SB)/4, $15
GLOBL p4Lanes8<>(SB), RODATA|NOPTR, $32

// HMIN8(src) leaves the smallest of the eight lanes of src in every lane
// of Y0 (Y1 scratch). No lane is NaN here.
#define HMIN8(src) \
	VPERM2F128 $1, src, src, Y0 \
	VMINPS Y0, src, Y0 \
	VPERMILPS $0x4E, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VPERMILPS $0xB1, Y0, Y1 \
	VMINPS Y1, Y0, Y0

// BOX8(k, xr, wr, dst, tmp) is one coordinate's term of the bounds of the
// eight pairs whose boxes are at SI (coordinate k's smallest values as
// fp16 at 64*k, largest at 64*k+32), as BOX16 computes it.
#define BOX8(k, xr, wr, dst, tmp) \
	VCVTPH2PS (64*k)(SI), dst \
	VMAXPS xr, dst, dst \
	VCVTPH2PS (64*k+32)(SI), tmp \
	VMINPS tmp, dst, dst \
	VSUBPS xr, dst, dst \
	VMULPS dst, dst, dst \
	VMULPS wr, dst, dst

// BOUNDS8 stores at DX the bounds of the eight pairs whose boxes are at
// SI, in the scores' order of additions, and keeps, per lane, the smallest
// in Y4 and its pair in Y5 (the first of equal ones; the pairs of these
// eight in Y7, stepped by Y6 = 8).
#define BOUNDS8 \
	BOX8(0, Y8, Y12, Y0, Y1) \
	BOX8(2, Y10, Y14, Y1, Y2) \
	VADDPS Y1, Y0, Y0 \
	BOX8(1, Y9, Y13, Y1, Y2) \
	BOX8(3, Y11, Y15, Y2, Y3) \
	VADDPS Y2, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	VMOVUPS Y0, (DX) \
	VCMPPS $0x11, Y4, Y0, Y1 \
	VBLENDVPS Y1, Y7, Y5, Y5 \
	VMINPS Y0, Y4, Y4 \
	VPADDD Y6, Y7, Y7

// QK4 loads coordinate k of the eight candidates of the run at SI (int8 at
// 16*k) into dst as float32.
#define QK4(k, dst) \
	VPMOVSXBD (16*k)(SI), dst \
	VCVTDQ2PS dst, dst

// SCORE4_8 is the score of the run at SI in Y0, in searchBlock4AVX2's order
// of additions (vx broadcast in Y8..Y11, weights in Y12..Y15, Y1 and Y2
// scratch).
#define SCORE4_8 \
	QK4(0, Y0) \
	VSUBPS Y8, Y0, Y0 \
	VMULPS Y0, Y0, Y0 \
	VMULPS Y12, Y0, Y0 \
	QK4(2, Y1) \
	VSUBPS Y10, Y1, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS Y14, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	QK4(1, Y1) \
	VSUBPS Y9, Y1, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS Y13, Y1, Y1 \
	QK4(3, Y2) \
	VSUBPS Y11, Y2, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS Y15, Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	VADDPS Y1, Y0, Y0

// KEEP4 updates, per lane, the best score Y4, the position Y5 of the
// candidate that reached it and whether another candidate reached the same
// score (Y7, all ones) with the scores Y0 of candidates at positions Y3
// (Y1, Y2 scratch). A smaller score clears the flag.
#define KEEP4 \
	VCMPPS $0x11, Y4, Y0, Y1 \
	VCMPPS $0, Y4, Y0, Y2 \
	VBLENDVPS Y1, Y3, Y5, Y5 \
	VANDNPS Y7, Y1, Y7 \
	VORPS Y2, Y7, Y7 \
	VMINPS Y0, Y4, Y4

// GROUP4 broadcasts group R12/16's scaled inputs (on the stack) into
// Y8..Y11 and its weights (at R10) into Y12..Y15, and sets R14 to its state.
#define GROUP4 \
	IMUL3Q $3, R12, R14 \
	VBROADCASTSS 0(SP)(R12*1), Y8 \
	VBROADCASTSS 4(SP)(R12*1), Y9 \
	VBROADCASTSS 8(SP)(R12*1), Y10 \
	VBROADCASTSS 12(SP)(R12*1), Y11 \
	VBROADCASTSS 0(R10)(R12*1), Y12 \
	VBROADCASTSS 4(R10)(R12*1), Y13 \
	VBROADCASTSS 8(R10)(R12*1), Y14 \
	VBROADCASTSS 12(R10)(R12*1), Y15

// searchPruned4AVX2 is searchPruned4AVX512 with AVX2 (see above), for the
// same results; it also returns nonzero where a scaled input is beyond 2^60
// in magnitude or NaN, or a weight negative, +Inf or NaN.
//
// Frame: see prune4_amd64.h.
//
// func searchPruned4AVX2(pairs, boxes *byte, ids, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, sums *[16]float32) int
TEXT ·searchPruned4AVX2(SB), 0, $10112-80
	MOVQ spans+24(FP), R9
	MOVQ x+40(FP), AX
	MOVQ w+48(FP), R10
	MOVQ idx+56(FP), R11
	VBROADCASTSS id+32(FP), Y0
	BINS4_BLOCK

	// The range check: |vx| <= 2^60 and 0 <= w < +Inf (false for NaN).
	VBROADCASTSS p4Abs<>(SB), Y3
	VBROADCASTSS p4Big<>(SB), Y4
	VBROADCASTSS p4PosInf<>(SB), Y5
	VXORPS Y6, Y6, Y6
	XORQ CX, CX

range4:
	VANDPS 0(SP)(CX*1), Y3, Y1
	VCMPPS $2, Y4, Y1, Y1
	VMOVUPS (R10)(CX*1), Y2
	VCMPPS $0x1D, Y6, Y2, Y7
	VANDPS Y7, Y1, Y1
	VCMPPS $0x11, Y5, Y2, Y7
	VANDPS Y7, Y1, Y1
	VMOVMSKPS Y1, BX
	CMPL BX, $0xff
	JNE fail4
	ADDQ $32, CX
	CMPQ CX, $128
	JNE range4

	// Step 0, each group: its cluster's pairs and ids, and a fetch of its
	// boxes.
	P4_SETUP(fail4)

	// Step 1, each group: the bounds of all its pairs, their minimum, and
	// a fetch of the pair with the smallest bound.
	XORQ DI, DI
	XORQ R12, R12

step1:
	GROUP4
	MOVQ S_PTR(SP)(R14*1), SI
	MOVQ S_NP(SP)(R14*1), CX
	ADDQ $15, CX
	SHRQ $4, CX
	P4_BOUNDS_BASE
	VBROADCASTSS p4PosInf<>(SB), Y4
	VMOVDQU p4Lanes<>(SB), Y7
	VPBROADCASTD p4Eight<>(SB), Y6

bounds:
	BOUNDS8
	ADDQ $16, SI
	ADDQ $32, DX
	BOUNDS8
	ADDQ $240, SI
	ADDQ $32, DX
	DECQ CX
	JNE bounds

	// The last block's unused bounds (copies of the last pair's) become
	// +Inf, so that no pair is listed twice: the lanes j >= r = np%16 of
	// the 16 before DX, none where r = 0. No branch: np varies from group
	// to group.
	MOVQ S_NP(SP)(R14*1), CX
	ANDL $15, CX
	MOVL $16, BX
	CMOVLEQ BX, CX
	VMOVD CX, X1
	VPBROADCASTD X1, Y1
	VBROADCASTSS p4PosInf<>(SB), Y0
	VPCMPGTD p4Lanes<>(SB), Y1, Y2 // r > j: kept
	VBLENDVPS Y2, -64(DX), Y0, Y2
	VMOVUPS Y2, -64(DX)
	VPCMPGTD p4Lanes8<>(SB), Y1, Y2
	VBLENDVPS Y2, -32(DX), Y0, Y2
	VMOVUPS Y2, -32(DX)

	// The pair of the smallest bound: that of the first lane that holds
	// it, where a copy of the last pair stands for the last pair.
	HMIN8(Y4)
	VBROADCASTSS p4PosInf<>(SB), Y1
	VUCOMISS X1, X0
	JEQ fail4 // every bound +Inf: so is every score
	VCMPPS $0, Y0, Y4, Y1
	VMOVMSKPS Y1, BX
	BSFL BX, BX
	VMOVDQU Y5, P4_POS(SP)
	P4_ARGMIN(step1)

	// Step 2, each group: U, the best score of the pair with the smallest
	// bound (its scores kept for step 3), and the list of the other pairs
	// whose bound is not above U, fetched with the lines of their ids (one
	// line per pair: the winner's id is then at hand, where fetching it
	// once found took 9 % of the search in waits at its end).
	XORQ DI, DI
	XORQ R12, R12

step2:
	GROUP4
	MOVQ S_PTR(SP)(R14*1), SI
	SCORE4_8
	VMOVAPS Y0, Y4
	VMOVUPS Y0, P4_S(SP)(R12*4)
	ADDQ $8, SI
	SCORE4_8
	VMOVUPS Y0, (P4_S+32)(SP)(R12*4)
	VMINPS Y0, Y4, Y4
	HMIN8(Y4) // U
	VBROADCASTSS p4PosInf<>(SB), Y1
	VUCOMISS X1, X0
	JEQ fail4 // U is +Inf: no score is below it, and every pair would be listed
	P4_BOUNDS_BASE
	P4_LIST_BASE
	MOVQ AX, R8 // the list's start
	MOVQ S_NP(SP)(R14*1), CX
	ADDQ $7, CX
	SHRQ $3, CX
	LEAQ ·pruneLeftPack(SB), BX
	VMOVDQU p4Lanes<>(SB), Y7 // the pairs of the block
	VPBROADCASTD p4Eight<>(SB), Y3

list:
	VCMPPS $0x1D, (DX), Y0, Y1 // U >= bound
	LEFT_PACK(Y1, Y7, Y3, R9)
	ADDQ $32, DX
	DECQ CX
	JNE list
	SUBQ R8, AX
	SHRQ $2, AX
	MOVQ AX, S_N(SP)(R14*1)
	MOVQ AX, CX
	TESTQ CX, CX
	JEQ next2
	MOVQ S_PAIRS(SP)(R14*1), SI
	MOVQ S_IDS(SP)(R14*1), DX

fetch:
	MOVL (R8), BX
	SHLQ $6, BX
	PREFETCHT0 (SI)(BX*1)
	PREFETCHT0 (DX)(BX*1)
	ADDQ $4, R8
	DECQ CX
	JNE fetch

next2:
	P4_NEXT(step2)

	// Step 3, each group: the listed pairs scored (their copies' lanes at
	// +Inf), and the winner's values and id address.
	XORQ DI, DI
	XORQ R12, R12

step3:
	GROUP4

	// The pair of U, scored in step 2: its first run's scores are the
	// best so far, then its second run is kept as any other.
	MOVQ S_PTR(SP)(R14*1), DX
	SUBQ S_PAIRS(SP)(R14*1), DX
	SHRQ $6, DX
	MOVQ DX, BX
	SHLQ $4, BX
	VMOVD BX, X3
	VPBROADCASTD X3, Y3
	VPADDD p4Lanes<>(SB), Y3, Y5
	VMOVUPS P4_S(SP)(R12*4), Y4
	VPXOR Y7, Y7, Y7
	VMOVUPS (P4_S+32)(SP)(R12*4), Y0
	P4_LIST_BASE
	MOVQ AX, R8 // the list
	MOVQ S_N(SP)(R14*1), CX
	JMP second_u

pairs:
	MOVL (R8), DX // the pair
	MOVQ DX, SI
	SHLQ $6, SI
	ADDQ S_PAIRS(SP)(R14*1), SI
	SCORE4_8
	MOVQ DX, BX
	SHLQ $4, BX
	VMOVD BX, X3
	VPBROADCASTD X3, Y3
	VPADDD p4Lanes<>(SB), Y3, Y3
	KEEP4
	ADDQ $8, SI
	SCORE4_8
	ADDQ $4, R8
	DECQ CX

second_u:
	CMPQ DX, S_ODD(SP)(R14*1)
	JNE second
	VBROADCASTSS p4PosInf<>(SB), Y0 // the copies

second:
	ADDQ $8, BX
	VMOVD BX, X3
	VPBROADCASTD X3, Y3
	VPADDD p4Lanes<>(SB), Y3, Y3
	KEEP4
	TESTQ CX, CX
	JNE pairs

	// The smallest score wins if one lane holds it and no other candidate
	// of that lane reached it.
	HMIN8(Y4)
	VCMPPS $0, Y0, Y4, Y1
	VMOVMSKPS Y1, AX
	VMOVMSKPS Y7, BX
	TESTL AX, BX
	JNE fail4
	POPCNTL AX, BX
	CMPL BX, $1
	JNE fail4
	BSFL AX, AX
	VMOVDQU Y5, P4_POS(SP)
	MOVL P4_POS(SP)(AX*4), BX
	P4_WINNER(step3)

	P4_END(fail4)
