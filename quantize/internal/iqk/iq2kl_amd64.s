//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"
#include "nearest_amd64.h"

// NEARIDX leaves in BX the index of the grid point nearest the float32 in
// XIN, as nearestTable.best does (R8 = base, R9 = limit, R10 = -1).
// Clobbers AX, DX, X12, X13.
#define NEARIDX(XIN) NEAREST_INDEX(XIN, R8, R10, R9, X12, X13)

// For each pair: the iq3 grid indices of id*x1 and id*x2 give the pair grid
// point, or a list of eight neighbours. The eight neighbour scores
// w1*d1*d1 + (w2*d2)*d2 are computed as one vector whether or not they are
// needed (a branch here would be mispredicted half the time); the winner is
// the first lane holding the smallest score below MaxFloat32, as the
// portable sequential strict-less scan finds. The sums then follow in pair
// order with the hardware fused multiply-add.
//
// func iq2klSumsFMA(t *nearestTable, tabs *iq2klAsmTables, x, w *float32, npairs int, id float32, out *[2]float32, idx *[16]int32) bool
TEXT ·iq2klSumsFMA(SB), NOSPLIT, $0-65
	MOVQ  t+0(FP), R11
	MOVQ  tabs+8(FP), R12
	MOVQ  x+16(FP), SI
	MOVQ  w+24(FP), DI
	VMOVSS id+40(FP), X0
	MOVQ  nearestTable_base(R11), R8
	MOVQ  nearestTable_limit(R11), R9
	MOVQ  $-1, R10
	MOVL  $0x7f7fffff, AX
	VMOVD AX, X14
	VBROADCASTSS X14, Y14 // MaxFloat32
	MOVL  $0x7f800000, AX
	VMOVD AX, X15
	VBROADCASTSS X15, Y15 // +Inf
	VXORPS X8, X8, X8     // sumqx
	VXORPS X9, X9, X9     // sumq2
	MOVQ  idx+56(FP), CX
	XORQ  R13, R13

loop:
	VMOVSS (SI)(R13*8), X1
	VMOVSS 4(SI)(R13*8), X2
	VMOVSS (DI)(R13*8), X3
	VMOVSS 4(DI)(R13*8), X4
	VMULSS X1, X0, X5 // sx1
	VMULSS X2, X0, X6 // sx2
	NEARIDX(X5)
	MOVQ  BX, R14
	NEARIDX(X6)
	SHLQ  $3, R14
	ADDQ  BX, R14
	ANDQ  $63, R14
	MOVBQSX iq2klAsmTables_index(R12)(R14*1), R14

	// Neighbour list -i-1 for i < 0, else list 0 (scored, then dropped).
	MOVQ  R14, AX
	NOTQ  AX
	XORL  DX, DX
	TESTQ R14, R14
	CMOVQGE DX, AX
	SHLQ  $5, AX
	VBROADCASTSS X5, Y5
	VBROADCASTSS X6, Y6
	VBROADCASTSS X3, Y7
	VBROADCASTSS X4, Y10
	VMOVUPS iq2klAsmTables_nb1(R12)(AX*1), Y11
	VSUBPS  Y5, Y11, Y11 // d1
	VMOVUPS iq2klAsmTables_nb2(R12)(AX*1), Y12
	VSUBPS  Y6, Y12, Y12 // d2
	VMULPS  Y12, Y10, Y13
	VMULPS  Y12, Y13, Y13 // (w2*d2)*d2
	VMULPS  Y11, Y7, Y10  // w1*d1
	VFMADD231PS Y11, Y10, Y13
	VCMPPS  $0x11, Y14, Y13, Y11 // score < MaxFloat32 (ordered)
	VBLENDVPS Y11, Y13, Y15, Y12 // valid scores, +Inf elsewhere
	VEXTRACTF128 $1, Y12, X13
	VMINPS  X13, X12, X13
	VPERMILPS $0x4e, X13, X10
	VMINPS  X10, X13, X13
	VPERMILPS $0xb1, X13, X10
	VMINPS  X10, X13, X13
	VBROADCASTSS X13, Y13
	VCMPPS  $0x00, Y13, Y12, Y13 // lanes equal to the smallest
	VMOVMSKPS Y13, DX
	VMOVMSKPS Y11, BX
	TESTL BX, BX
	JNE   scored
	TESTQ R14, R14
	JLT   fallback

scored:
	ORL   $0x100, DX
	BSFL  DX, DX
	LEAQ  (AX)(DX*4), DX
	MOVL  iq2klAsmTables_nbID(R12)(DX*1), DX
	TESTQ R14, R14
	CMOVQLT DX, R14
	VMOVSS iq2klAsmTables_grid(R12)(R14*8), X10     // q1
	VMOVSS (iq2klAsmTables_grid+4)(R12)(R14*8), X11 // q2
	VMULSS X10, X3, X12 // w1*q1
	VMULSS X11, X4, X13 // w2*q2
	VMULSS X2, X13, X5
	VFMADD231SS X1, X12, X5
	VADDSS X5, X8, X8
	VMULSS X11, X13, X6
	VFMADD231SS X10, X12, X6
	VADDSS X6, X9, X9
	MOVL  R14, (CX)(R13*4)
	INCQ  R13
	CMPQ  R13, npairs+32(FP)
	JLT   loop

	MOVQ  out+48(FP), AX
	VMOVSS X8, 0(AX)
	VMOVSS X9, 4(AX)
	MOVB  $1, ret+64(FP)
	VZEROUPPER
	RET

fallback:
	MOVB  $0, ret+64(FP)
	VZEROUPPER
	RET

// func iq2klScoreFMA(tabs *iq2klAsmTables, x, w *float32, idx *[16]int32, npairs int, dl float32) float32
// The weighted squared error of the pairs at pair grid points idx and
// scale dl: diff = dl*g - x fused, then w1*diff1*diff1 + (w2*diff2)*diff2
// fused, summed in pair order.
TEXT ·iq2klScoreFMA(SB), NOSPLIT, $0-52
	MOVQ  tabs+0(FP), R12
	MOVQ  x+8(FP), SI
	MOVQ  w+16(FP), DI
	MOVQ  idx+24(FP), BX
	MOVQ  npairs+32(FP), CX
	VMOVSS dl+40(FP), X0
	VXORPS X8, X8, X8
	XORQ  R13, R13

score:
	MOVLQSX (BX)(R13*4), AX
	VMOVSS iq2klAsmTables_grid(R12)(AX*8), X1     // g1
	VMOVSS (iq2klAsmTables_grid+4)(R12)(AX*8), X2 // g2
	VFMSUB213SS (SI)(R13*8), X0, X1               // dl*g1 - x1
	VFMSUB213SS 4(SI)(R13*8), X0, X2              // dl*g2 - x2
	VMULSS (DI)(R13*8), X1, X3                    // w1*diff1
	VMULSS 4(DI)(R13*8), X2, X4                   // w2*diff2
	VMULSS X2, X4, X4                             // (w2*diff2)*diff2
	VFMADD231SS X1, X3, X4
	VADDSS X4, X8, X8
	INCQ  R13
	CMPQ  R13, CX
	JLT   score

	VMOVSS X8, ret+48(FP)
	RET
