//go:build amd64 && !purego

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

// IQ1M_COMBO stores the scores of one shift combination: U and V are the
// offsets at R9 of the first and second half's level vectors (three 8-wide
// vectors each). Y4-Y7 = a1x, a2x, a1w, a2w; Y8-Y15 = b1x, c1x, b2x, c2x,
// b1w, c1w, b2w, c2w; uses Y0, Y1.
#define IQ1M_COMBO(U, V) \
	VMULPS      (U+0)(R9), Y4, Y0 \
	VMULPS      (U+32)(R9), Y8, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VFMADD231PS (U+64)(R9), Y9, Y0 \
	VMULPS      (V+0)(R9), Y5, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VMULPS      (V+32)(R9), Y10, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VFMADD231PS (V+64)(R9), Y11, Y0 \
	VMOVUPS     Y0, (R8) \
	VMULPS      (U+0)(R9), Y6, Y0 \
	VMULPS      (U+0)(R9), Y0, Y0 \
	VMULPS      (U+32)(R9), Y12, Y1 \
	VMULPS      (U+32)(R9), Y1, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VMULPS      (U+64)(R9), Y13, Y1 \
	VFMADD231PS (U+64)(R9), Y1, Y0 \
	VMULPS      (V+0)(R9), Y7, Y1 \
	VMULPS      (V+0)(R9), Y1, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VMULPS      (V+32)(R9), Y14, Y1 \
	VMULPS      (V+32)(R9), Y1, Y1 \
	VADDPS      Y1, Y0, Y0 \
	VMULPS      (V+64)(R9), Y15, Y1 \
	VFMADD231PS (V+64)(R9), Y1, Y0 \
	VMOVUPS     Y0, 32(R8) \
	ADDQ        $64, R8

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
TEXT ·iq1mSplitSumsAVX2(SB), NOSPLIT, $256-48
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
	IQ1M_COMBO(0, 0)
	IQ1M_COMBO(0, 96)
	IQ1M_COMBO(96, 0)
	IQ1M_COMBO(96, 96)
	ADDQ $8, R12
	CMPQ R12, $16
	JLE  mChunk
	INCQ BX
	CMPQ BX, $16
	JLE  mI1
	VZEROUPPER
	RET
