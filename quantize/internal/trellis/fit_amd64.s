//go:build amd64 && !purego

#include "textflag.h"

// FIT advances the three lane vectors of one trial sum pair for the
// element broadcast in Y9 (v), Y10 (w*x) and Y11 (w): q = dl*v, sumqx +=
// (w*x)*q, sumq2 += (w*q)*q, both fused.
#define FIT(DL, SQX, SQ2) \
	VMULPS      Y9, DL, Y12  \
	VMULPS      Y12, Y11, Y13 \
	VFMADD231PS Y10, Y12, SQX \
	VFMADD231PS Y12, Y13, SQ2

// FITMUL is FIT with the products rounded before they are added:
// sumqx += round((w*x)*q), sumq2 += round(round(w*q)*q).
#define FITMUL(DL, SQX, SQ2) \
	VMULPS Y9, DL, Y12   \
	VMULPS Y12, Y11, Y13 \
	VMULPS Y12, Y13, Y13 \
	VADDPS Y13, SQ2, SQ2 \
	VMULPS Y12, Y10, Y13 \
	VADDPS Y13, SQX, SQX

// func fitTrialsAVX2(wx, w, v, dls *float32, nblock int, out *[48]float32)
TEXT ·fitTrialsAVX2(SB), NOSPLIT, $0-48
	MOVQ wx+0(FP), AX
	MOVQ w+8(FP), DI
	MOVQ v+16(FP), SI
	MOVQ dls+24(FP), DX
	MOVQ nblock+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5

block:
	VMOVUPS 0(DX), Y6
	VMOVUPS 32(DX), Y7
	VMOVUPS 64(DX), Y8
	ADDQ $96, DX
	MOVQ $32, BX

elem:
	VBROADCASTSS (SI), Y9
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (DI), Y11
	FIT(Y6, Y0, Y3)
	FIT(Y7, Y1, Y4)
	FIT(Y8, Y2, Y5)
	ADDQ $4, SI
	ADDQ $4, AX
	ADDQ $4, DI
	DECQ BX
	JNE elem
	DECQ CX
	JNE block

	MOVQ out+40(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VMOVUPS Y4, 128(AX)
	VMOVUPS Y5, 160(AX)
	VZEROUPPER
	RET

// fitTrialsMulAddAVX2 repeats fitTrialsAVX2 with FITMUL for FIT.
// func fitTrialsMulAddAVX2(wx, w, v, dls *float32, nblock int, out *[48]float32)
TEXT ·fitTrialsMulAddAVX2(SB), NOSPLIT, $0-48
	MOVQ wx+0(FP), AX
	MOVQ w+8(FP), DI
	MOVQ v+16(FP), SI
	MOVQ dls+24(FP), DX
	MOVQ nblock+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5

mblock:
	VMOVUPS 0(DX), Y6
	VMOVUPS 32(DX), Y7
	VMOVUPS 64(DX), Y8
	ADDQ $96, DX
	MOVQ $32, BX

melem:
	VBROADCASTSS (SI), Y9
	VBROADCASTSS (AX), Y10
	VBROADCASTSS (DI), Y11
	FITMUL(Y6, Y0, Y3)
	FITMUL(Y7, Y1, Y4)
	FITMUL(Y8, Y2, Y5)
	ADDQ $4, SI
	ADDQ $4, AX
	ADDQ $4, DI
	DECQ BX
	JNE melem
	DECQ CX
	JNE mblock

	MOVQ out+40(FP), AX
	VMOVUPS Y0, 0(AX)
	VMOVUPS Y1, 32(AX)
	VMOVUPS Y2, 64(AX)
	VMOVUPS Y3, 96(AX)
	VMOVUPS Y4, 128(AX)
	VMOVUPS Y5, 160(AX)
	VZEROUPPER
	RET

DATA weightsAbs<>+0(SB)/4, $0x7fffffff
GLOBL weightsAbs<>(SB), RODATA|NOPTR, $4

// func sumSquaresAVX2(x *float32, n int) float32
// Σ x² in index order, each product rounded before it is added (not fused,
// as the reference's set_weights in all four types), for n > 0. The adds are one dependent
// chain, as the fused multiply-adds were; the products are off it.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS X0, X0, X0

sqloop:
	VMOVSS (SI), X1
	VMULSS X1, X1, X1
	VADDSS X1, X0, X0
	ADDQ   $4, SI
	DECQ   CX
	JNZ    sqloop

	VMOVSS X0, ret+16(FP)
	RET

// func weightsBlockAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32)
// setWeights for one block of 32 with importance data, as
// quantize_row_iq3_kt_impl compiles it (roundSq false): w = qw*sqrt(fma(x,
// x, sigma2)) eight at a time (each step rounded once, as the portable
// fma32, sqrt32 and product), then, in index order, sumwx += w*|x|, sumw2
// += w*w and sumx2 += x*x, each a fused multiply-add.
TEXT ·weightsBlockAVX2(SB), NOSPLIT, $0-44
	MOVQ         x+0(FP), SI
	MOVQ         qw+8(FP), DX
	MOVQ         w+16(FP), DI
	VBROADCASTSS sigma2+24(FP), Y0

#define WEIGHTS8(off) \
	VMOVUPS     off(SI), Y1 \
	VMOVAPS     Y0, Y2 \
	VFMADD231PS Y1, Y1, Y2 \
	VSQRTPS     Y2, Y2 \
	VMULPS      off(DX), Y2, Y2 \
	VMOVUPS     Y2, off(DI)

	WEIGHTS8(0)
	WEIGHTS8(32)
	WEIGHTS8(64)
	WEIGHTS8(96)
#undef WEIGHTS8
	VZEROUPPER

	VMOVSS weightsAbs<>(SB), X7
	VXORPS X0, X0, X0 // sumwx
	VXORPS X1, X1, X1 // sumw2
	VXORPS X2, X2, X2 // sumx2
	MOVQ   $32, CX

wloop:
	VMOVSS      (SI), X3
	VMOVSS      (DI), X4
	VANDPS      X7, X3, X5
	VFMADD231SS X5, X4, X0
	VFMADD231SS X4, X4, X1
	VFMADD231SS X3, X3, X2
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         wloop

	VMOVSS X0, sumwx+32(FP)
	VMOVSS X1, sumw2+36(FP)
	VMOVSS X2, sumx2+40(FP)
	RET

// func weightsBlockRoundedAVX2(x, qw, w *float32, sigma2 float32) (sumwx, sumw2, sumx2 float32)
// weightsBlockAVX2 as quantize_iq1_kt, quantize_iq2_kt and quantize_iq4_kt
// compile it (setWeights with roundSq): x*x is rounded once, w = qw*sqrt(
// sigma2 + x*x) with a plain add, and sumx2 += x*x adds the same rounded
// product; sumwx and sumw2 are fused as in weightsBlockAVX2.
TEXT ·weightsBlockRoundedAVX2(SB), NOSPLIT, $0-44
	MOVQ         x+0(FP), SI
	MOVQ         qw+8(FP), DX
	MOVQ         w+16(FP), DI
	VBROADCASTSS sigma2+24(FP), Y0

#define WEIGHTS8(off) \
	VMOVUPS off(SI), Y1 \
	VMULPS  Y1, Y1, Y2 \
	VADDPS  Y0, Y2, Y2 \
	VSQRTPS Y2, Y2 \
	VMULPS  off(DX), Y2, Y2 \
	VMOVUPS Y2, off(DI)

	WEIGHTS8(0)
	WEIGHTS8(32)
	WEIGHTS8(64)
	WEIGHTS8(96)
#undef WEIGHTS8
	VZEROUPPER

	VMOVSS weightsAbs<>(SB), X7
	VXORPS X0, X0, X0 // sumwx
	VXORPS X1, X1, X1 // sumw2
	VXORPS X2, X2, X2 // sumx2
	MOVQ   $32, CX

wrloop:
	VMOVSS      (SI), X3
	VMOVSS      (DI), X4
	VANDPS      X7, X3, X5
	VMULSS      X3, X3, X6
	VFMADD231SS X5, X4, X0
	VFMADD231SS X4, X4, X1
	VADDSS      X6, X2, X2
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         wrloop

	VMOVSS X0, sumwx+32(FP)
	VMOVSS X1, sumw2+36(FP)
	VMOVSS X2, sumx2+40(FP)
	RET
