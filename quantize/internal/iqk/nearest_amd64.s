//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"
#include "nearest_amd64.h"

// NEAREST maps the float32 in XIN to its nearest grid value in XQ, as
// nearestTable.best does. Clobbers AX, BX, DX, X5, X6.
#define NEAREST(XIN, XQ) \
	NEAREST_INDEX(XIN, R8, R10, R9, X5, X6); \
	ANDQ   $63, BX; \
	VMOVSS nearestTable_vals(R11)(BX*4), XQ

// IQ6NEAREST maps the float32 in XIN to its nearest grid value in XQ, as
// nearestTable.bestIQ6 does: the slot is XIN - values[0] (X14) truncated.
// Clobbers AX, BX, DX, X5, X6.
#define IQ6NEAREST(XIN, XQ) \
	VSUBSS     X14, XIN, X5; \
	VCVTTSS2SI X5, AX; \
	MOVLQSX    AX, AX; \
	NEAREST_CLAMP(R10, R9); \
	NEAREST_PICK(XIN, X5, X6); \
	ANDQ       $63, BX; \
	VMOVSS     nearestTable_vals(R11)(BX*4), XQ

// SUMS is the loop both functions share: for every weight, the nearest grid
// value of +x*id and -x*id (through NEAR) and the four weighted sums, each
// in index order with the hardware fused multiply-add. PROLOGUE loads what
// NEAR needs.
#define SUMS(NEAR, PROLOGUE) \
	MOVQ  t+0(FP), R11 \
	MOVQ  x+8(FP), SI \
	MOVQ  w+16(FP), DI \
	MOVQ  n+24(FP), CX \
	VMOVSS id+32(FP), X0 \
	MOVQ  out+40(FP), R12 \
	PROLOGUE \
	MOVQ  nearestTable_limit(R11), R9 \
	MOVQ  $-1, R10 \
	MOVL  $0x80000000, AX \
	VMOVD  AX, X15 \
	VXORPS X8, X8, X8 \
	VXORPS X9, X9, X9 \
	VXORPS X10, X10, X10 \
	VXORPS X11, X11, X11 \
	XORQ  R13, R13 \
 \
loop: \
	VMOVSS   (SI)(R13*4), X1 \
	VMOVSS   (DI)(R13*4), X2 \
	VMULSS  X1, X0, X3 \
	NEAR(X3, X4) \
	VMULSS  X4, X2, X7 \
	VFMADD231SS X1, X7, X8 \
	VFMADD231SS X4, X7, X9 \
	VXORPS  X15, X3, X3 \
	NEAR(X3, X4) \
	VMULSS  X4, X2, X7 \
	VFMADD231SS X1, X7, X10 \
	VFMADD231SS X4, X7, X11 \
	INCQ    R13 \
	CMPQ    R13, CX \
	JLT     loop \
 \
	VMOVSS X8, 0(R12) \
	VMOVSS X9, 4(R12) \
	VMOVSS X10, 8(R12) \
	VMOVSS X11, 12(R12) \
	RET

#define NEAREST_PROLOGUE MOVQ nearestTable_base(R11), R8
#define IQ6_PROLOGUE VMOVSS nearestTable_v0(R11), X14

// func nearestSumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32)
TEXT ·nearestSumsFMA(SB), NOSPLIT, $0-48
	SUMS(NEAREST, NEAREST_PROLOGUE)

// func iq6SumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32)
TEXT ·iq6SumsFMA(SB), NOSPLIT, $0-48
	SUMS(IQ6NEAREST, IQ6_PROLOGUE)
