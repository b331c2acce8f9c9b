//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// One 8-wide chunk of the fit: Y0-Y3 hold the four grid points (scaled),
// Y4-Y7 the unscaled values; the nearest value of each x (first one on
// ties, as the reference's compare-and-blend does) is selected into Y13 and
// the sums Σ(w·q)·x, Σ(w·q)·q accumulate, fused, into ACCX and ACCQ.
#define IQ2KS_CHUNK(off, ACCX, ACCQ) \
	VMOVUPS     off(SI), Y10        \
	VSUBPS      Y0, Y10, Y12        \
	VMULPS      Y12, Y12, Y12       \
	VMOVAPS     Y4, Y13             \
	VSUBPS      Y1, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y14, Y12, Y12  \
	VBLENDVPS   Y15, Y5, Y13, Y13   \
	VSUBPS      Y2, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y14, Y12, Y12  \
	VBLENDVPS   Y15, Y6, Y13, Y13   \
	VSUBPS      Y3, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y7, Y13, Y13   \
	VMOVUPS     off(DI), Y11        \
	VMULPS      Y13, Y11, Y11       \
	VFMADD231PS Y10, Y11, ACCX      \
	VFMADD231PS Y13, Y11, ACCQ

// HSUM8 stores to off(DX) the sum of the 8 lanes of ACC in hsum8's order:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
#define HSUM8(ACC, ACCX, off) \
	VEXTRACTF128 $1, ACC, X12 \
	VADDPS       X12, ACCX, X12 \
	VMOVHLPS     X12, X12, X13 \
	VADDPS       X13, X12, X12 \
	VMOVSHDUP    X12, X13 \
	VADDSS       X13, X12, X12 \
	VMOVSS       X12, off(DX)

// IQ2KS_SUMS is the fit for one sign of the scale (grid points in Y0-Y7, as
// IQ2KS_CHUNK): the 32 values in four chunks, the two sums reduced by HSUM8
// to OX(DX) and OQ(DX).
#define IQ2KS_SUMS(OX, OQ) \
	VXORPS       Y8, Y8, Y8; \
	VXORPS       Y9, Y9, Y9; \
	IQ2KS_CHUNK(0, Y8, Y9); \
	IQ2KS_CHUNK(32, Y8, Y9); \
	IQ2KS_CHUNK(64, Y8, Y9); \
	IQ2KS_CHUNK(96, Y8, Y9); \
	HSUM8(Y8, X8, OX); \
	HSUM8(Y9, X9, OQ)

// IQ2KS_FIT is one fit of the 32 values at SI with weights at DI for the
// parameters at AX (see iq2ksFitAVX2): the four lane-reduced sums go to
// 0..12(DX).
#define IQ2KS_FIT \
	VBROADCASTSS 0(AX), Y0; \
	VBROADCASTSS 4(AX), Y1; \
	VBROADCASTSS 8(AX), Y2; \
	VBROADCASTSS 12(AX), Y3; \
	VBROADCASTSS 16(AX), Y4; \
	VBROADCASTSS 20(AX), Y5; \
	VBROADCASTSS 24(AX), Y6; \
	VBROADCASTSS 28(AX), Y7; \
	IQ2KS_SUMS(0, 4); \
	VBROADCASTSS 32(AX), Y0; \
	VBROADCASTSS 36(AX), Y1; \
	VBROADCASTSS 40(AX), Y2; \
	VBROADCASTSS 44(AX), Y3; \
	IQ2KS_SUMS(8, 12)

// func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32)
// params: d·v0..d·v3, v0..v3, -d·v0..-d·v3. out: Σwq·x and Σwq·q for +d,
// then for -d, each summed over 8 lanes and the lanes reduced by HSUM8.
TEXT ·iq2ksFitAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         params+16(FP), AX
	MOVQ         out+24(FP), DX
	IQ2KS_FIT
	VZEROUPPER
	RET

// func iq2ksFitsAVX2(x, w *float32, params *[12]float32, n int, out *[4]float32)
// iq2ksFitAVX2 for n > 0 consecutive parameter sets and results, one call
// for all fits of a block.
TEXT ·iq2ksFitsAVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         params+16(FP), AX
	MOVQ         n+24(FP), CX
	MOVQ         out+32(FP), DX

fits:
	IQ2KS_FIT
	ADDQ         $48, AX
	ADDQ         $16, DX
	DECQ         CX
	JNE          fits
	VZEROUPPER
	RET


// ERR_CHUNK is compute_1block_iq2ks_rmse on one 8-wide chunk: Y0-Y3 hold
// the four scaled grid points, Y5-Y7 the indices 1..3; the first nearest
// index (strictly smaller squared distance wins, as the reference's
// compare-and-blend) goes to off*4(BX) as int32, and (w*diff)*diff, with
// diff = -d*q + x fused, accumulates into Y8.
#define ERR_CHUNK(off) \
	VMOVUPS     off(SI), Y10        \
	VSUBPS      Y0, Y10, Y12        \
	VMULPS      Y12, Y12, Y12       \
	VPXOR       Y13, Y13, Y13       \
	VSUBPS      Y1, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y14, Y12, Y12  \
	VBLENDVPS   Y15, Y5, Y13, Y13   \
	VSUBPS      Y2, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y14, Y12, Y12  \
	VBLENDVPS   Y15, Y6, Y13, Y13   \
	VSUBPS      Y3, Y10, Y14        \
	VMULPS      Y14, Y14, Y14       \
	VCMPPS      $1, Y12, Y14, Y15   \
	VBLENDVPS   Y15, Y7, Y13, Y13   \
	VMOVDQU     Y13, off(BX)        \
	VPERMPS     Y4, Y13, Y14        \
	VFMADD231PS Y14, Y9, Y10        \
	VMULPS      off(DI), Y10, Y12   \
	VFMADD231PS Y10, Y12, Y8

// func iq2ksErrorAVX2(x, w *float32, params *[8]float32, negD float32, idx *[32]int32) float32
// params: d·v0..d·v3, v0..v3. The result is the lane sums reduced by HSUM8.
TEXT ·iq2ksErrorAVX2(SB), NOSPLIT, $0-44
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         params+16(FP), AX
	MOVQ         idx+32(FP), BX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	VBROADCASTF128 16(AX), Y4 // v0..v3, twice: VPERMPS looks up lanes 0..3
	MOVL         $1, DX
	VMOVD        DX, X5
	VPBROADCASTD X5, Y5
	MOVL         $2, DX
	VMOVD        DX, X6
	VPBROADCASTD X6, Y6
	MOVL         $3, DX
	VMOVD        DX, X7
	VPBROADCASTD X7, Y7
	VBROADCASTSS negD+24(FP), Y9
	VXORPS       Y8, Y8, Y8
	ERR_CHUNK(0)
	ERR_CHUNK(32)
	ERR_CHUNK(64)
	ERR_CHUNK(96)
	LEAQ         ret+40(FP), DX
	HSUM8(Y8, X8, 0)
	VZEROUPPER
	RET

// COUNT_CHUNK is one 8-wide chunk of a fit with the nearest point found by
// counting: OP is VSUBPS for scale d (x - d*v) or VADDPS for -d
// (x + d*v, the same operation as x - (-d*v)); Y0-Y3 hold d*v0..d*v3. The
// index is minus the number of strict falls e1<e0, e2<e1, e3<e2 of the
// squared distances (the compare masks are -1; the squares are finite and
// >= +0 here, so comparing their bits as int32 orders them as floats and
// keeps the float multiply pipes free), which VPERMPS maps through
// the grid's perm at R8 (v0 at lane 0, v1..v3 at lanes 7, 6, 5) to the grid
// value q; then Σ(w·q)·x and Σ(w·q)·q accumulate, fused, as IQ2KS_CHUNK.
#define COUNT_CHUNK(OP, off, ACCX, ACCQ) \
	VMOVUPS     off(SI), Y10      \
	OP          Y0, Y10, Y11      \
	VMULPS      Y11, Y11, Y11     \
	OP          Y1, Y10, Y12      \
	VMULPS      Y12, Y12, Y12     \
	VPCMPGTD    Y12, Y11, Y13     \
	OP          Y2, Y10, Y11      \
	VMULPS      Y11, Y11, Y11     \
	VPCMPGTD    Y11, Y12, Y14     \
	VPADDD      Y14, Y13, Y13     \
	OP          Y3, Y10, Y12      \
	VMULPS      Y12, Y12, Y12     \
	VPCMPGTD    Y12, Y11, Y14     \
	VPADDD      Y14, Y13, Y13     \
	VPERMPS     iq2ksGrid_perm(R8), Y13, Y14 \
	VMULPS      off(DI), Y14, Y15 \
	VFMADD231PS Y10, Y15, ACCX    \
	VFMADD231PS Y14, Y15, ACCQ

// func iq2ksFitsCountAVX2(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32)
// The fits of iq2ksFitsAVX2 for the n > 0 scales maxv/den[0..n) of one
// grid, with the nearest point found by counting (exact when
// countingNearest holds for every scale; see nearest4). Each fit's four
// 8-lane sums go unreduced to raw[f] (iq2ksReducePickAVX2 reduces them).
TEXT ·iq2ksFitsCountAVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	VBROADCASTSS maxv+16(FP), Y7
	MOVQ         den+24(FP), AX
	MOVQ         n+32(FP), CX
	MOVQ         grid+40(FP), R8
	MOVQ         raw+48(FP), DX

cfits:
	VBROADCASTSS (AX), Y15
	VDIVPS       Y15, Y7, Y15        // d = maxv/den
	VMULPS       iq2ksGrid_vb(R8), Y15, Y0
	VMULPS       (iq2ksGrid_vb+32)(R8), Y15, Y1
	VMULPS       (iq2ksGrid_vb+64)(R8), Y15, Y2
	VMULPS       (iq2ksGrid_vb+96)(R8), Y15, Y3
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	COUNT_CHUNK(VSUBPS, 0, Y8, Y9)
	COUNT_CHUNK(VADDPS, 0, Y4, Y5)
	COUNT_CHUNK(VSUBPS, 32, Y8, Y9)
	COUNT_CHUNK(VADDPS, 32, Y4, Y5)
	COUNT_CHUNK(VSUBPS, 64, Y8, Y9)
	COUNT_CHUNK(VADDPS, 64, Y4, Y5)
	COUNT_CHUNK(VSUBPS, 96, Y8, Y9)
	COUNT_CHUNK(VADDPS, 96, Y4, Y5)
	VMOVUPS      Y8, 0(DX)
	VMOVUPS      Y9, 32(DX)
	VMOVUPS      Y4, 64(DX)
	VMOVUPS      Y5, 96(DX)
	ADDQ         $4, AX
	ADDQ         $128, DX
	DECQ         CX
	JNE          cfits
	VZEROUPPER
	RET

// REDUCE8 reduces sum s (0..3) of the 8 fits at SI (raw layout, 128 bytes
// per fit) into DST, lane f = hsum8 of fit f:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)). Clobbers Y10-Y15.
#define REDUCE8(s, DST) \
	VMOVUPS    (s*32)(SI), Y10                  \
	VMOVUPS    (s*32+512)(SI), Y11              \
	VPERM2F128 $0x20, Y11, Y10, Y12             \
	VPERM2F128 $0x31, Y11, Y10, Y13             \
	VADDPS     Y13, Y12, Y12                    \
	VMOVUPS    (s*32+128)(SI), Y10              \
	VMOVUPS    (s*32+640)(SI), Y11              \
	VPERM2F128 $0x20, Y11, Y10, Y13             \
	VPERM2F128 $0x31, Y11, Y10, Y14             \
	VADDPS     Y14, Y13, Y13                    \
	VSHUFPS    $0x44, Y13, Y12, Y14             \
	VSHUFPS    $0xEE, Y13, Y12, Y15             \
	VADDPS     Y15, Y14, Y14                    \
	VMOVUPS    (s*32+256)(SI), Y10              \
	VMOVUPS    (s*32+768)(SI), Y11              \
	VPERM2F128 $0x20, Y11, Y10, Y12             \
	VPERM2F128 $0x31, Y11, Y10, Y13             \
	VADDPS     Y13, Y12, Y12                    \
	VMOVUPS    (s*32+384)(SI), Y10              \
	VMOVUPS    (s*32+896)(SI), Y11              \
	VPERM2F128 $0x20, Y11, Y10, Y13             \
	VPERM2F128 $0x31, Y11, Y10, Y15             \
	VADDPS     Y15, Y13, Y13                    \
	VSHUFPS    $0x44, Y13, Y12, Y15             \
	VSHUFPS    $0xEE, Y13, Y12, Y12             \
	VADDPS     Y12, Y15, Y15                    \
	VSHUFPS    $0x88, Y15, Y14, Y12             \
	VSHUFPS    $0xDD, Y15, Y14, Y13             \
	VADDPS     Y13, Y12, DST

// PICK8 is iq2ksPick for 8 fits with the float32 operations of the
// portable code, from sumqx1, sumq21, sumqx2, sumq22 in Y0-Y3 (ZERO = 0):
// ok1 = sumq21 > 0, d1 = sumqx1/sumq21, s1 = sumqx1·d1, d2 = sumqx2/sumq22,
// s2 = sumqx2·d2 and cond2 = (!ok1 || sumqx2² > s1·sumq22) && sumq22 > 0
// give ok (a -1/0 mask), bestD and score (garbage where !ok), stored in
// the iq2ksPicks at DI from byte CX. Uses Y4-Y8, Y10-Y13.
#define PICK8(ZERO) \
	VCMPPS    $0x1E, ZERO, Y1, Y4; \
	VCMPPS    $0x1A, ZERO, Y1, Y10; \
	VDIVPS    Y1, Y0, Y5; \
	VMULPS    Y5, Y0, Y6; \
	VMULPS    Y2, Y2, Y7; \
	VMULPS    Y3, Y6, Y8; \
	VCMPPS    $0x1E, Y8, Y7, Y7; \
	VCMPPS    $0x1E, ZERO, Y3, Y11; \
	VDIVPS    Y3, Y2, Y12; \
	VMULPS    Y12, Y2, Y13; \
	VORPS     Y7, Y10, Y7; \
	VANDPS    Y11, Y7, Y7; \
	VBLENDVPS Y7, Y12, Y5, Y5; \
	VBLENDVPS Y7, Y13, Y6, Y6; \
	VORPS     Y7, Y4, Y4; \
	VMOVUPS   Y4, iq2ksPicks_ok(DI)(CX*1); \
	VMOVUPS   Y5, iq2ksPicks_bestD(DI)(CX*1); \
	VMOVUPS   Y6, iq2ksPicks_score(DI)(CX*1)

// func iq2ksReducePickAVX2(raw *[56][4][8]float32, p *iq2ksPicks)
// Reduces the raw sums of 56 fits as HSUM8 does and picks as
// iq2ksPickAVX2.
TEXT ·iq2ksReducePickAVX2(SB), NOSPLIT, $0-16
	MOVQ   raw+0(FP), SI
	MOVQ   p+8(FP), DI
	XORQ   CX, CX
	VXORPS Y9, Y9, Y9

rpicks:
	REDUCE8(0, Y0)
	REDUCE8(1, Y1)
	REDUCE8(2, Y2)
	REDUCE8(3, Y3)
	PICK8(Y9)
	ADDQ      $1024, SI
	ADDQ      $32, CX
	CMPQ      CX, $224
	JLT       rpicks
	VZEROUPPER
	RET

// func iq2ksPickAVX2(s *iq2ksFitSums, p *iq2ksPicks)
// iq2ksPick for all 56 lanes of s, 8 at a time, with the same float32
// operations: ok as a -1/0 mask, bestD and score (garbage where !ok).
TEXT ·iq2ksPickAVX2(SB), NOSPLIT, $0-16
	MOVQ   s+0(FP), SI
	MOVQ   p+8(FP), DI
	XORQ   CX, CX
	VXORPS Y15, Y15, Y15

picks:
	VMOVUPS   iq2ksFitSums_sumqx1(SI)(CX*1), Y0
	VMOVUPS   iq2ksFitSums_sumq21(SI)(CX*1), Y1
	VMOVUPS   iq2ksFitSums_sumqx2(SI)(CX*1), Y2
	VMOVUPS   iq2ksFitSums_sumq22(SI)(CX*1), Y3
	PICK8(Y15)
	ADDQ      $32, CX
	CMPQ      CX, $224
	JLT       picks
	VZEROUPPER
	RET

// ACC_CHUNK: q = table[idx] for 8 weights (byte indices at ioff(BX)),
// then Σ(w·q)·x into Y8 and Σ(w·q)·q into Y9, fused.
#define ACC_CHUNK(off, ioff) \
	VPMOVZXBD   ioff(BX), Y0    \
	VPERMPS     Y6, Y0, Y1      \
	VMULPS      off(DI), Y1, Y2 \
	VFMADD231PS off(SI), Y2, Y8 \
	VFMADD231PS Y1, Y2, Y9

// func iq2ksAccumAVX2(x, w *float32, idx *[32]uint8, values *[8]float32, vd float32, acc *[16]float32)
// The second pass's 8-lane sums of one block: q = vd*values[idx] (rounded),
// acc[0:8] += (w·q)·x and acc[8:16] += (w·q)·q, fused, lane l taking
// weights l, l+8, l+16, l+24.
TEXT ·iq2ksAccumAVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         idx+16(FP), BX
	MOVQ         values+24(FP), AX
	MOVQ         acc+40(FP), DX
	VBROADCASTSS vd+32(FP), Y7
	VMULPS       (AX), Y7, Y6
	VMOVUPS      0(DX), Y8
	VMOVUPS      32(DX), Y9
	ACC_CHUNK(0, 0)
	ACC_CHUNK(32, 8)
	ACC_CHUNK(64, 16)
	ACC_CHUNK(96, 24)
	VMOVUPS      Y8, 0(DX)
	VMOVUPS      Y9, 32(DX)
	VZEROUPPER
	RET
