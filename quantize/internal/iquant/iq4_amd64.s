//go:build amd64 && !purego

#include "go_asm.h"
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

	VMOVSS X0, sumqx+32(FP)
	VMOVSS X1, sumq2+36(FP)
	RET

// IQ4_TRIAL: for the eight trial scales at OFF(BX), x = id*v (v in Y14,
// weight in Y15), the level by a binary search over the thresholds, q its
// value, and QX += (w*q)*v, Q2 += (w*q)*q with the product w*q rounded.
#define IQ4_TRIAL(OFF, QX, Q2) \
	VMULPS      OFF(BX), Y14, Y0       \
	VCMPPS      $13, iq4TrialTables_t8(DX), Y0, Y1 \
	VANDPS      iq4TrialTables_c8(DX), Y1, Y2     \
	VPSRLD      $1, Y2, Y3             \
	VPERMPS     iq4TrialTables_tab4(DX), Y3, Y3   \
	VCMPPS      $13, Y3, Y0, Y1        \
	VANDPS      iq4TrialTables_c4(DX), Y1, Y1     \
	VORPS       Y1, Y2, Y2             \
	VPSRLD      $1, Y2, Y3             \
	VPERMPS     iq4TrialTables_tab2(DX), Y3, Y3   \
	VCMPPS      $13, Y3, Y0, Y1        \
	VANDPS      iq4TrialTables_c2(DX), Y1, Y1     \
	VORPS       Y1, Y2, Y2             \
	VPSRLD      $1, Y2, Y3             \
	VPERMPS     iq4TrialTables_tab1(DX), Y3, Y3   \
	VCMPPS      $13, Y3, Y0, Y1        \
	VANDPS      iq4TrialTables_c1(DX), Y1, Y1     \
	VORPS       Y1, Y2, Y2             \
	VPSLLD      $28, Y2, Y1            \
	VPERMPS     iq4TrialTables_vlo(DX), Y2, Y3    \
	VPERMPS     iq4TrialTables_vhi(DX), Y2, Y4    \
	VBLENDVPS   Y1, Y4, Y3, Y3         \
	VMULPS      Y3, Y15, Y4            \
	VFMADD231PS Y14, Y4, QX            \
	VFMADD231PS Y3, Y4, Q2

// func iq4TrialsAVX2(xb, weight *float32, ids *[32]float32, tab *iq4TrialTables, sums *[64]float32)
// sums[i] = sum_j fma-chain (w*q)*x, sums[32+i] = (w*q)*q over the 32
// weights in order, q the level value of ids[i]*x[j].
TEXT ·iq4TrialsAVX2(SB), NOSPLIT, $0-40
	MOVQ   xb+0(FP), SI
	MOVQ   weight+8(FP), DI
	MOVQ   ids+16(FP), BX
	MOVQ   tab+24(FP), DX
	MOVQ   sums+32(FP), R8
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	XORQ   CX, CX

trialLoop:
	VBROADCASTSS (SI)(CX*4), Y14
	VBROADCASTSS (DI)(CX*4), Y15
	IQ4_TRIAL(0, Y6, Y10)
	IQ4_TRIAL(32, Y7, Y11)
	IQ4_TRIAL(64, Y8, Y12)
	IQ4_TRIAL(96, Y9, Y13)
	INCQ         CX
	CMPQ         CX, $32
	JLT          trialLoop

	VMOVUPS Y6, 0(R8)
	VMOVUPS Y7, 32(R8)
	VMOVUPS Y8, 64(R8)
	VMOVUPS Y9, 96(R8)
	VMOVUPS Y10, 128(R8)
	VMOVUPS Y11, 160(R8)
	VMOVUPS Y12, 192(R8)
	VMOVUPS Y13, 224(R8)
	VZEROUPPER
	RET

// IQ4_DESCENT: the gradient steps of weights OFF..OFF+7 (byte offset
// OFF4 = 4*OFF) into STEP, +Inf where no move is allowed, and the g > 0
// bits into R8 at bit OFF. d in Y15, -d in Y14, zero in Y13.
#define IQ4_DESCENT(OFF, OFF4, STEP) \
	VPMOVZXBD   OFF(BX), Y0            \
	VPSLLD      $28, Y0, Y3            \
	VPERMPS     iq4TrialTables_vlo(DX), Y0, Y1    \
	VPERMPS     iq4TrialTables_vhi(DX), Y0, Y2    \
	VBLENDVPS   Y3, Y2, Y1, Y1         \
	VMOVUPS     OFF4(SI), Y2           \
	VFMADD231PS Y14, Y1, Y2            \
	VMULPS      OFF4(DI), Y15, Y4      \
	VMULPS      Y2, Y4, Y4             \
	VCMPPS      $14, Y13, Y4, Y5       \
	VCMPPS      $1, Y13, Y4, Y6        \
	VPCMPGTD    Y13, Y0, Y7            \
	VPAND       Y7, Y6, Y6             \
	VMOVDQU     iq4TrialTables_c15(DX), Y7        \
	VPCMPGTD    Y0, Y7, Y7             \
	VPAND       Y5, Y7, Y7             \
	VPOR        Y7, Y6, Y6             \
	VPERMPS     iq4TrialTables_uplo(DX), Y0, Y1   \
	VPERMPS     iq4TrialTables_uphi(DX), Y0, Y2   \
	VBLENDVPS   Y3, Y2, Y1, Y1         \
	VPERMPS     iq4TrialTables_dnlo(DX), Y0, Y2   \
	VPERMPS     iq4TrialTables_dnhi(DX), Y0, Y8   \
	VBLENDVPS   Y3, Y8, Y2, Y2         \
	VBLENDVPS   Y5, Y1, Y2, Y1         \
	VDIVPS      Y4, Y1, Y1             \
	VMOVUPS     iq4TrialTables_inf(DX), STEP      \
	VBLENDVPS   Y6, Y1, STEP, STEP     \
	VMOVMSKPS   Y5, AX                 \
	SHLQ        $OFF, AX               \
	ORQ         AX, R8

// func iq4DescentStepAVX2(xb, weight *float32, L *uint8, d float32, tab *iq4TrialTables) (j, dir int)
// One coordinate-descent step of quantizeIQ4NLImpl over 32 weights: the
// first weight with the smallest step (delta level value / g, with
// g = (d*w)*fma(-d, q, x)) and its direction, or j = -1.
TEXT ·iq4DescentStepAVX2(SB), NOSPLIT, $0-56
	MOVQ         xb+0(FP), SI
	MOVQ         weight+8(FP), DI
	MOVQ         L+16(FP), BX
	VBROADCASTSS d+24(FP), Y15
	MOVQ         tab+32(FP), DX
	MOVL         $0x80000000, AX
	VMOVD        AX, X0
	VPBROADCASTD X0, Y0
	VXORPS       Y0, Y15, Y14 // -d
	VXORPS       Y13, Y13, Y13
	XORQ         R8, R8
	IQ4_DESCENT(0, 0, Y9)
	IQ4_DESCENT(8, 32, Y10)
	IQ4_DESCENT(16, 64, Y11)
	IQ4_DESCENT(24, 96, Y12)

	VMINPS       Y10, Y9, Y0
	VMINPS       Y12, Y11, Y1
	VMINPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMINPS       X1, X0, X0
	VPERMILPS    $0x4E, X0, X1
	VMINPS       X1, X0, X0
	VPERMILPS    $0xB1, X0, X1
	VMINPS       X1, X0, X0 // the smallest step in every lane
	VMOVSS       iq4TrialTables_inf(DX), X2
	VUCOMISS     X2, X0
	JEQ          noMove
	VINSERTF128  $1, X0, Y0, Y0
	VCMPPS       $0, Y0, Y9, Y1
	VMOVMSKPS    Y1, AX
	VCMPPS       $0, Y0, Y10, Y1
	VMOVMSKPS    Y1, CX
	SHLQ         $8, CX
	ORQ          CX, AX
	VCMPPS       $0, Y0, Y11, Y1
	VMOVMSKPS    Y1, CX
	SHLQ         $16, CX
	ORQ          CX, AX
	VCMPPS       $0, Y0, Y12, Y1
	VMOVMSKPS    Y1, CX
	SHLQ         $24, CX
	ORQ          CX, AX
	BSFQ         AX, AX // the first weight with that step
	MOVQ         AX, CX
	SHRQ         CX, R8
	ANDQ         $1, R8
	LEAQ         -1(R8)(R8*1), R8 // g > 0: up (+1), else down (-1)
	MOVQ         AX, j+40(FP)
	MOVQ         R8, dir+48(FP)
	VZEROUPPER
	RET

noMove:
	MOVQ $-1, j+40(FP)
	MOVQ $0, dir+48(FP)
	VZEROUPPER
	RET
