//go:build amd64 && !purego

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

// func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32)
// params: d·v0..d·v3, v0..v3, -d·v0..-d·v3. out: Σwq·x and Σwq·q for +d,
// then for -d, each summed over 8 lanes and the lanes reduced by HSUM8.
TEXT ·iq2ksFitAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         params+16(FP), AX
	MOVQ         out+24(FP), DX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	VBROADCASTSS 16(AX), Y4
	VBROADCASTSS 20(AX), Y5
	VBROADCASTSS 24(AX), Y6
	VBROADCASTSS 28(AX), Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	IQ2KS_CHUNK(0, Y8, Y9)
	IQ2KS_CHUNK(32, Y8, Y9)
	IQ2KS_CHUNK(64, Y8, Y9)
	IQ2KS_CHUNK(96, Y8, Y9)
	HSUM8(Y8, X8, 0)
	HSUM8(Y9, X9, 4)
	VBROADCASTSS 32(AX), Y0
	VBROADCASTSS 36(AX), Y1
	VBROADCASTSS 40(AX), Y2
	VBROADCASTSS 44(AX), Y3
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	IQ2KS_CHUNK(0, Y8, Y9)
	IQ2KS_CHUNK(32, Y8, Y9)
	IQ2KS_CHUNK(64, Y8, Y9)
	IQ2KS_CHUNK(96, Y8, Y9)
	HSUM8(Y8, X8, 8)
	HSUM8(Y9, X9, 12)
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
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	VBROADCASTSS 16(AX), Y4
	VBROADCASTSS 20(AX), Y5
	VBROADCASTSS 24(AX), Y6
	VBROADCASTSS 28(AX), Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	IQ2KS_CHUNK(0, Y8, Y9)
	IQ2KS_CHUNK(32, Y8, Y9)
	IQ2KS_CHUNK(64, Y8, Y9)
	IQ2KS_CHUNK(96, Y8, Y9)
	HSUM8(Y8, X8, 0)
	HSUM8(Y9, X9, 4)
	VBROADCASTSS 32(AX), Y0
	VBROADCASTSS 36(AX), Y1
	VBROADCASTSS 40(AX), Y2
	VBROADCASTSS 44(AX), Y3
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	IQ2KS_CHUNK(0, Y8, Y9)
	IQ2KS_CHUNK(32, Y8, Y9)
	IQ2KS_CHUNK(64, Y8, Y9)
	IQ2KS_CHUNK(96, Y8, Y9)
	HSUM8(Y8, X8, 8)
	HSUM8(Y9, X9, 12)
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
