//go:build amd64 && !purego

#include "textflag.h"

// Constants block c (rows of 4 float64, one lane per variant): the grid
// points v0..v3, dx, dq, e2, r, a0, b0, xN, wN.
#define C_DQ 160
#define C_E2 192
#define C_R 224
#define C_A0 256
#define C_B0 288
#define C_XN 320
#define C_WN 352

// func splitScanAVX2(sumx, sumw *float32, i1, i2, i3, n, minI3 int, c *[12][4]float64) (hitI2, hitI3, mask int)
//
// For i2 from the given one and i3 from max(i3, i2, minI3) (later i2 from
// max(i2, minI3)), lane k computes the linear models
// cx = a0*v0 + a1*v1 - x2*v2 + xN*v3, cq = b0*v0*v0 + b1*v1*v1 - w2*v2*v2 + wN*v3*v3,
// b = r*cq, g = r*dq, then per i3 X = cx + x*dx and m = (X*X + e2) - (b + w*g),
// all unfused and in the portable loop's order, and stops at the first m >= 0.
TEXT ·splitScanAVX2(SB), NOSPLIT, $0-88
	MOVQ    sumx+0(FP), SI
	MOVQ    sumw+8(FP), DI
	MOVQ    i1+16(FP), R9
	MOVQ    i2+24(FP), R10
	MOVQ    i3+32(FP), CX
	MOVQ    n+40(FP), DX
	MOVQ    minI3+48(FP), R11
	MOVQ    c+56(FP), R8
	VMOVUPD 0(R8), Y0
	VMOVUPD 32(R8), Y1
	VMOVUPD 64(R8), Y2
	VMOVUPD 96(R8), Y3
	VMOVUPD 128(R8), Y4    // dx
	VXORPD  Y5, Y5, Y5     // zero
	VMOVUPD C_E2(R8), Y15  // e2
	MOVSS   (SI)(R9*4), X10 // sumx[i1]
	MOVSS   (DI)(R9*4), X11 // sumw[i1]

pairs:
	CMPQ CX, R10
	CMOVQLT R10, CX
	CMPQ CX, R11
	CMOVQLT R11, CX
	CMPQ CX, DX
	JGE  nextpair

	// cx in Y12
	MOVSS        (SI)(R10*4), X6
	VSUBSS       X10, X6, X7  // a1 = sumx[i2] - sumx[i1]
	VCVTSS2SD    X7, X7, X7
	VBROADCASTSD X7, Y7
	VCVTSS2SD    X6, X6, X6
	VBROADCASTSD X6, Y6       // x2
	VMULPD       C_A0(R8), Y0, Y12
	VMULPD       Y1, Y7, Y8
	VADDPD       Y8, Y12, Y12
	VMULPD       Y2, Y6, Y8
	VSUBPD       Y8, Y12, Y12
	VMULPD       C_XN(R8), Y3, Y8
	VADDPD       Y8, Y12, Y12

	// cq in Y13, then b = r*cq, g = r*dq
	MOVSS        (DI)(R10*4), X6
	VSUBSS       X11, X6, X7  // b1 = sumw[i2] - sumw[i1]
	VCVTSS2SD    X7, X7, X7
	VBROADCASTSD X7, Y7
	VCVTSS2SD    X6, X6, X6
	VBROADCASTSD X6, Y6       // w2
	VMULPD       C_B0(R8), Y0, Y13
	VMULPD       Y0, Y13, Y13
	VMULPD       Y1, Y7, Y8
	VMULPD       Y1, Y8, Y8
	VADDPD       Y8, Y13, Y13
	VMULPD       Y2, Y6, Y8
	VMULPD       Y2, Y8, Y8
	VSUBPD       Y8, Y13, Y13
	VMULPD       C_WN(R8), Y3, Y8
	VMULPD       Y3, Y8, Y8
	VADDPD       Y8, Y13, Y13
	VMOVUPD      C_R(R8), Y9
	VMULPD       Y13, Y9, Y13 // b
	VMULPD       C_DQ(R8), Y9, Y14 // g

loop:
	VCVTSS2SD    (SI)(CX*4), X6, X6
	VCVTSS2SD    (DI)(CX*4), X7, X7
	VBROADCASTSD X6, Y6
	VBROADCASTSD X7, Y7
	VMULPD       Y4, Y6, Y8
	VADDPD       Y8, Y12, Y8
	VMULPD       Y8, Y8, Y8
	VADDPD       Y15, Y8, Y8
	VMULPD       Y14, Y7, Y9
	VADDPD       Y9, Y13, Y9
	VSUBPD       Y9, Y8, Y8
	VCMPPD       $0x0D, Y5, Y8, Y8
	VMOVMSKPD    Y8, AX
	TESTQ        AX, AX
	JNZ          found
	INCQ         CX
	CMPQ         CX, DX
	JLT          loop

nextpair:
	XORQ CX, CX
	INCQ R10
	CMPQ R10, DX
	JLT  pairs

	MOVQ DX, hitI2+64(FP)
	MOVQ DX, hitI3+72(FP)
	MOVQ $0, mask+80(FP)
	VZEROUPPER
	RET

found:
	MOVQ R10, hitI2+64(FP)
	MOVQ CX, hitI3+72(FP)
	MOVQ AX, mask+80(FP)
	VZEROUPPER
	RET
