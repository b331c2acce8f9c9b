//go:build amd64 && !purego

#include "textflag.h"

// func imatrixWeightsAVX2(w, x, qw *float32, n int, sigma2 float32)
// w = qw·sqrt(x·x + sigma2), eight per step: the sum fused, the square root
// and the product rounded, as ImatrixWeights' portable loop.
TEXT ·imatrixWeightsAVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         qw+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS sigma2+32(FP), Y2
	XORQ         AX, AX

imweights:
	VMOVUPS     (SI)(AX*4), Y0
	VMOVAPS     Y2, Y1
	VFMADD231PS Y0, Y0, Y1 // x·x + sigma2, fused
	VSQRTPS     Y1, Y1
	VMULPS      (DX)(AX*4), Y1, Y1
	VMOVUPS     Y1, (DI)(AX*4)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         imweights
	VZEROUPPER
	RET

// func sigmaWeightsAVX2(w, x *float32, n int, c float32)
// w = x·x + c, fused, eight per step.
TEXT ·sigmaWeightsAVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS c+24(FP), Y2
	XORQ         AX, AX

sigweights:
	VMOVUPS     (SI)(AX*4), Y0
	VMOVAPS     Y2, Y1
	VFMADD231PS Y0, Y0, Y1
	VMOVUPS     Y1, (DI)(AX*4)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         sigweights
	VZEROUPPER
	RET
