//go:build amd64 && !purego

#include "textflag.h"
#include "search_amd64.h"
#include "go_asm.h"

// The pruned block search (see prune.go): per group, the bounds of all the
// cluster's runs (eight runs per vector), the best score U of the run with
// the smallest bound, two stages of listed runs scored, and the reference's
// scan of the whole cluster where the smallest score is not reached exactly
// once. Scores are computed as in search_amd64.s, from int8 codewords
// (exact in float32).
//
// The four groups of a block go through each step in turn (bounds for all,
// then U for all, ...): each step waits on runs fetched from memory by the
// step before, so the four groups' cache misses overlap rather than stall
// one group after the other.

DATA prunePosInf<>+0(SB)/4, $0x7f800000
GLOBL prunePosInf<>(SB), RODATA|NOPTR, $4
DATA pruneOne<>+0(SB)/4, $0x3f800000
GLOBL pruneOne<>(SB), RODATA|NOPTR, $4
DATA pruneAbs<>+0(SB)/4, $0x7fffffff
GLOBL pruneAbs<>(SB), RODATA|NOPTR, $4
// Scaled inputs beyond 2^60 in magnitude leave the pruned search: below
// that, no difference, square or weighted square is NaN, so every score
// and bound is in [0, +Inf] and the bounds argument holds.
DATA pruneBig<>+0(SB)/4, $0x5d800000
GLOBL pruneBig<>(SB), RODATA|NOPTR, $4
DATA pruneFifth<>+0(SB)/4, $0x3e4ccccd // 0.2
GLOBL pruneFifth<>(SB), RODATA|NOPTR, $4

// The positions (8*run) of the eight runs of a block, the step from one
// block to the next, and the lanes of a run.
DATA prunePos<>+0(SB)/4, $0
DATA prunePos<>+4(SB)/4, $8
DATA prunePos<>+8(SB)/4, $16
DATA prunePos<>+12(SB)/4, $24
DATA prunePos<>+16(SB)/4, $32
DATA prunePos<>+20(SB)/4, $40
DATA prunePos<>+24(SB)/4, $48
DATA prunePos<>+28(SB)/4, $56
GLOBL prunePos<>(SB), RODATA|NOPTR, $32
DATA pruneBlockPos<>+0(SB)/4, $64
GLOBL pruneBlockPos<>(SB), RODATA|NOPTR, $4
DATA pruneEights<>+0(SB)/8, $0x0000000800000008
DATA pruneEights<>+8(SB)/8, $0x0000000800000008
DATA pruneEights<>+16(SB)/8, $0x0000000800000008
DATA pruneEights<>+24(SB)/8, $0x0000000800000008
GLOBL pruneEights<>(SB), RODATA|NOPTR, $32
DATA pruneLanes<>+0(SB)/4, $0
DATA pruneLanes<>+4(SB)/4, $1
DATA pruneLanes<>+8(SB)/4, $2
DATA pruneLanes<>+12(SB)/4, $3
DATA pruneLanes<>+16(SB)/4, $4
DATA pruneLanes<>+20(SB)/4, $5
DATA pruneLanes<>+24(SB)/4, $6
DATA pruneLanes<>+28(SB)/4, $7
GLOBL pruneLanes<>(SB), RODATA|NOPTR, $32

// HMIN leaves the smallest of the eight lanes of Y4 in every lane of Y0
// (Y1 is scratch). No lane is NaN here.
#define HMIN \
	VPERM2F128 $1, Y4, Y4, Y0 \
	VMINPS Y0, Y4, Y0 \
	VPERMILPS $0x4E, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VPERMILPS $0xB1, Y0, Y1 \
	VMINPS Y1, Y0, Y0


// The frame of searchPruned8AVX2. Per group g (R12 = 256*g):
//   0+R12      the group's weights, broadcast (8 x 32 bytes)
//   1536+R12   the group's record: first block (8 bytes), blocks (8),
//              runs base (8), the first run's address (8), list length (8);
//              at 64 lbmin, at 96 T, at 128..223 the lanes' state (Y4, Y5,
//              Y7) between the stages, each broadcast or 32 bytes
//   2560+16*R12  the runs' bounds (pruneMaxRuns float32)
//   18944+18*R12 the listed runs' positions (pruneMaxRuns+8 uint32)
// and once: 1024 vx (32 float32), 1152 the clusters (4 int32), 1168 the
// winners' values (4 x 8 int32), 1296 the winners' positions in ids, or -1
// (4 int32).
#define P8_W 0
#define P8_VX 1024
#define P8_C 1152
#define P8_Q 1168
#define P8_POS 1296
#define P8_R 1536
#define R_FIRST (P8_R+0)
#define R_BLOCKS (P8_R+8)
#define R_RUNS (P8_R+16)
#define R_RUN0 (P8_R+24)
#define R_N (P8_R+32)
#define R_LMIN (P8_R+64)
#define R_T (P8_R+96)
#define R_Y4 (P8_R+128)
#define R_Y5 (P8_R+160)
#define R_Y7 (P8_R+192)
#define P8_LB 2560
#define P8_LIST 18944

// One coordinate's term of a run's bound: the distance from x (xr) to the
// box [lo, hi] of eight runs (boxes at SI, coordinate k), squared, times
// the weight w_k at wk. dst and tmp are scratch. The distance is c-x for c,
// x clamped to the box: where x < lo, lo-x rounds to at most q-x for every
// q >= lo; where x > hi, x-hi rounds to at most x-q in magnitude (and
// negation is exact); inside, 0. So the term is at most each candidate's
// term. The clamp takes one instruction fewer than max(lo-x, x-hi, 0).
#define BOXTERM(k, xr, wk, dst, tmp) \
	VCVTPH2PS (32*k)(SI), dst \
	VMAXPS xr, dst, dst \
	VCVTPH2PS (32*k+16)(SI), tmp \
	VMINPS tmp, dst, dst \
	VSUBPS xr, dst, dst \
	VMULPS dst, dst, dst \
	VMULPS wk, dst, dst

// QK loads coordinate k of the eight candidates of the run at SI into dst
// as float32.
#define QK(k, dst) \
	VPMOVSXBD (8*k)(SI), dst \
	VCVTDQ2PS dst, dst

// SCORE8 is the score of the run at SI in Y0, as in searchBlock8AVX2
// (Y6 = 1.0, vx broadcast in Y8..Y15, the group's weights at R12, Y1..Y3
// scratch).
#define SCORE8 \
	QK(0, Y0) \
	VFMSUB132PS Y6, Y8, Y0 \
	VMULPS Y0, Y0, Y0 \
	VMULPS (P8_W+0)(SP)(R12*1), Y0, Y0 \
	QK(4, Y1) \
	VFMSUB132PS Y6, Y12, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+128)(SP)(R12*1), Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	QK(2, Y1) \
	VFMSUB132PS Y6, Y10, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+64)(SP)(R12*1), Y1, Y1 \
	QK(6, Y2) \
	VFMSUB132PS Y6, Y14, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+192)(SP)(R12*1), Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	QK(1, Y1) \
	VSUBPS Y9, Y1, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+32)(SP)(R12*1), Y1, Y1 \
	QK(5, Y2) \
	VSUBPS Y13, Y2, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+160)(SP)(R12*1), Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	QK(3, Y2) \
	VSUBPS Y11, Y2, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+96)(SP)(R12*1), Y2, Y2 \
	QK(7, Y3) \
	VSUBPS Y15, Y3, Y3 \
	VMULPS Y3, Y3, Y3 \
	VMULPS (P8_W+224)(SP)(R12*1), Y3, Y3 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	VADDPS Y1, Y0, Y0

// KEEP updates, per lane, the best score Y4, the position Y5 of the
// candidate that reached it and whether another candidate reached the
// same score (Y7, all ones) with the scores Y0 of candidates at positions
// Y3 (Y1, Y2 scratch). A smaller score clears the flag.
#define KEEP \
	VCMPPS $0x11, Y4, Y0, Y1 \
	VCMPPS $0, Y4, Y0, Y2 \
	VBLENDVPS Y1, Y3, Y5, Y5 \
	VANDNPS Y7, Y1, Y7 \
	VORPS Y2, Y7, Y7 \
	VMINPS Y0, Y4, Y4

// SCAN(label) scores the CX > 0 runs listed at DX (runs at R8), updating
// the lanes' state (KEEP). AX, SI scratch.
#define SCAN(label) \
label: \
	MOVL (DX), SI \
	LEAQ (R8)(SI*8), SI \
	SCORE8 \
	VPBROADCASTD (DX), Y3 \
	VPADDD pruneLanes<>(SB), Y3, Y3 \
	KEEP \
	ADDQ $4, DX \
	DECQ CX \
	JNE label

// FETCH(label) prefetches the CX > 0 runs listed at DX (runs at R8)
// before they are scored: they are scattered over megabytes. AX, BX and SI
// are scratch.
#define FETCH(label) \
	MOVQ CX, AX \
	MOVQ DX, SI \
label: \
	MOVL (SI), BX \
	PREFETCHT0 (R8)(BX*8) \
	ADDQ $4, SI \
	DECQ AX \
	JNE label

// GROUPVX loads the group's vx (32*group in SI) broadcast into Y8..Y15.
#define GROUPVX \
	VBROADCASTSS (P8_VX+0)(SP)(SI*1), Y8 \
	VBROADCASTSS (P8_VX+4)(SP)(SI*1), Y9 \
	VBROADCASTSS (P8_VX+8)(SP)(SI*1), Y10 \
	VBROADCASTSS (P8_VX+12)(SP)(SI*1), Y11 \
	VBROADCASTSS (P8_VX+16)(SP)(SI*1), Y12 \
	VBROADCASTSS (P8_VX+20)(SP)(SI*1), Y13 \
	VBROADCASTSS (P8_VX+24)(SP)(SI*1), Y14 \
	VBROADCASTSS (P8_VX+28)(SP)(SI*1), Y15

// GROUP sets R12 = 256*DI and loads the group's vx into Y8..Y15.
#define GROUP \
	MOVQ DI, R12 \
	SHLQ $8, R12 \
	MOVQ DI, SI \
	SHLQ $5, SI \
	GROUPVX

// LISTBASE sets AX to the group's list.
#define LISTBASE \
	IMUL3Q $18, R12, AX \
	LEAQ (P8_LIST)(SP)(AX*1), AX

// LBBASE sets DX to the group's bounds.
#define LBBASE \
	MOVQ R12, DX \
	SHLQ $4, DX \
	LEAQ (P8_LB)(SP)(DX*1), DX

// searchPruned8AVX2 is searchBlock8AVX2 with the pruned search of each
// group's cluster (runs, boxes, ids and spans of a pruneLayout; lanes and
// lspans are the codebook's flatLanes and spans, for the reference's scan).
// It returns 1, without finishing, if an input is out of the pruned
// search's range, a cluster has no pruned runs or a search finds no
// codeword.
//
// func searchPruned8AVX2(runs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int
TEXT ·searchPruned8AVX2(SB), 0, $37376-112
	MOVQ spans+24(FP), R9
	MOVQ mid+48(FP), AX
	VMOVUPS 0(AX), Y6
	MOVQ x+64(FP), AX
	MOVQ w+72(FP), R10
	MOVQ idx+80(FP), R11
	VBROADCASTSS id+56(FP), Y0
	VBROADCASTSS pruneAbs<>(SB), Y3
	VBROADCASTSS pruneBig<>(SB), Y4
	VBROADCASTSS prunePosInf<>(SB), Y5
	VXORPS Y7, Y7, Y7

	// vx = id*x, the clusters (vx > mid), and the range check: |vx| <= 2^60
	// and 0 <= w < +Inf (all false for NaN).
#define CHECKED_CLUSTER8(g) \
	CLUSTER8(g, P8_VX, P8_C) \
	VANDPS Y3, Y1, Y1 \
	VCMPPS $2, Y4, Y1, Y1 \
	VMOVUPS (32*g)(R10), Y2 \
	VCMPPS $0x1D, Y7, Y2, Y8 \
	VANDPS Y8, Y1, Y1 \
	VCMPPS $0x11, Y5, Y2, Y8 \
	VANDPS Y8, Y1, Y1 \
	VMOVMSKPS Y1, BX \
	CMPL BX, $0xff \
	JNE fail

	CHECKED_CLUSTER8(0)
	CHECKED_CLUSTER8(1)
	CHECKED_CLUSTER8(2)
	CHECKED_CLUSTER8(3)
#undef CHECKED_CLUSTER8

	// Step 1, each group: the bounds of all runs (blocks of eight), their
	// minimum lbmin, and a fetch of the run with the smallest bound.
	XORQ DI, DI

bounds1:
	GROUP
	MOVL (P8_C)(SP)(DI*4), AX
	MOVL 0(R9)(AX*8), R13 // first block
	MOVL 4(R9)(AX*8), CX  // runs
	TESTL CX, CX
	JEQ fail
	MOVQ R13, (R_FIRST)(SP)(R12*1)
	VBROADCASTSS 0(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+0)(SP)(R12*1)
	VBROADCASTSS 4(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+32)(SP)(R12*1)
	VBROADCASTSS 8(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+64)(SP)(R12*1)
	VBROADCASTSS 12(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+96)(SP)(R12*1)
	VBROADCASTSS 16(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+128)(SP)(R12*1)
	VBROADCASTSS 20(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+160)(SP)(R12*1)
	VBROADCASTSS 24(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+192)(SP)(R12*1)
	VBROADCASTSS 28(R10)(SI*1), Y0
	VMOVUPS Y0, (P8_W+224)(SP)(R12*1)
	ADDL $7, CX
	SHRL $3, CX // blocks
	MOVQ CX, (R_BLOCKS)(SP)(R12*1)
	MOVQ R13, SI
	SHLQ $8, SI // pruneBoxBytes per block
	ADDQ boxes+8(FP), SI
	LBBASE
	VBROADCASTSS prunePosInf<>(SB), Y4
	VMOVDQU pruneLanes<>(SB), Y6
	VMOVDQU Y6, Y5 // where every bound is +Inf, run 0

	// Each lane keeps its smallest bound (Y4) and that run (Y5, the first
	// of equal ones; the runs of this block in Y6): the argmin without a
	// second pass and its unpredictable exit.
bounds:
	BOXTERM(0, Y8, (P8_W+0)(SP)(R12*1), Y0, Y1)
	BOXTERM(4, Y12, (P8_W+128)(SP)(R12*1), Y1, Y2)
	VADDPS Y1, Y0, Y0
	BOXTERM(2, Y10, (P8_W+64)(SP)(R12*1), Y1, Y2)
	BOXTERM(6, Y14, (P8_W+192)(SP)(R12*1), Y2, Y3)
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	BOXTERM(1, Y9, (P8_W+32)(SP)(R12*1), Y1, Y2)
	BOXTERM(5, Y13, (P8_W+160)(SP)(R12*1), Y2, Y3)
	VADDPS Y2, Y1, Y1
	BOXTERM(3, Y11, (P8_W+96)(SP)(R12*1), Y2, Y3)
	BOXTERM(7, Y15, (P8_W+224)(SP)(R12*1), Y3, Y7)
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DX)
	VCMPPS $0x11, Y4, Y0, Y1
	VBLENDVPS Y1, Y6, Y5, Y5
	VMINPS Y0, Y4, Y4
	VPADDD pruneEights<>(SB), Y6, Y6
	ADDQ $const_pruneBoxBytes, SI
	ADDQ $32, DX
	DECL CX
	JNE bounds

	// The run of the smallest bound: that of the first lane that holds
	// it (a copy of a cluster's last run is in a higher lane than it).
	HMIN
	VMOVUPS Y0, (R_LMIN)(SP)(R12*1)
	LBBASE
	VCMPPS $0, Y0, Y4, Y1
	VMOVMSKPS Y1, BX
	BSFL BX, BX
	VMOVD BX, X1
	VPERMD Y5, Y1, Y1
	VMOVD X1, AX
	// That run is scored in step 2, and step 3 starts from its scores: its
	// bound becomes +Inf, so that neither list holds it.
	MOVL $0x7f800000, (DX)(AX*4)
	MOVQ R13, R8
	SHLQ $9, R8 // 8 runs of pruneRunBytes per block
	ADDQ runs+0(FP), R8
	MOVQ R8, (R_RUNS)(SP)(R12*1)
	SHLQ $6, AX
	ADDQ R8, AX
	MOVQ AX, (R_RUN0)(SP)(R12*1)
	PREFETCHT0 (AX)
	INCQ DI
	CMPQ DI, $4
	JNE bounds1

	// Step 2, each group: U, the best score of the run with the smallest
	// bound, and T = lbmin + (U-lbmin)/5; list the runs whose bound is at
	// most T, without branches (pruneLeftPack moves the positions of a
	// block's listed runs to the front), and fetch them. The scores of
	// U's run are the lanes' first state (Y4, Y5), kept for step 3.
	VBROADCASTSS pruneOne<>(SB), Y6
	XORQ DI, DI

stage2:
	GROUP
	MOVQ (R_RUN0)(SP)(R12*1), SI
	SCORE8
	VMOVAPS Y0, Y4
	VMOVUPS Y0, (R_Y4)(SP)(R12*1)
	MOVQ SI, AX
	SUBQ (R_RUNS)(SP)(R12*1), AX
	SHRQ $3, AX // the run's first position
	VMOVD AX, X1
	VPBROADCASTD X1, Y1
	VPADDD pruneLanes<>(SB), Y1, Y1
	VMOVDQU Y1, (R_Y5)(SP)(R12*1)
	HMIN
	VMOVUPS (R_LMIN)(SP)(R12*1), Y7
	VSUBPS Y7, Y0, Y1
	VBROADCASTSS pruneFifth<>(SB), Y2
	VMULPS Y2, Y1, Y1
	VADDPS Y7, Y1, Y0
	VMOVUPS Y0, (R_T)(SP)(R12*1)
	LBBASE
	LISTBASE
	LEAQ ·pruneLeftPack(SB), BX
	VMOVDQU prunePos<>(SB), Y7
	VPBROADCASTD pruneBlockPos<>(SB), Y3
	MOVQ (R_BLOCKS)(SP)(R12*1), CX

listA:
	VCMPPS $0x1D, (DX), Y0, Y1 // T >= bound
	LEFT_PACK(Y1, Y7, Y3, R14)
	ADDQ $32, DX
	DECQ CX
	JNE listA

	MOVQ AX, CX
	LISTBASE
	SUBQ AX, CX
	SHRQ $2, CX
	MOVQ CX, (R_N)(SP)(R12*1)
	TESTQ CX, CX
	JEQ next2
	MOVQ AX, DX
	MOVQ (R_RUNS)(SP)(R12*1), R8
	FETCH(fetchA)

next2:
	INCQ DI
	CMPQ DI, $4
	JNE stage2

	// Step 3, each group: score the listed runs, each lane keeping its
	// smallest score, that candidate's position and a tie flag (KEEP),
	// from U's run; then list the runs whose bound is above T and not
	// above the smallest score so far, fetch them, and keep the lanes'
	// state.
	XORQ DI, DI

stage3:
	GROUP
	MOVQ (R_RUNS)(SP)(R12*1), R8
	VMOVUPS (R_Y4)(SP)(R12*1), Y4
	VMOVDQU (R_Y5)(SP)(R12*1), Y5
	VXORPS Y7, Y7, Y7
	MOVQ (R_N)(SP)(R12*1), CX
	TESTQ CX, CX
	JEQ listB0
	LISTBASE
	MOVQ AX, DX
	SCAN(scanA)

listB0:
	HMIN
	LBBASE
	LISTBASE
	LEAQ ·pruneLeftPack(SB), BX
	VMOVDQU prunePos<>(SB), Y6
	VPBROADCASTD pruneBlockPos<>(SB), Y3
	MOVQ (R_BLOCKS)(SP)(R12*1), CX

listB:
	VMOVUPS (DX), Y1
	VCMPPS $0x1E, (R_T)(SP)(R12*1), Y1, Y2 // bound > T
	VCMPPS $0x12, Y0, Y1, Y1 // bound <= best
	VANDPS Y2, Y1, Y1
	LEFT_PACK(Y1, Y6, Y3, R14)
	ADDQ $32, DX
	DECQ CX
	JNE listB

	VBROADCASTSS pruneOne<>(SB), Y6
	VMOVUPS Y4, (R_Y4)(SP)(R12*1)
	VMOVUPS Y5, (R_Y5)(SP)(R12*1)
	VMOVUPS Y7, (R_Y7)(SP)(R12*1)
	MOVQ AX, CX
	LISTBASE
	SUBQ AX, CX
	SHRQ $2, CX
	MOVQ CX, (R_N)(SP)(R12*1)
	TESTQ CX, CX
	JEQ next3
	MOVQ AX, DX
	FETCH(fetchB)

next3:
	INCQ DI
	CMPQ DI, $4
	JNE stage3

	// Step 4, each group: score the second list, and take the winner if
	// exactly one candidate has the smallest score.
	XORQ DI, DI

stage4:
	GROUP
	MOVQ (R_RUNS)(SP)(R12*1), R8
	VMOVUPS (R_Y4)(SP)(R12*1), Y4
	VMOVUPS (R_Y5)(SP)(R12*1), Y5
	VMOVUPS (R_Y7)(SP)(R12*1), Y7
	MOVQ (R_N)(SP)(R12*1), CX
	TESTQ CX, CX
	JEQ winner
	LISTBASE
	MOVQ AX, DX
	SCAN(scanB)

winner:
	HMIN
	VBROADCASTSS prunePosInf<>(SB), Y1
	VUCOMISS X1, X0
	JCC fail
	VCMPPS $0, Y0, Y4, Y1
	VMOVMSKPS Y1, AX
	VMOVMSKPS Y7, BX
	TESTL AX, BX
	JNE tie
	POPCNTL AX, BX
	CMPL BX, $1
	JNE tie
	BSFL AX, AX
	VMOVD AX, X2
	VPERMD Y5, Y2, Y2
	VMOVD X2, BX
	// The winner's values, for the sums, from its run (in the caches):
	// byte 8*k+lane of run position/8.
	MOVQ BX, AX
	SHRQ $3, AX
	SHLQ $6, AX
	ADDQ R8, AX
	MOVQ BX, CX
	ANDQ $7, CX
	ADDQ CX, AX
	MOVQ DI, CX
	SHLQ $5, CX
	MOVBLSX 0(AX), SI
	MOVL SI, (P8_Q+0)(SP)(CX*1)
	MOVBLSX 8(AX), SI
	MOVL SI, (P8_Q+4)(SP)(CX*1)
	MOVBLSX 16(AX), SI
	MOVL SI, (P8_Q+8)(SP)(CX*1)
	MOVBLSX 24(AX), SI
	MOVL SI, (P8_Q+12)(SP)(CX*1)
	MOVBLSX 32(AX), SI
	MOVL SI, (P8_Q+16)(SP)(CX*1)
	MOVBLSX 40(AX), SI
	MOVL SI, (P8_Q+20)(SP)(CX*1)
	MOVBLSX 48(AX), SI
	MOVL SI, (P8_Q+24)(SP)(CX*1)
	MOVBLSX 56(AX), SI
	MOVL SI, (P8_Q+28)(SP)(CX*1)
	// Its codeword is looked up after the last group (see ids below);
	// its line is fetched now, so that the miss overlaps the next groups.
	MOVQ (R_FIRST)(SP)(R12*1), AX
	SHLQ $6, AX // 64 candidates per block
	ADDQ AX, BX
	MOVL BX, (P8_POS)(SP)(DI*4)
	MOVQ ids+16(FP), AX
	PREFETCHT0 (AX)(BX*4)
	JMP next4

tie:
	// The reference's scan of the whole cluster (searchBlock8AVX2's).
	MOVL (P8_C)(SP)(DI*4), AX
	MOVQ lspans+40(FP), BX
	MOVL 0(BX)(AX*8), SI
	MOVL 4(BX)(AX*8), CX
	ADDQ lanes+32(FP), SI
	VBROADCASTSS prunePosInf<>(SB), Y7
	VMOVAPS Y7, Y4
	VPCMPEQD Y5, Y5, Y5

full:
	VCVTPH2PS 0(SI), Y0
	VFMSUB132PS Y6, Y8, Y0
	VMULPS Y0, Y0, Y0
	VMULPS (P8_W+0)(SP)(R12*1), Y0, Y0
	VCVTPH2PS 64(SI), Y1
	VFMSUB132PS Y6, Y12, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+128)(SP)(R12*1), Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 32(SI), Y1
	VFMSUB132PS Y6, Y10, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+64)(SP)(R12*1), Y1, Y1
	VCVTPH2PS 96(SI), Y2
	VFMSUB132PS Y6, Y14, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+192)(SP)(R12*1), Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+32)(SP)(R12*1), Y1, Y1
	VCVTPH2PS 80(SI), Y2
	VSUBPS Y13, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+160)(SP)(R12*1), Y2, Y2
	VADDPS Y2, Y1, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y11, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+96)(SP)(R12*1), Y2, Y2
	VCVTPH2PS 112(SI), Y3
	VSUBPS Y15, Y3, Y3
	VMULPS Y3, Y3, Y3
	VMULPS (P8_W+224)(SP)(R12*1), Y3, Y3
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCMPPS $0x11, Y4, Y0, Y1
	VBLENDVPS Y1, 128(SI), Y5, Y5
	VMINPS Y0, Y4, Y4
	ADDQ $160, SI
	DECL CX
	JNE full

	REDUCE(fail)
	MOVL BX, 0(R11)(DI*4)
	MOVL $-1, (P8_POS)(SP)(DI*4)
	SHLQ $5, BX
	ADDQ values+88(FP), BX
	VCVTTPS2DQ (BX), Y0 // integers: exact
	MOVQ DI, CX
	SHLQ $5, CX
	VMOVDQU Y0, (P8_Q)(SP)(CX*1)

next4:
	INCQ DI
	CMPQ DI, $4
	JNE stage4

	MOVQ sums+96(FP), CX
	TESTQ CX, CX
	JEQ ids0
	MOVQ x+64(FP), DX
	SUMSQ(P8_Q)

ids0:
	// The codewords of the pruned winners: four independent loads of
	// lines fetched when each winner was found, after the sums so that the
	// last group's has had time to arrive.
	MOVQ ids+16(FP), DX
	MOVL (P8_POS+0)(SP), AX
	TESTL AX, AX
	JS ids1
	MOVL (DX)(AX*4), AX
	MOVL AX, 0(R11)

ids1:
	MOVL (P8_POS+4)(SP), AX
	TESTL AX, AX
	JS ids2
	MOVL (DX)(AX*4), AX
	MOVL AX, 4(R11)

ids2:
	MOVL (P8_POS+8)(SP), AX
	TESTL AX, AX
	JS ids3
	MOVL (DX)(AX*4), AX
	MOVL AX, 8(R11)

ids3:
	MOVL (P8_POS+12)(SP), AX
	TESTL AX, AX
	JS ok
	MOVL (DX)(AX*4), AX
	MOVL AX, 12(R11)

ok:
	MOVQ $0, ret+104(FP)
	VZEROUPPER
	RET

fail:
	MOVQ $1, ret+104(FP)
	VZEROUPPER
	RET
