//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// CNT(K) counts threshold K of the plain iq3 grid for id*x1 (Y1) and id*x2
// (Y2) into Y12 and Y13 (the compare mask, -1 where x >= t, is subtracted).
#define CNT(K) \
	VCMPPS $13, (iq2klLaneTables_th+32*K)(R8), Y1, Y14 \
	VPSUBD Y14, Y12, Y12 \
	VCMPPS $13, (iq2klLaneTables_th+32*K)(R8), Y2, Y15 \
	VPSUBD Y15, Y13, Y13

// LOOK32 puts in Q entry IDX&31 of the 32-float table at TAB(R8), lane by
// lane; T, U and M are clobbered.
#define LOOK32(TAB, IDX, Q, T, U, M) \
	VPSLLD  $28, IDX, M \
	VPERMPS (TAB)(R8), IDX, Q \
	VPERMPS (TAB+32)(R8), IDX, T \
	VBLENDVPS M, T, Q, Q \
	VPERMPS (TAB+64)(R8), IDX, T \
	VPERMPS (TAB+96)(R8), IDX, U \
	VBLENDVPS M, U, T, T \
	VPSLLD  $27, IDX, M \
	VBLENDVPS M, T, Q, Q

// NB(K) scores the K-th neighbour of each lane's list (Y5) as iq2klBest
// does, w1*d1*d1 + (w2*d2)*d2 fused, and keeps it (score in Y7, point in
// Y8, Y9) where strictly smaller than the best so far.
#define NB(K) \
	LOOK32(iq2klLaneTables_nb1+128*K, Y5, Y12, Y13, Y14, Y15) \
	LOOK32(iq2klLaneTables_nb2+128*K, Y5, Y13, Y14, Y15, Y6) \
	VSUBPS Y1, Y12, Y14 \
	VSUBPS Y2, Y13, Y15 \
	VMULPS Y15, Y4, Y6 \
	VMULPS Y15, Y6, Y6 \
	VMULPS Y14, Y3, Y15 \
	VFMADD231PS Y14, Y15, Y6 \
	VCMPPS $0x11, Y7, Y6, Y14 \
	VBLENDVPS Y14, Y6, Y7, Y7 \
	VBLENDVPS Y14, Y12, Y8, Y8 \
	VBLENDVPS Y14, Y13, Y9, Y9

// func iq2klLanesAVX2(t *iq2klLaneTables, x, w *float32, npairs int, ids *[8]float32, out *[2][8]float32) bool
TEXT ·iq2klLanesAVX2(SB), NOSPLIT, $0-49
	MOVQ  t+0(FP), R8
	MOVQ  x+8(FP), SI
	MOVQ  w+16(FP), DI
	MOVQ  npairs+24(FP), CX
	MOVQ  ids+32(FP), AX
	VMOVUPS (AX), Y0
	VXORPS Y10, Y10, Y10 // sumqx
	VXORPS Y11, Y11, Y11 // sumq2
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9

pair:
	VBROADCASTSS (SI), Y12
	VMULPS Y12, Y0, Y1 // sx1
	VBROADCASTSS 4(SI), Y13
	VMULPS Y13, Y0, Y2 // sx2
	VBROADCASTSS (DI), Y3
	VBROADCASTSS 4(DI), Y4
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	CNT(0)
	CNT(1)
	CNT(2)
	CNT(3)
	CNT(4)
	CNT(5)
	CNT(6)
	VPSLLD $3, Y12, Y12
	VPADDD Y13, Y12, Y12 // 8*i1 + i2
	VMOVDQU iq2klLaneTables_ones(R8), Y14
	VPXOR Y5, Y5, Y5
	VPGATHERDD Y14, iq2klLaneTables_index(R8)(Y12*4), Y5
	VPXOR iq2klLaneTables_ones(R8), Y5, Y5 // n = ^e: sign set on the grid
	VMOVMSKPS Y5, AX
	CMPL  AX, $0xff
	JEQ   ongrid
	VMOVUPS iq2klLaneTables_maxf(R8), Y7
	NB(0)
	NB(1)
	NB(2)
	NB(3)
	NB(4)
	NB(5)
	NB(6)
	NB(7)
	VCMPPS $0x11, iq2klLaneTables_maxf(R8), Y7, Y6 // a score below MaxFloat32
	VMOVMSKPS Y6, BX
	ORL   BX, AX
	CMPL  AX, $0xff
	JNE   fail

ongrid:
	VPXOR iq2klLaneTables_ones(R8), Y5, Y6 // e
	LOOK32(iq2klLaneTables_g1, Y6, Y12, Y13, Y14, Y15)
	VBLENDVPS Y5, Y12, Y8, Y8 // q1
	LOOK32(iq2klLaneTables_g2, Y6, Y12, Y13, Y14, Y15)
	VBLENDVPS Y5, Y12, Y9, Y9 // q2
	VMULPS Y9, Y4, Y12 // w2*q2
	VBROADCASTSS 4(SI), Y13
	VMULPS Y13, Y12, Y13
	VMULPS Y8, Y3, Y14 // w1*q1
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y15, Y14, Y13
	VADDPS Y13, Y10, Y10
	VMULPS Y9, Y12, Y13
	VFMADD231PS Y8, Y14, Y13
	VADDPS Y13, Y11, Y11
	ADDQ  $8, SI
	ADDQ  $8, DI
	DECQ  CX
	JNE   pair

	MOVQ  out+40(FP), AX
	VMOVUPS Y10, 0(AX)
	VMOVUPS Y11, 32(AX)
	MOVB  $1, ret+48(FP)
	VZEROUPPER
	RET

fail:
	MOVB  $0, ret+48(FP)
	VZEROUPPER
	RET
