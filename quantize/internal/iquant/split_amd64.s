//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// The split searches of iq2_xs, iq1_s and iq1_m score every split (i1, i2)
// of the sorted values into three runs. These kernels compute the scores of
// eight consecutive i2 per vector, for each i1 = 0..n and i2 = i1, i1+8, ...
// while i2 <= n, and store each chunk's results one after the other (the
// layout is described at each Go declaration). Lanes past n hold garbage.
// Prefix sums are read up to index n+7. Products the reference rounds are
// rounded here, fused ones use VFMADD231PS (a correctly rounded float32 FMA).

DATA splitConsts<>+0(SB)/4, $3.0
DATA splitConsts<>+4(SB)/4, $5.0
DATA splitConsts<>+8(SB)/4, $9.0
DATA splitConsts<>+12(SB)/4, $25.0
GLOBL splitConsts<>(SB), RODATA|NOPTR, $16

// func iq2xsSplitSumsAVX2(sumx, sumw *float32, out *float32)
// n = 16; per chunk: sumqx[8], sumq2[8].
TEXT ·iq2xsSplitSumsAVX2(SB), NOSPLIT, $0-24
	MOVQ         sumx+0(FP), SI
	MOVQ         sumw+8(FP), DI
	MOVQ         out+16(FP), R8
	MOVQ         $16, DX
	VBROADCASTSS splitConsts<>+0(SB), Y12
	VBROADCASTSS splitConsts<>+4(SB), Y13
	VBROADCASTSS splitConsts<>+8(SB), Y14
	VBROADCASTSS splitConsts<>+12(SB), Y15
	VBROADCASTSS 64(SI), Y4 // sumx[16]
	VBROADCASTSS 64(DI), Y5 // sumw[16]
	XORQ         BX, BX

xsI1:
	VBROADCASTSS (SI)(BX*4), Y0
	VBROADCASTSS (DI)(BX*4), Y1
	VMOVSS       (SI)(BX*4), X2
	VSUBSS       (SI), X2, X2
	VBROADCASTSS X2, Y2 // sumx[i1] - sumx[0]
	VMOVSS       (DI)(BX*4), X3
	VSUBSS       (DI), X3, X3
	VBROADCASTSS X3, Y3 // sumw[i1] - sumw[0]
	MOVQ         BX, R12

xsChunk:
	VMOVUPS     (SI)(R12*4), Y6
	VSUBPS      Y0, Y6, Y7  // sumx[i2] - sumx[i1]
	VSUBPS      Y6, Y4, Y8  // sumx[16] - sumx[i2]
	VMOVAPS     Y2, Y9
	VFMADD231PS Y12, Y7, Y9
	VFMADD231PS Y13, Y8, Y9
	VMOVUPS     Y9, (R8)
	VMOVUPS     (DI)(R12*4), Y6
	VSUBPS      Y1, Y6, Y7
	VSUBPS      Y6, Y5, Y8
	VMOVAPS     Y3, Y9
	VFMADD231PS Y14, Y7, Y9
	VFMADD231PS Y15, Y8, Y9
	VMOVUPS     Y9, 32(R8)
	ADDQ        $64, R8
	ADDQ        $8, R12
	CMPQ        R12, DX
	JLE         xsChunk
	INCQ        BX
	CMPQ        BX, DX
	JLE         xsI1
	VZEROUPPER
	RET

// IQ1S_SCORE stores the scores of one shift (level values V at V(R9),
// 4(R9), 8(R9)) for the chunk: Y6 = sx[i2], Y7 = sw[i2], Y0/Y1 = sx/sw[i1],
// Y4/Y5 = sx/sw[n], Y2/Y3 = sx/sw[i1] - sx/sw[0].
#define IQ1S_SCORE(V, FUSED) \
	VBROADCASTSS V+0(R9), Y12 \
	VBROADCASTSS V+4(R9), Y13 \
	VBROADCASTSS V+8(R9), Y14 \
	VMULPS       Y12, Y2, Y8 \
	VSUBPS       Y0, Y6, Y9 \
	VMULPS       Y13, Y9, Y9 \
	VADDPS       Y9, Y8, Y8 \
	VSUBPS       Y6, Y4, Y9 \
	VFMADD231PS  Y14, Y9, Y8 \
	VMOVUPS      Y8, (R8) \
	VMULPS       Y12, Y3, Y8 \
	VMULPS       Y12, Y8, Y8 \
	VSUBPS       Y1, Y7, Y9 \
	VMULPS       Y13, Y9, Y9 \
	VMULPS       Y13, Y9, Y9 \
	VADDPS       Y9, Y8, Y8 \
	VSUBPS       Y7, Y5, Y9 \
	VMULPS       Y14, Y9, Y9 \
	FUSED \
	VMOVUPS      Y8, 32(R8) \
	ADDQ         $64, R8

#define IQ1S_LAST_ROUNDED \
	VMULPS Y14, Y9, Y9 \
	VADDPS Y9, Y8, Y8

#define IQ1S_LAST_FUSED \
	VFMADD231PS Y14, Y9, Y8

// func iq1sSplitSumsAVX2(sumx, sumw *float32, n int, vals *[6]float32, out *float32)
// vals: the plus-shift levels, then the minus-shift levels. Per chunk:
// plus sumqx[8], plus sumq2[8], minus sumqx[8], minus sumq2[8].
TEXT ·iq1sSplitSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ         sumx+0(FP), SI
	MOVQ         sumw+8(FP), DI
	MOVQ         n+16(FP), DX
	MOVQ         vals+24(FP), R9
	MOVQ         out+32(FP), R8
	VBROADCASTSS (SI)(DX*4), Y4
	VBROADCASTSS (DI)(DX*4), Y5
	XORQ         BX, BX

sI1:
	VBROADCASTSS (SI)(BX*4), Y0
	VBROADCASTSS (DI)(BX*4), Y1
	VMOVSS       (SI)(BX*4), X2
	VSUBSS       (SI), X2, X2
	VBROADCASTSS X2, Y2
	VMOVSS       (DI)(BX*4), X3
	VSUBSS       (DI), X3, X3
	VBROADCASTSS X3, Y3
	MOVQ         BX, R12

sChunk:
	VMOVUPS (SI)(R12*4), Y6
	VMOVUPS (DI)(R12*4), Y7
	IQ1S_SCORE(0, IQ1S_LAST_ROUNDED)
	IQ1S_SCORE(12, IQ1S_LAST_FUSED)
	ADDQ    $8, R12
	CMPQ    R12, DX
	JLE     sChunk
	INCQ    BX
	CMPQ    BX, DX
	JLE     sI1
	VZEROUPPER
	RET

// The four shift combinations share work: each half's terms depend on that
// half's shift only. IQ1M_FIRST stores the first half's partial sums for the
// shift at U(R9) (three 8-wide level vectors): sumqx at FX(SP), sumq2 at
// FW(SP). Y4 = a1x, Y6 = a1w, Y8/Y9 = b1x/c1x, Y12/Y13 = b1w/c1w; uses Y0, Y1.
#define IQ1M_FIRST(U, FX, FW) \
	VMULPS      (U+0)(R9), Y4, Y0 \
	VMULPS      (U+32)(R9), Y8, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VFMADD231PS (U+64)(R9), Y9, Y0 \
	VMOVUPS     Y0, FX(SP) \
	VMULPS      (U+0)(R9), Y6, Y0 \
	VMULPS      (U+0)(R9), Y0, Y0 \
	VMULPS      (U+32)(R9), Y12, Y1 \
	VMULPS      (U+32)(R9), Y1, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VMULPS      (U+64)(R9), Y13, Y1 \
	VFMADD231PS (U+64)(R9), Y1, Y0 \
	VMOVUPS     Y0, FW(SP)

// IQ1M_SECOND_TERMS computes the second half's rounded terms for the shift
// at V(R9): Y8 = a2x*v0, Y9 = b2x*v1, Y12 = (a2w*v0)*v0, Y13 = (b2w*v1)*v1,
// Y2 = c2w*v2 (Y5 = a2x, Y7 = a2w, Y10 = b2x, Y14 = b2w, Y15 = c2w).
#define IQ1M_SECOND_TERMS(V) \
	VMULPS (V+0)(R9), Y5, Y8 \
	VMULPS (V+32)(R9), Y10, Y9 \
	VMULPS (V+0)(R9), Y7, Y12 \
	VMULPS (V+0)(R9), Y12, Y12 \
	VMULPS (V+32)(R9), Y14, Y13 \
	VMULPS (V+32)(R9), Y13, Y13 \
	VMULPS (V+64)(R9), Y15, Y2

// IQ1M_COMBINE stores combination K from the first half's partial sums at
// FX(SP), FW(SP) and the second half's terms (IQ1M_SECOND_TERMS for the
// shift at V(R9); Y11 = c2x); uses Y0, Y1.
#define IQ1M_COMBINE(V, FX, FW, K) \
	VADDPS      FX(SP), Y8, Y0 \
	VADDPS      Y9, Y0, Y0 \
	VFMADD231PS (V+64)(R9), Y11, Y0 \
	VMOVUPS     Y0, (64*K)(R8) \
	VADDPS      FW(SP), Y12, Y1 \
	VADDPS      Y13, Y1, Y1 \
	VFMADD231PS (V+64)(R9), Y2, Y1 \
	VMOVUPS     Y1, (64*K+32)(R8)

// IQ1M_BC loads the run sums b = s[i2] - s[i1] into B and c = s[16] - s[i2]
// into C for the prefix sums at P, with s[i1] and s[16] broadcast at
// I1(SP) and N(SP).
#define IQ1M_BC(P, I1, N, B, C) \
	VMOVUPS (P)(R12*4), B \
	VSUBPS  I1(SP), B, B \
	VMOVUPS N(SP), C \
	VSUBPS  (P)(R12*4), C, C

// IQ1M_I1 broadcasts s[i1] of the prefix sums at P to OFF(SP) and
// s[i1] - s[0] into A.
#define IQ1M_I1(P, OFF, A) \
	VBROADCASTSS (P)(BX*4), Y0 \
	VMOVUPS      Y0, OFF(SP) \
	VMOVSS       (P)(BX*4), X0 \
	VSUBSS       (P), X0, X0 \
	VBROADCASTSS X0, A

// func iq1mSplitSumsAVX2(sx1, sx2, sw1, sw2 *float32, vals *[6][8]float32, out *float32)
// n = 16; vals: the plus-shift levels, then the minus-shift levels, each
// broadcast to 8 lanes. Per chunk, for the combinations ++, +-, -+, --:
// sumqx[8], sumq2[8].
TEXT ·iq1mSplitSumsAVX2(SB), NOSPLIT, $384-48
	MOVQ         sx1+0(FP), SI
	MOVQ         sx2+8(FP), DI
	MOVQ         sw1+16(FP), R10
	MOVQ         sw2+24(FP), R11
	MOVQ         vals+32(FP), R9
	MOVQ         out+40(FP), R8
	VBROADCASTSS 64(SI), Y0
	VMOVUPS      Y0, 128(SP)
	VBROADCASTSS 64(DI), Y0
	VMOVUPS      Y0, 160(SP)
	VBROADCASTSS 64(R10), Y0
	VMOVUPS      Y0, 192(SP)
	VBROADCASTSS 64(R11), Y0
	VMOVUPS      Y0, 224(SP)
	XORQ         BX, BX

mI1:
	IQ1M_I1(SI, 0, Y4)
	IQ1M_I1(DI, 32, Y5)
	IQ1M_I1(R10, 64, Y6)
	IQ1M_I1(R11, 96, Y7)
	MOVQ         BX, R12

mChunk:
	IQ1M_BC(SI, 0, 128, Y8, Y9)
	IQ1M_BC(DI, 32, 160, Y10, Y11)
	IQ1M_BC(R10, 64, 192, Y12, Y13)
	IQ1M_BC(R11, 96, 224, Y14, Y15)
	IQ1M_FIRST(0, 256, 288)
	IQ1M_FIRST(96, 320, 352)
	IQ1M_SECOND_TERMS(0)
	IQ1M_COMBINE(0, 256, 288, 0)
	IQ1M_COMBINE(0, 320, 352, 2)
	IQ1M_SECOND_TERMS(96)
	IQ1M_COMBINE(96, 256, 288, 1)
	IQ1M_COMBINE(96, 320, 352, 3)
	ADDQ $256, R8
	ADDQ $8, R12
	CMPQ R12, $16
	JLE  mChunk
	INCQ BX
	CMPQ BX, $16
	JLE  mI1
	VZEROUPPER
	RET

DATA lowMasks<>+0(SB)/8, $0x7f3f1f0f07030100
DATA lowMasks<>+8(SB)/8, $0x00000000000000ff
GLOBL lowMasks<>(SB), RODATA|NOPTR, $16

DATA lanesAbove<>+0(SB)/8, $0x0080c0e0f0f8fcfe
GLOBL lanesAbove<>(SB), RODATA|NOPTR, $8

// func splitScanAVX2(out *float32, n, slots int, st *splitState)
// The selection of splitScan over the chunks of a split-score layout with
// slots pairs (sumqx[8], sumq2[8]) per chunk. The test of the reference,
// sumq2 > 0 && sumqx*sumqx > best*sumq2, runs on all lanes and slots of a
// chunk at once against the best at the chunk's start (a mask, bit
// 8*slot + lane). Then only the positions that passed are visited in the
// reference's order (lane, then slot) and tested again against the current
// best: while the best does not decrease, a position that failed cannot
// pass later (best*sumq2 only grows, rounding being monotonic). If an
// update ever lowers the best, every later position of the chunk is
// visited instead.
TEXT ·splitScanAVX2(SB), NOSPLIT, $0-32
	MOVQ   out+0(FP), R8
	MOVQ   n+8(FP), DX
	MOVQ   slots+16(FP), R9
	MOVQ   st+24(FP), R10
	VMOVSS splitState_best(R10), X15
	VMOVSS splitState_scale(R10), X14
	VXORPS Y13, Y13, Y13
	XORQ   BX, BX

scI1:
	MOVQ BX, CX

scChunk:
	MOVQ         DX, AX
	SUBQ         CX, AX
	INCQ         AX
	CMPQ         AX, $8
	JLE          scMask
	MOVQ         $8, AX

scMask:
	LEAQ         lowMasks<>(SB), R10
	MOVBLZX      (R10)(AX*1), SI // valid lanes
	VBROADCASTSS X15, Y15
	MOVQ         R9, AX
	DECQ         AX
	SHLQ         $6, AX
	LEAQ         (R8)(AX*1), R10
	XORL         DI, DI
	MOVQ         R9, AX

scTest:
	SHLL      $8, DI
	VMOVUPS   (R10), Y0
	VMOVUPS   32(R10), Y1
	VCMPPS    $0x1e, Y13, Y1, Y2 // sumq2 > 0
	VMULPS    Y0, Y0, Y3
	VMULPS    Y15, Y1, Y4
	VCMPPS    $0x1e, Y4, Y3, Y5  // sumqx*sumqx > best*sumq2
	VANDPS    Y5, Y2, Y2
	VMOVMSKPS Y2, R11
	ORL       R11, DI
	SUBQ      $64, R10
	DECQ      AX
	JNZ       scTest
	IMUL3L    $0x01010101, SI, R11
	ANDL      R11, DI
	JZ        scNext

	// Lanes with any slot set.
	MOVL DI, R12
	MOVL DI, R11
	SHRL $16, R11
	ORL  R11, R12
	MOVL R12, R11
	SHRL $8, R11
	ORL  R11, R12
	ANDL $0xff, R12

scLane:
	BSFL R12, R13
	JZ   scNext
	BTRL R13, R12
	MOVL R13, AX // bit 8*slot + lane

scSlot:
	BTL      AX, DI
	JCC      scSkip
	MOVL     AX, R11
	SHRL     $3, R11
	SHLL     $6, R11
	LEAQ     (R8)(R11*1), R10
	VMOVSS   (R10)(R13*4), X0
	VMOVSS   32(R10)(R13*4), X1
	VUCOMISS X13, X1
	JLS      scSkip
	VMULSS   X0, X0, X3
	VMULSS   X15, X1, X4
	VUCOMISS X4, X3
	JLS      scSkip
	VMOVAPS  X15, X5
	VDIVSS   X1, X0, X14 // scale = sumqx/sumq2
	VMULSS   X0, X14, X15 // best = scale*sumqx
	MOVQ     st+24(FP), R10
	MOVL     BX, splitState_i1(R10)
	LEAL     (CX)(R13*1), R11
	MOVL     R11, splitState_i2(R10)
	MOVL     AX, R11
	SHRL     $3, R11
	MOVL     R11, splitState_slot(R10)
	VUCOMISS X5, X15
	JCC      scSkip // best did not decrease (ordered, >=)

	// The best went down: visit every later position of the chunk.
	MOVL    $0xffffffff, DI
	LEAQ    lanesAbove<>(SB), R10
	MOVBLZX (R10)(R13*1), R11
	ANDL    SI, R11
	ORL     R11, R12

scSkip:
	ADDL $8, AX
	MOVL AX, R11
	SHRL $3, R11
	CMPL R11, R9
	JLT  scSlot
	JMP  scLane

scNext:
	MOVQ R9, AX
	SHLQ $6, AX
	ADDQ AX, R8
	ADDQ $8, CX
	CMPQ CX, DX
	JLE  scChunk
	INCQ BX
	CMPQ BX, DX
	JLE  scI1

	MOVQ   st+24(FP), R10
	VMOVSS X15, splitState_best(R10)
	VMOVSS X14, splitState_scale(R10)
	VZEROUPPER
	RET
