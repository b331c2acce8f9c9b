//go:build amd64 && !purego

#include "textflag.h"
#include "go_asm.h"

// The pruned block search (see prune.go): per group, the bounds of all the
// cluster's runs (eight runs per vector), the best score U of the run with
// the smallest bound, the list of the runs whose bound is not above U, a
// scan of those, and the reference's scan of the whole cluster where the
// smallest score is not reached exactly once. Scores are computed as in
// search_amd64.s, from int8 codewords (exact in float32).

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

// REDUCE is search_amd64.s's: the winner of the reference's lanes (best in
// Y4, indices in Y5, +Inf in Y7) in BX, or a jump to fail.
#define REDUCE(fail) \
	VCMPPS $3, Y4, Y4, Y0 \
	VBLENDVPS Y0, Y7, Y4, Y4 \
	VPERM2F128 $1, Y4, Y4, Y0 \
	VMINPS Y0, Y4, Y0 \
	VPERMILPS $0x4E, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VPERMILPS $0xB1, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VCMPPS $0, Y0, Y4, Y1 \
	VCMPPS $0x11, Y7, Y4, Y2 \
	VANDPS Y2, Y1, Y1 \
	VMOVMSKPS Y1, AX \
	TESTL AX, AX \
	JEQ fail \
	BSFL AX, AX \
	VMOVD AX, X2 \
	VPERMD Y5, Y2, Y2 \
	VMOVD X2, BX

// The frame of searchPruned8AVX2:
//   0     the group's weights, broadcast (8 x 32 bytes)
//   256   vx (32 float32)
//   384   the groups' clusters (4 int32)
//   416   T, the first stage's limit, broadcast (32 bytes)
//   448   the runs' bounds (pruneMaxRuns float32)
//   4544  the listed runs' positions (pruneMaxRuns+8 uint32)
//   8672  the winners' values (4 x 8 int32)
//   8800  the winners' positions in ids, or -1 (4 int32)
#define P8_W 0
#define P8_VX 256
#define P8_C 384
#define P8_T 416
#define P8_LB 448
#define P8_LIST (448+4*const_pruneMaxRuns)
#define P8_Q (P8_LIST+4*const_pruneMaxRuns+32)
#define P8_POS (P8_Q+128)

// One coordinate's term of a run's bound: the distance from x (xr) to the
// box [lo, hi] of eight runs (boxes at SI, coordinate k), clamped at zero
// (Y6 = 0), squared, times the weight w_k at wk. dst and tmp are scratch.
// Where x < lo, lo-x rounds to at most q-x for every q >= lo; where x > hi,
// x-hi to at most x-q: the term is at most the candidates' terms.
#define BOXTERM(k, xr, wk, dst, tmp) \
	VCVTPH2PS (32*k)(SI), dst \
	VSUBPS xr, dst, dst \
	VCVTPH2PS (32*k+16)(SI), tmp \
	VSUBPS tmp, xr, tmp \
	VMAXPS tmp, dst, dst \
	VMAXPS Y6, dst, dst \
	VMULPS dst, dst, dst \
	VMULPS wk, dst, dst

// QK loads coordinate k of the eight candidates of the run at SI into dst
// as float32.
#define QK(k, dst) \
	VPMOVSXBD (8*k)(SI), dst \
	VCVTDQ2PS dst, dst

// SCORE8 is the score of the run at SI in Y0, as in searchBlock8AVX2
// (Y6 = 1.0, vx broadcast in Y8..Y15, Y1..Y3 scratch).
#define SCORE8 \
	QK(0, Y0) \
	VFMSUB132PS Y6, Y8, Y0 \
	VMULPS Y0, Y0, Y0 \
	VMULPS (P8_W+0)(SP), Y0, Y0 \
	QK(4, Y1) \
	VFMSUB132PS Y6, Y12, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+128)(SP), Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	QK(2, Y1) \
	VFMSUB132PS Y6, Y10, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+64)(SP), Y1, Y1 \
	QK(6, Y2) \
	VFMSUB132PS Y6, Y14, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+192)(SP), Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	QK(1, Y1) \
	VSUBPS Y9, Y1, Y1 \
	VMULPS Y1, Y1, Y1 \
	VMULPS (P8_W+32)(SP), Y1, Y1 \
	QK(5, Y2) \
	VSUBPS Y13, Y2, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+160)(SP), Y2, Y2 \
	VADDPS Y2, Y1, Y1 \
	QK(3, Y2) \
	VSUBPS Y11, Y2, Y2 \
	VMULPS Y2, Y2, Y2 \
	VMULPS (P8_W+96)(SP), Y2, Y2 \
	QK(7, Y3) \
	VSUBPS Y15, Y3, Y3 \
	VMULPS Y3, Y3, Y3 \
	VMULPS (P8_W+224)(SP), Y3, Y3 \
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

// FETCH(label) prefetches the CX > 0 runs listed at DX (runs at R8)
// before they are scored: they are scattered over megabytes, and the loads
// of a scoring loop reach only a few runs ahead, so this overlaps many more
// cache misses. AX, BX and SI are scratch.
#define FETCH(label) \
	MOVQ CX, AX \
	MOVQ DX, SI \
label: \
	MOVL (SI), BX \
	PREFETCHT0 (R8)(BX*8) \
	ADDQ $4, SI \
	DECQ AX \
	JNE label

// searchPruned8AVX2 is searchBlock8AVX2 with the pruned search of each
// group's cluster (runs, boxes, ids and spans of a pruneLayout; lanes and
// lspans are the codebook's flatLanes and spans, for the reference's scan).
// It returns 1, without finishing, if an input is out of the pruned
// search's range, a cluster has no pruned runs or a search finds no
// codeword.
//
// func searchPruned8AVX2(runs, boxes *byte, ids, spans *uint32, lanes *byte, lspans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int
TEXT ·searchPruned8AVX2(SB), 0, $8816-112
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
#define CLUSTER8(g) \
	VMULPS (32*g)(AX), Y0, Y1 \
	VMOVUPS Y1, (P8_VX+32*g)(SP) \
	VCMPPS $0x1E, Y6, Y1, Y2 \
	VMOVMSKPS Y2, BX \
	MOVL BX, (P8_C+4*g)(SP) \
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

	CLUSTER8(0)
	CLUSTER8(1)
	CLUSTER8(2)
	CLUSTER8(3)
#undef CLUSTER8

	XORQ DI, DI // group

group:
	MOVQ DI, R12
	SHLQ $5, R12 // 32*group (R12 is scratch after the broadcasts)
	MOVL (P8_C)(SP)(DI*4), AX
	MOVL 0(R9)(AX*8), R13 // first block
	MOVL 4(R9)(AX*8), CX  // runs
	TESTL CX, CX
	JEQ fail
	VBROADCASTSS (P8_VX+0)(SP)(R12*1), Y8
	VBROADCASTSS (P8_VX+4)(SP)(R12*1), Y9
	VBROADCASTSS (P8_VX+8)(SP)(R12*1), Y10
	VBROADCASTSS (P8_VX+12)(SP)(R12*1), Y11
	VBROADCASTSS (P8_VX+16)(SP)(R12*1), Y12
	VBROADCASTSS (P8_VX+20)(SP)(R12*1), Y13
	VBROADCASTSS (P8_VX+24)(SP)(R12*1), Y14
	VBROADCASTSS (P8_VX+28)(SP)(R12*1), Y15
	VBROADCASTSS 0(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+0)(SP)
	VBROADCASTSS 4(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+32)(SP)
	VBROADCASTSS 8(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+64)(SP)
	VBROADCASTSS 12(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+96)(SP)
	VBROADCASTSS 16(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+128)(SP)
	VBROADCASTSS 20(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+160)(SP)
	VBROADCASTSS 24(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+192)(SP)
	VBROADCASTSS 28(R10)(R12*1), Y0
	VMOVUPS Y0, (P8_W+224)(SP)

	// Pass 1: the bounds of all runs (blocks of eight), and their minimum.
	ADDL $7, CX
	SHRL $3, CX // blocks
	MOVQ CX, R14
	MOVQ R13, SI
	SHLQ $8, SI // pruneBoxBytes per block
	ADDQ boxes+8(FP), SI
	LEAQ (P8_LB)(SP), DX
	VXORPS Y6, Y6, Y6
	VBROADCASTSS prunePosInf<>(SB), Y4

bounds:
	BOXTERM(0, Y8, (P8_W+0)(SP), Y0, Y1)
	BOXTERM(4, Y12, (P8_W+128)(SP), Y1, Y2)
	VADDPS Y1, Y0, Y0
	BOXTERM(2, Y10, (P8_W+64)(SP), Y1, Y2)
	BOXTERM(6, Y14, (P8_W+192)(SP), Y2, Y3)
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	BOXTERM(1, Y9, (P8_W+32)(SP), Y1, Y2)
	BOXTERM(5, Y13, (P8_W+160)(SP), Y2, Y3)
	VADDPS Y2, Y1, Y1
	BOXTERM(3, Y11, (P8_W+96)(SP), Y2, Y3)
	BOXTERM(7, Y15, (P8_W+224)(SP), Y3, Y5)
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DX)
	VMINPS Y0, Y4, Y4
	ADDQ $const_pruneBoxBytes, SI
	ADDQ $32, DX
	DECL CX
	JNE bounds

	// U: the best score of the run with the smallest bound (lbmin, kept
	// in Y7).
	HMIN
	VMOVAPS Y0, Y7
	LEAQ (P8_LB)(SP), DX
	XORQ AX, AX

argmin:
	VCMPPS $0, (DX)(AX*4), Y0, Y1
	VMOVMSKPS Y1, BX
	ADDQ $8, AX
	TESTL BX, BX
	JEQ argmin
	BSFL BX, BX
	LEAQ -8(AX)(BX*1), AX
	MOVQ R13, R8
	SHLQ $9, R8 // 8 runs of pruneRunBytes per block
	ADDQ runs+0(FP), R8
	SHLQ $6, AX
	LEAQ (R8)(AX*1), SI
	VBROADCASTSS pruneOne<>(SB), Y6
	SCORE8
	VMOVAPS Y0, Y4
	HMIN

	// The runs are scored in two stages: first those whose bound is at
	// most T = lbmin + (U-lbmin)/5, which finds a score near the smallest,
	// then those whose bound is above T and at most the best score of the
	// first stage. Any T gives the same result; this one scores about as
	// few runs as scoring in order of bound would.
	VSUBPS Y7, Y0, Y1
	VBROADCASTSS pruneFifth<>(SB), Y2
	VMULPS Y2, Y1, Y1
	VADDPS Y7, Y1, Y0
	VMOVUPS Y0, (P8_T)(SP)

	// List the positions of the runs whose bound is not above T (Y0),
	// eight runs at a time without branches: pruneLeftPack moves the
	// positions of a block's listed runs to the front. The list has the
	// run of U, unless T is NaN (lbmin is +Inf: no score is below +Inf).
	LEAQ (P8_LB)(SP), DX
	LEAQ (P8_LIST)(SP), AX
	LEAQ ·pruneLeftPack(SB), BX
	VMOVDQU prunePos<>(SB), Y7
	VPBROADCASTD pruneBlockPos<>(SB), Y3
	MOVQ R14, CX

listA:
	VCMPPS $0x1D, (DX), Y0, Y1 // T >= bound
	VMOVMSKPS Y1, SI
	POPCNTL SI, R12
	SHLQ $5, SI
	VMOVDQU (BX)(SI*1), Y2
	VPERMD Y7, Y2, Y2
	VMOVDQU Y2, (AX)
	LEAQ (AX)(R12*4), AX
	VPADDD Y3, Y7, Y7
	ADDQ $32, DX
	DECQ CX
	JNE listA

	LEAQ (P8_LIST)(SP), DX
	SUBQ DX, AX
	SHRQ $2, AX
	MOVQ AX, CX
	VBROADCASTSS prunePosInf<>(SB), Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JEQ stageB
	FETCH(fetchA)

scanA:
	MOVL (DX), SI
	LEAQ (R8)(SI*8), SI
	SCORE8
	VPBROADCASTD (DX), Y3
	VPADDD pruneLanes<>(SB), Y3, Y3
	KEEP
	ADDQ $4, DX
	DECQ CX
	JNE scanA

stageB:
	// List the runs whose bound is above T and not above the best score
	// so far (Y0); Y4, Y5, Y7 hold the lanes' state meanwhile.
	HMIN
	LEAQ (P8_LB)(SP), DX
	LEAQ (P8_LIST)(SP), AX
	LEAQ ·pruneLeftPack(SB), BX
	VMOVDQU prunePos<>(SB), Y6
	VPBROADCASTD pruneBlockPos<>(SB), Y3
	MOVQ R14, CX

listB:
	VMOVUPS (DX), Y1
	VCMPPS $0x1E, (P8_T)(SP), Y1, Y2 // bound > T
	VCMPPS $0x12, Y0, Y1, Y1 // bound <= best
	VANDPS Y2, Y1, Y1
	VMOVMSKPS Y1, SI
	POPCNTL SI, R12
	SHLQ $5, SI
	VMOVDQU (BX)(SI*1), Y2
	VPERMD Y6, Y2, Y2
	VMOVDQU Y2, (AX)
	LEAQ (AX)(R12*4), AX
	VPADDD Y3, Y6, Y6
	ADDQ $32, DX
	DECQ CX
	JNE listB

	VBROADCASTSS pruneOne<>(SB), Y6
	LEAQ (P8_LIST)(SP), DX
	SUBQ DX, AX
	SHRQ $2, AX
	MOVQ AX, CX
	TESTQ CX, CX
	JEQ winner
	FETCH(fetchB)

scanB:
	MOVL (DX), SI
	LEAQ (R8)(SI*8), SI
	SCORE8
	VPBROADCASTD (DX), Y3
	VPADDD pruneLanes<>(SB), Y3, Y3
	KEEP
	ADDQ $4, DX
	DECQ CX
	JNE scanB

winner:
	// The winner, if exactly one candidate has the smallest score.
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
	// Its codeword is looked up after the last group (see ids below).
	SHLQ $6, R13 // 64 candidates per block
	ADDQ R13, BX
	MOVL BX, (P8_POS)(SP)(DI*4)
	JMP next

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
	VMULPS (P8_W+0)(SP), Y0, Y0
	VCVTPH2PS 64(SI), Y1
	VFMSUB132PS Y6, Y12, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+128)(SP), Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 32(SI), Y1
	VFMSUB132PS Y6, Y10, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+64)(SP), Y1, Y1
	VCVTPH2PS 96(SI), Y2
	VFMSUB132PS Y6, Y14, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+192)(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS (P8_W+32)(SP), Y1, Y1
	VCVTPH2PS 80(SI), Y2
	VSUBPS Y13, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+160)(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y11, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS (P8_W+96)(SP), Y2, Y2
	VCVTPH2PS 112(SI), Y3
	VSUBPS Y15, Y3, Y3
	VMULPS Y3, Y3, Y3
	VMULPS (P8_W+224)(SP), Y3, Y3
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

next:
	INCQ DI
	CMPQ DI, $4
	JNE group

	// The codewords of the pruned winners: four independent loads, whose
	// cache misses overlap (one per group would each stall its group).
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
	JS ids4
	MOVL (DX)(AX*4), AX
	MOVL AX, 12(R11)

ids4:

	MOVQ sums+96(FP), CX
	TESTQ CX, CX
	JEQ ok
	MOVQ x+64(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

#define SUMS8(j) \
	VCVTDQ2PS (P8_Q+32*j)(SP), Y2 \
	VMULPS (32*j)(R10), Y2, Y3 \
	VFMADD231PS (32*j)(DX), Y3, Y0 \
	VFMADD231PS Y2, Y3, Y1

	SUMS8(0)
	SUMS8(1)
	SUMS8(2)
	SUMS8(3)
#undef SUMS8
	VMOVUPS Y0, 0(CX)
	VMOVUPS Y1, 32(CX)

ok:
	MOVQ $0, ret+104(FP)
	VZEROUPPER
	RET

fail:
	MOVQ $1, ret+104(FP)
	VZEROUPPER
	RET
