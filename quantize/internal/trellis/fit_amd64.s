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
