//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// The shift of each lane's index in its group's word.
DATA iq4kssShifts<>+0(SB)/4, $0
DATA iq4kssShifts<>+4(SB)/4, $4
DATA iq4kssShifts<>+8(SB)/4, $8
DATA iq4kssShifts<>+12(SB)/4, $12
DATA iq4kssShifts<>+16(SB)/4, $0
DATA iq4kssShifts<>+20(SB)/4, $4
DATA iq4kssShifts<>+24(SB)/4, $8
DATA iq4kssShifts<>+28(SB)/4, $12
GLOBL iq4kssShifts<>(SB), RODATA|NOPTR, $32

// SCORES puts in Y5 the scores w*(d1*d1 - d0*d0) of the moves of indices
// SHIFT/4 and SHIFT/4+1 of group V (lanes 0..3 and 4..7, in
// iq4kssNeighbours order), +Inf in lanes without a move; YX and YW hold
// those two indices' x and w, four lanes each. A move with a score that is
// not finite sets R10. Clobbers AX, BX, Y6, Y7.
#define SCORES(V, SHIFT, YX, YW) \
	MOVL  V, AX                                                \
	SHRL  $SHIFT, AX                                           \
	MOVL  AX, BX                                               \
	ANDL  $15, AX                                              \
	SHRL  $4, BX                                               \
	ANDL  $15, BX                                              \
	VBROADCASTSS iq4kssHalfTables_plain(R12)(AX*4), X6         \
	VBROADCASTSS iq4kssHalfTables_plain(R12)(BX*4), X7         \
	VINSERTF128 $1, X7, Y6, Y6                                 \
	SHLL  $4, AX                                               \
	SHLL  $4, BX                                               \
	VMOVUPS iq4kssHalfTables_nbVals(R12)(AX*1), X5             \
	VINSERTF128 $1, iq4kssHalfTables_nbVals(R12)(BX*1), Y5, Y5 \
	VFMSUB213PS YX, Y15, Y5                                    \
	VFMSUB213PS YX, Y15, Y6                                    \
	VMULPS Y6, Y6, Y6                                          \
	VFMSUB213PS Y6, Y5, Y5                                     \
	VMULPS YW, Y5, Y5                                          \
	VMOVUPS iq4kssHalfTables_nbValid(R12)(AX*1), X6            \
	VINSERTF128 $1, iq4kssHalfTables_nbValid(R12)(BX*1), Y6, Y6 \
	VANDNPS Y5, Y13, Y7                                        \
	VCMPPS $0x11, Y14, Y7, Y7                                  \
	VMOVMSKPS Y6, AX                                           \
	VMOVMSKPS Y7, BX                                           \
	NOTL  BX                                                   \
	ANDL  AX, BX                                               \
	ORL   BX, R10                                              \
	VBLENDVPS Y6, Y5, Y14, Y5

// PRUNE is iq4kssPrune.pruneExact on the group in V (a no-op for even
// parity): the first move with the smallest score is applied. Clobbers AX,
// BX, CX, DX, Y5, Y6, Y7, Y12.
#define PRUNE(V, SKIP) \
	POPCNTL V, AX                  \
	TESTL $1, AX                   \
	JEQ   SKIP                     \
	SCORES(V, 0, Y1, Y3)           \
	VMOVAPS Y5, Y12                \
	SCORES(V, 8, Y2, Y4)           \
	VMINPS Y5, Y12, Y6             \
	VEXTRACTF128 $1, Y6, X7        \
	VMINPS X7, X6, X6              \
	VPERMILPS $0x4e, X6, X7        \
	VMINPS X7, X6, X6              \
	VPERMILPS $0xb1, X6, X7        \
	VMINPS X7, X6, X6              \
	VBROADCASTSS X6, Y6            \
	VCMPPS $0x00, Y6, Y12, Y7      \
	VMOVMSKPS Y7, AX               \
	VCMPPS $0x00, Y6, Y5, Y7       \
	VMOVMSKPS Y7, BX               \
	SHLL  $8, BX                   \
	ORL   BX, AX                   \
	ORL   $0x10000, AX             \
	BSFL  AX, AX                   \
	MOVL  AX, CX                   \
	SHRL  $2, CX                   \
	SHLL  $2, CX                   \
	MOVL  V, BX                    \
	SHRL  CX, BX                   \
	ANDL  $15, BX                  \
	SHLL  $2, BX                   \
	ANDL  $3, AX                   \
	ADDL  AX, BX                   \
	MOVL  iq4kssHalfTables_nbIdx(R12)(BX*4), BX \
	MOVL  $15, DX                  \
	SHLL  CX, DX                   \
	NOTL  DX                       \
	ANDL  DX, V                    \
	SHLL  CX, BX                   \
	ORL   BX, V                    \
	ANDL  $0xffff, V               \
SKIP:

// BIS1 is one bisection step of NEAREST8: the count so far C doubles and
// takes the bit of Y >= its probe, row K of bis at C. Clobbers Y7.
#define BIS1(Y, C, K) \
	VPERMPS (iq4kssHalfTables_bis+32*K)(R12), C, Y7 \
	VCMPPS  $0x1d, Y7, Y, Y7 \
	VPADDD  C, C, C \
	VPSUBD  Y7, C, C

// NEAREST8 leaves in C the indices of the grid points nearest the eight
// float32 in Y (nearestTable.best: the number of the half's thresholds at
// most each value, 0 from 2^31 on, where Y9 holds 2^31). The thresholds are
// non-decreasing, so a bisection asking the same comparisons finds the
// same count (a NaN fails them all): thr[7] first, then a probe per step
// from the rows of bis. Clobbers Y7.
#define NEAREST8(Y, C) \
	VCMPPS $0x1d, (iq4kssHalfTables_thr+32*7)(R12), Y, C \
	VPSRLD $31, C, C  \
	BIS1(Y, C, 0)     \
	BIS1(Y, C, 1)     \
	BIS1(Y, C, 2)     \
	VCMPPS $0x11, Y9, Y, Y7 \
	VPAND  Y7, C, C

// WORDS8 stores the packed indices (4 bits each) of the nearest points of
// +id*x and -id*x for groups 2V and 2V+1 (xv[8V:8V+8], id in Y12) at
// 16V(SP): for each group the word of +id*x, then that of -id*x, as
// dwords. Y10 holds each lane's shift (0, 4, 8, 12 in each half).
// Clobbers Y1-Y4, Y7.
#define WORDS8(V) \
	VMULPS (32*V)(SI), Y12, Y1 \
	VXORPS Y13, Y1, Y2         \
	NEAREST8(Y1, Y3)           \
	NEAREST8(Y2, Y4)           \
	VPSLLVD Y10, Y3, Y3        \
	VPSLLVD Y10, Y4, Y4        \
	VPHADDD Y4, Y3, Y3         \
	VPHADDD Y3, Y3, Y3         \
	VMOVQ   X3, (16*V)(SP)     \
	VEXTRACTI128 $1, Y3, X3    \
	VMOVQ   X3, (16*V+8)(SP)

// SUM adds index J of group V to the sums in XQX and XQ2 (w*q*x and w*q*q
// with the hardware fused multiply-add).
#define SUM(V, J, XQX, XQ2) \
	MOVL  V, BX                             \
	SHRL  $(4*J), BX                        \
	ANDL  $15, BX                           \
	VMOVSS iq4kssHalfTables_vals(R12)(BX*4), X5 \
	VMULSS (4*J)(DI), X5, X6                \
	VFMADD231SS (4*J)(SI), X6, XQX          \
	VFMADD231SS X5, X6, XQ2

// func iq4kssTrialFMA(h *iq4kssHalfTables, xv, wv *[32]float32, id, dl float32, out *[4]float32) bool
TEXT ·iq4kssTrialFMA(SB), NOSPLIT, $64-41
	MOVQ  h+0(FP), R12
	MOVQ  xv+8(FP), SI
	MOVQ  wv+16(FP), DI
	VBROADCASTSS dl+28(FP), Y15
	MOVL  $0x7f800000, AX
	VMOVD AX, X14
	VBROADCASTSS X14, Y14 // +Inf
	MOVL  $0x80000000, AX
	VMOVD AX, X13
	VBROADCASTSS X13, Y13 // sign bit
	VBROADCASTSS id+24(FP), Y12
	MOVL  $0x4f000000, AX
	VMOVD AX, X9
	VBROADCASTSS X9, Y9   // 2^31
	VMOVDQU iq4kssShifts<>(SB), Y10
	WORDS8(0)
	WORDS8(1)
	WORDS8(2)
	WORDS8(3)
	MOVQ  SP, R9          // the words of the next group
	VXORPS X8, X8, X8     // sqxP
	VXORPS X9, X9, X9     // sq2P
	VXORPS X10, X10, X10  // sqxM
	VXORPS X11, X11, X11  // sq2M
	XORL  R10, R10        // a score was not finite
	MOVQ  $8, R13

group:
	VBROADCASTSS 0(SI), X1
	VBROADCASTSS 4(SI), X5
	VINSERTF128 $1, X5, Y1, Y1 // x0 x0 x0 x0 x1 x1 x1 x1
	VBROADCASTSS 8(SI), X2
	VBROADCASTSS 12(SI), X5
	VINSERTF128 $1, X5, Y2, Y2 // x2 .. x3
	VBROADCASTSS 0(DI), X3
	VBROADCASTSS 4(DI), X5
	VINSERTF128 $1, X5, Y3, Y3 // w0 .. w1
	VBROADCASTSS 8(DI), X4
	VBROADCASTSS 12(DI), X5
	VINSERTF128 $1, X5, Y4, Y4 // w2 .. w3
	MOVL  0(R9), R14 // vp
	MOVL  4(R9), R8  // vm
	ADDQ  $8, R9
	PRUNE(R14, prunedP)
	PRUNE(R8, prunedM)
	SUM(R14, 0, X8, X9)
	SUM(R8, 0, X10, X11)
	SUM(R14, 1, X8, X9)
	SUM(R8, 1, X10, X11)
	SUM(R14, 2, X8, X9)
	SUM(R8, 2, X10, X11)
	SUM(R14, 3, X8, X9)
	SUM(R8, 3, X10, X11)
	ADDQ  $16, SI
	ADDQ  $16, DI
	DECQ  R13
	JNE   group

	TESTL R10, R10
	JNE   fallback
	MOVQ  out+32(FP), AX
	VMOVSS X8, 0(AX)
	VMOVSS X9, 4(AX)
	VMOVSS X10, 8(AX)
	VMOVSS X11, 12(AX)
	MOVB  $1, ret+40(FP)
	VZEROUPPER
	RET

fallback:
	MOVB  $0, ret+40(FP)
	VZEROUPPER
	RET
