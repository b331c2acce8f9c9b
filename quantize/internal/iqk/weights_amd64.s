//go:build amd64 && !purego

#include "textflag.h"

// qxRound is the reference's rounding constant 1.5*2^23 in eight lanes.
DATA qxRound<>+0(SB)/8, $0x4b4000004b400000
DATA qxRound<>+8(SB)/8, $0x4b4000004b400000
DATA qxRound<>+16(SB)/8, $0x4b4000004b400000
DATA qxRound<>+24(SB)/8, $0x4b4000004b400000
GLOBL qxRound<>(SB), RODATA|NOPTR, $32

// QX_LANES is one vector of 8 trial lanes of qxTrialsAVX2: l = clamp of
// the exact iscale*x rounded half-to-even (the reference's nearest_int with
// the product fused into the addition of 1.5*2^23, whose sum minus 1.5*2^23
// is exact), then sumlx += (qw*x)*l and suml2 += (qw*l)*l, fused. Y3 =
// qw*x, Y4 = qw, Y5 = x (broadcast); Y6/Y7 = -nmax, nmax-1.
#define QX_LANES(ISC, SX, S2) \
	VMOVUPS     qxRound<>(SB), Y8 \
	VFMADD231PS ISC, Y5, Y8 \
	VSUBPS      qxRound<>(SB), Y8, Y8 \
	VMAXPS      Y6, Y8, Y8  \
	VMINPS      Y7, Y8, Y8  \
	VFMADD231PS Y8, Y3, SX  \
	VMULPS      Y8, Y4, Y9  \
	VFMADD231PS Y8, Y9, S2

// func qxTrialsAVX2(x, qw *float32, n int, iscale *[24]float32, nmax float32, out *[2][24]float32)
// The sums of makeQxQuants for 24 inverse scales at once (one per lane),
// over x[0..n) in order: out[0] = sumlx, out[1] = suml2.
TEXT ·qxTrialsAVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         qw+8(FP), DI
	MOVQ         n+16(FP), CX
	MOVQ         iscale+24(FP), AX
	MOVQ         out+40(FP), DX
	VBROADCASTSS nmax+32(FP), Y7
	VXORPS       Y6, Y6, Y6
	VSUBPS       Y7, Y6, Y6          // -nmax
	MOVL         $0x3f800000, BX
	VMOVD        BX, X9
	VBROADCASTSS X9, Y9
	VSUBPS       Y9, Y7, Y7          // nmax-1
	VMOVUPS      0(AX), Y0
	VMOVUPS      32(AX), Y1
	VMOVUPS      64(AX), Y2
	VXORPS       Y10, Y10, Y10
	VXORPS       Y11, Y11, Y11
	VXORPS       Y12, Y12, Y12
	VXORPS       Y13, Y13, Y13
	VXORPS       Y14, Y14, Y14
	VXORPS       Y15, Y15, Y15
	XORQ         BX, BX

qxloop:
	VMOVSS       (SI)(BX*4), X5
	VMULSS       (DI)(BX*4), X5, X3  // qw*x, rounded
	VBROADCASTSS X3, Y3
	VBROADCASTSS (DI)(BX*4), Y4
	VBROADCASTSS X5, Y5
	QX_LANES(Y0, Y10, Y13)
	QX_LANES(Y1, Y11, Y14)
	QX_LANES(Y2, Y12, Y15)
	INCQ         BX
	CMPQ         BX, CX
	JLT          qxloop
	VMOVUPS      Y10, 0(DX)
	VMOVUPS      Y11, 32(DX)
	VMOVUPS      Y12, 64(DX)
	VMOVUPS      Y13, 96(DX)
	VMOVUPS      Y14, 128(DX)
	VMOVUPS      Y15, 160(DX)
	VZEROUPPER
	RET
