//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// CMP2(K) counts threshold K for the plus (Y3) and minus (Y4) points: the
// compare mask (-1 where x >= t) is subtracted from the counts Y5 and Y6.
#define CMP2(K) \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y3, Y7 \
	VPSUBD Y7, Y5, Y5 \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y4, Y8 \
	VPSUBD Y8, Y6, Y6

#define CMP7 CMP2(0) CMP2(1) CMP2(2) CMP2(3) CMP2(4) CMP2(5) CMP2(6)

// Grids of 16 and 32 points find the same counts by bisection: the
// thresholds are non-decreasing (unused ones +Inf), so x >= t[k] holds for
// k below the count and fails from it on, and a bisection asking the same
// comparisons finds the same count (a NaN fails every one, 0 in both). The
// count so far I doubles at each step and takes the comparison's bit; the
// step's probe is row OFF of trialTables.bis at I.

// BIS is one bisection step for the values in P with the count so far I.
#define BIS(P, I, OFF) \
	VPERMPS (trialTables_bis+OFF)(R8), I, Y7 \
	VCMPPS  $13, Y7, P, Y8 \
	VPADDD  I, I, I \
	VPSUBD  Y8, I, I

// BISLAST is the last step of a grid of 32: its probe t[2I] is in one of
// two rows of eight, chosen by bit 3 of I. T is a temporary.
#define BISLAST(P, I, T) \
	VPERMPS   (trialTables_bis+96)(R8), I, Y7 \
	VPERMPS   (trialTables_bis+128)(R8), I, Y8 \
	VPSLLD    $28, I, T \
	VBLENDVPS T, Y8, Y7, Y7 \
	VCMPPS    $13, Y7, P, Y8 \
	VPADDD    I, I, I \
	VPSUBD    Y8, I, I

// BISFIRST starts the counts of the plus (Y3) and minus (Y4) points in Y5
// and Y6 with threshold K: 1 where x >= t[K], else 0.
#define BISFIRST(K) \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y3, Y5 \
	VPSRLD $31, Y5, Y5 \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y4, Y6 \
	VPSRLD $31, Y6, Y6

#define BIS31 \
	BISFIRST(15) \
	BIS(Y3, Y5, 0) BIS(Y4, Y6, 0) \
	BIS(Y3, Y5, 32) BIS(Y4, Y6, 32) \
	BIS(Y3, Y5, 64) BIS(Y4, Y6, 64) \
	BISLAST(Y3, Y5, Y13) BISLAST(Y4, Y6, Y14)

#define BIS15 \
	BISFIRST(7) \
	BIS(Y3, Y5, 32) BIS(Y4, Y6, 32) \
	BIS(Y3, Y5, 64) BIS(Y4, Y6, 64) \
	BIS(Y3, Y5, 96) BIS(Y4, Y6, 96)

// LOOK8/16/32 put in Q the grid values of the indices in IDX. Clobber Y7,
// Y8 (and LOOK32 Y3, Y4).
#define LOOK8(IDX, Q) \
	VPERMPS trialTables_vals(R8), IDX, Q

#define LOOK16(IDX, Q) \
	VPERMPS trialTables_vals(R8), IDX, Q \
	VPERMPS (trialTables_vals+32)(R8), IDX, Y7 \
	VPSLLD  $28, IDX, Y8 \
	VBLENDVPS Y8, Y7, Q, Q

#define LOOK32(IDX, Q) \
	VPSLLD  $28, IDX, Y8 \
	VPERMPS trialTables_vals(R8), IDX, Q \
	VPERMPS (trialTables_vals+32)(R8), IDX, Y7 \
	VBLENDVPS Y8, Y7, Q, Q \
	VPERMPS (trialTables_vals+64)(R8), IDX, Y3 \
	VPERMPS (trialTables_vals+96)(R8), IDX, Y4 \
	VBLENDVPS Y8, Y4, Y3, Y3 \
	VPSLLD  $27, IDX, Y8 \
	VBLENDVPS Y8, Y3, Q, Q

// TRIALS is the whole function for COUNT thresholds and lookup LOOK: per
// weight, id*x and -id*x in every lane, their grid points by counting, and
// the four sums with the hardware fused multiply-add, in weight order.
#define TRIALS(COUNT, LOOK) \
	MOVQ  tt+0(FP), R8 \
	MOVQ  x+8(FP), SI \
	MOVQ  w+16(FP), DI \
	MOVQ  n+24(FP), CX \
	MOVQ  ids+32(FP), AX \
	VMOVUPS (AX), Y0 \
	MOVL  $0x80000000, AX \
	VMOVD AX, X15 \
	VBROADCASTSS X15, Y15 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
loop: \
	VBROADCASTSS (SI), Y1 \
	VBROADCASTSS (DI), Y2 \
	VMULPS Y1, Y0, Y3 \
	VXORPS Y15, Y3, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	COUNT \
	LOOK(Y5, Y13) \
	VMULPS Y13, Y2, Y7 \
	VFMADD231PS Y1, Y7, Y9 \
	VFMADD231PS Y13, Y7, Y10 \
	LOOK(Y6, Y14) \
	VMULPS Y14, Y2, Y7 \
	VFMADD231PS Y1, Y7, Y11 \
	VFMADD231PS Y14, Y7, Y12 \
	ADDQ $4, SI \
	ADDQ $4, DI \
	DECQ CX \
	JNE  loop \
	MOVQ out+40(FP), AX \
	VMOVUPS Y9, 0(AX) \
	VMOVUPS Y10, 32(AX) \
	VMOVUPS Y11, 64(AX) \
	VMOVUPS Y12, 96(AX) \
	VZEROUPPER \
	RET

// func nlTrials8AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials8AVX2(SB), NOSPLIT, $0-48
	TRIALS(CMP7, LOOK8)

// func nlTrials16AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials16AVX2(SB), NOSPLIT, $0-48
	TRIALS(BIS15, LOOK16)

// func nlTrials32AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials32AVX2(SB), NOSPLIT, $0-48
	TRIALS(BIS31, LOOK32)

// The AVX-512 trials take the same bisection (see BIS) in sixteen lanes,
// the 32 thresholds and the 32 grid values in two 512-bit registers each,
// read with one two-table permute per probe; the count grows by the step's
// power of two where the comparison holds.

// BSTEP is one bisection step for the values in P: the probe is IDX + OFF,
// and IDX grows by INC where P >= t[probe]. T is a temporary, K a mask.
#define BSTEP(P, IDX, OFF, INC, T, K) \
	VPADDD    OFF, IDX, T \
	VPERMI2PS Z17, Z16, T \
	VCMPPS    $13, T, P, K \
	VPADDD    INC, IDX, K, IDX

// BLAST is the last step: the probe is IDX itself.
#define BLAST(P, IDX, T, K) \
	VMOVDQA32 IDX, T \
	VPERMI2PS Z17, Z16, T \
	VCMPPS    $13, T, P, K \
	VPADDD    Z26, IDX, K, IDX

// BSEARCH32 and BSEARCH16 leave in IDX the count for grids of 32 or 16
// points (31 or 15 thresholds; the first probe's threshold is in Z21).
#define BSEARCH32(P, IDX, T, K) \
	VCMPPS    $13, Z21, P, K \
	VPXORD    IDX, IDX, IDX \
	VMOVDQA32 Z22, K, IDX \
	BSTEP(P, IDX, Z27, Z23, T, K) \
	BSTEP(P, IDX, Z28, Z24, T, K) \
	BSTEP(P, IDX, Z26, Z25, T, K) \
	BLAST(P, IDX, T, K)

#define BSEARCH16(P, IDX, T, K) \
	VCMPPS    $13, Z21, P, K \
	VPXORD    IDX, IDX, IDX \
	VMOVDQA32 Z23, K, IDX \
	BSTEP(P, IDX, Z28, Z24, T, K) \
	BSTEP(P, IDX, Z26, Z25, T, K) \
	BLAST(P, IDX, T, K)

DATA trialConsts<>+0(SB)/4, $16
DATA trialConsts<>+4(SB)/4, $8
DATA trialConsts<>+8(SB)/4, $4
DATA trialConsts<>+12(SB)/4, $2
DATA trialConsts<>+16(SB)/4, $1
DATA trialConsts<>+20(SB)/4, $7
DATA trialConsts<>+24(SB)/4, $3
DATA trialConsts<>+28(SB)/4, $0x80000000
GLOBL trialConsts<>(SB), RODATA|NOPTR, $32

// TRIALS512 is the whole of nlTrialsPair512 for a grid of SEARCH's size,
// whose first probe is threshold FIRST: per weight, id*x and -id*x in
// sixteen lanes (ids0 in the low eight, ids1 in the high eight), their grid
// points, and the four sums with the hardware fused multiply-add, lane for
// lane the operations of nlTrials*AVX2.
#define TRIALS512(SEARCH, FIRST) \
	MOVQ            tt+0(FP), R8 \
	MOVQ            x+8(FP), SI \
	MOVQ            w+16(FP), DI \
	MOVQ            n+24(FP), CX \
	MOVQ            ids0+32(FP), AX \
	MOVQ            ids1+40(FP), BX \
	VMOVUPS         (AX), Y0 \
	VINSERTF32X8    $1, (BX), Z0, Z0 \
	VMOVUPS         trialTables_th32(R8), Z16 \
	VMOVUPS         (trialTables_th32+64)(R8), Z17 \
	VMOVUPS         trialTables_vals(R8), Z18 \
	VMOVUPS         (trialTables_vals+64)(R8), Z19 \
	VBROADCASTSS    (trialTables_th32+4*FIRST)(R8), Z21 \
	VPBROADCASTD    trialConsts<>+0(SB), Z22 \
	VPBROADCASTD    trialConsts<>+4(SB), Z23 \
	VPBROADCASTD    trialConsts<>+8(SB), Z24 \
	VPBROADCASTD    trialConsts<>+12(SB), Z25 \
	VPBROADCASTD    trialConsts<>+16(SB), Z26 \
	VPBROADCASTD    trialConsts<>+20(SB), Z27 \
	VPBROADCASTD    trialConsts<>+24(SB), Z28 \
	VPBROADCASTD    trialConsts<>+28(SB), Z15 \
	VPXORD          Z9, Z9, Z9 \
	VPXORD          Z10, Z10, Z10 \
	VPXORD          Z11, Z11, Z11 \
	VPXORD          Z12, Z12, Z12 \
loop: \
	VBROADCASTSS    (SI), Z1 \
	VBROADCASTSS    (DI), Z2 \
	VMULPS          Z1, Z0, Z3 \
	VPXORD          Z15, Z3, Z4 \
	SEARCH(Z3, Z5, Z8, K1) \
	SEARCH(Z4, Z6, Z13, K2) \
	VPERMI2PS       Z19, Z18, Z5 \
	VPERMI2PS       Z19, Z18, Z6 \
	VMULPS          Z5, Z2, Z7 \
	VFMADD231PS     Z1, Z7, Z9 \
	VFMADD231PS     Z5, Z7, Z10 \
	VMULPS          Z6, Z2, Z7 \
	VFMADD231PS     Z1, Z7, Z11 \
	VFMADD231PS     Z6, Z7, Z12 \
	ADDQ            $4, SI \
	ADDQ            $4, DI \
	DECQ            CX \
	JNE             loop \
	MOVQ            out0+48(FP), AX \
	MOVQ            out1+56(FP), BX \
	VMOVUPS         Y9, 0(AX) \
	VMOVUPS         Y10, 32(AX) \
	VMOVUPS         Y11, 64(AX) \
	VMOVUPS         Y12, 96(AX) \
	VEXTRACTF32X8   $1, Z9, 0(BX) \
	VEXTRACTF32X8   $1, Z10, 32(BX) \
	VEXTRACTF32X8   $1, Z11, 64(BX) \
	VEXTRACTF32X8   $1, Z12, 96(BX) \
	VZEROUPPER \
	RET

// func nlTrialsPair512x32(tt *trialTables, x, w *float32, n int, ids0, ids1 *[8]float32, out0, out1 *[4][8]float32)
TEXT ·nlTrialsPair512x32(SB), NOSPLIT, $0-64
	TRIALS512(BSEARCH32, 15)

// func nlTrialsPair512x16(tt *trialTables, x, w *float32, n int, ids0, ids1 *[8]float32, out0, out1 *[4][8]float32)
TEXT ·nlTrialsPair512x16(SB), NOSPLIT, $0-64
	TRIALS512(BSEARCH16, 7)
