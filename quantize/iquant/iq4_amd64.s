//go:build amd64 && !purego

#include "textflag.h"

// func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32)
TEXT ·iq4SumsFMA(SB), NOSPLIT, $0-40
	MOVQ weight+0(FP), SI
	MOVQ xb+8(FP), DI
	MOVQ L+16(FP), BX
	MOVQ values+24(FP), DX
	VXORPS X0, X0, X0 // sumqx
	VXORPS X1, X1, X1 // sumq2
	XORQ CX, CX

loop:
	MOVBLZX (BX)(CX*1), AX
	ANDL $15, AX
	VMOVSS (DX)(AX*4), X2         // q
	VMULSS (SI)(CX*4), X2, X3     // wq = w*q, rounded
	VFMADD231SS (DI)(CX*4), X3, X0 // sumqx = fma(wq, x, sumqx)
	VFMADD231SS X2, X3, X1         // sumq2 = fma(wq, q, sumq2)
	INCQ CX
	CMPQ CX, $32
	JLT loop

	MOVSS X0, sumqx+32(FP)
	MOVSS X1, sumq2+36(FP)
	RET

// func iq4LevelsAVX2(xb *float32, id float32, out *[32]int32, tab *[241]int32, values *[17]float32)
TEXT ·iq4LevelsAVX2(SB), NOSPLIT, $0-40
	MOVQ xb+0(FP), SI
	VBROADCASTSS id+8(FP), Y15
	MOVQ out+16(FP), DI
	MOVQ tab+24(FP), DX
	MOVQ values+32(FP), BX
	MOVL $127, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $240, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $255, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	VPXOR Y13, Y13, Y13
	MOVQ $4, CX

loop:
	VMULPS (SI), Y15, Y0       // x = id*v
	VCVTTPS2DQ Y0, Y1          // int(x), truncated
	VPADDD Y14, Y1, Y1         // - values[0]
	VPMAXSD Y13, Y1, Y1
	VPMINSD Y12, Y1, Y1        // clamp to the table
	VPCMPEQD Y9, Y9, Y9
	VPXOR Y2, Y2, Y2
	VPGATHERDD Y9, (DX)(Y1*4), Y2 // entry: base | boundary<<8
	VPAND Y11, Y2, Y3          // base
	VPSRLD $8, Y2, Y4          // boundary 0/1
	VPCMPEQD Y9, Y9, Y9
	VXORPS Y5, Y5, Y5
	VGATHERDPS Y9, (BX)(Y3*4), Y5  // lo = values[base]
	VPCMPEQD Y9, Y9, Y9
	VXORPS Y6, Y6, Y6
	VGATHERDPS Y9, 4(BX)(Y3*4), Y6 // hi = values[base+1]
	VSUBPS Y5, Y0, Y7          // x - lo
	VSUBPS Y0, Y6, Y8          // hi - x
	VCMPPS $5, Y8, Y7, Y7      // !(x-lo < hi-x)
	VPSRLD $31, Y7, Y7
	VPAND Y4, Y7, Y7
	VPADDD Y3, Y7, Y7
	VMOVDQU Y7, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
