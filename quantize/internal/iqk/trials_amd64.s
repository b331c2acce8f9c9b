//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// CMP2(K) counts threshold K for the plus (Y3) and minus (Y4) points: the
// compare mask (-1 where x >= t) is subtracted from the counts Y5 and Y6.
#define CMP2(K) \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y3, Y7 \
	VPSUBD Y7, Y5, Y5 \
	VCMPPS $13, (trialTables_th+32*K)(R8), Y4, Y8 \
	VPSUBD Y8, Y6, Y6

#define CMP7 CMP2(0) CMP2(1) CMP2(2) CMP2(3) CMP2(4) CMP2(5) CMP2(6)
#define CMP15 CMP7 CMP2(7) CMP2(8) CMP2(9) CMP2(10) CMP2(11) CMP2(12) CMP2(13) CMP2(14)
#define CMP31 CMP15 CMP2(15) CMP2(16) CMP2(17) CMP2(18) CMP2(19) CMP2(20) CMP2(21) CMP2(22) CMP2(23) CMP2(24) CMP2(25) CMP2(26) CMP2(27) CMP2(28) CMP2(29) CMP2(30)

// LOOK8/16/32 put in Q the grid values of the indices in IDX. Clobber Y7,
// Y8 (and LOOK32 Y3, Y4).
#define LOOK8(IDX, Q) \
	VPERMPS trialTables_vals(R8), IDX, Q

#define LOOK16(IDX, Q) \
	VPERMPS trialTables_vals(R8), IDX, Q \
	VPERMPS (trialTables_vals+32)(R8), IDX, Y7 \
	VPSLLD  $28, IDX, Y8 \
	VBLENDVPS Y8, Y7, Q, Q

#define LOOK32(IDX, Q) \
	VPSLLD  $28, IDX, Y8 \
	VPERMPS trialTables_vals(R8), IDX, Q \
	VPERMPS (trialTables_vals+32)(R8), IDX, Y7 \
	VBLENDVPS Y8, Y7, Q, Q \
	VPERMPS (trialTables_vals+64)(R8), IDX, Y3 \
	VPERMPS (trialTables_vals+96)(R8), IDX, Y4 \
	VBLENDVPS Y8, Y4, Y3, Y3 \
	VPSLLD  $27, IDX, Y8 \
	VBLENDVPS Y8, Y3, Q, Q

// TRIALS is the whole function for COUNT thresholds and lookup LOOK: per
// weight, id*x and -id*x in every lane, their grid points by counting, and
// the four sums with the hardware fused multiply-add, in weight order.
#define TRIALS(COUNT, LOOK) \
	MOVQ  tt+0(FP), R8 \
	MOVQ  x+8(FP), SI \
	MOVQ  w+16(FP), DI \
	MOVQ  n+24(FP), CX \
	MOVQ  ids+32(FP), AX \
	VMOVUPS (AX), Y0 \
	MOVL  $0x80000000, AX \
	VMOVD AX, X15 \
	VBROADCASTSS X15, Y15 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
loop: \
	VBROADCASTSS (SI), Y1 \
	VBROADCASTSS (DI), Y2 \
	VMULPS Y1, Y0, Y3 \
	VXORPS Y15, Y3, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	COUNT \
	LOOK(Y5, Y13) \
	VMULPS Y13, Y2, Y7 \
	VFMADD231PS Y1, Y7, Y9 \
	VFMADD231PS Y13, Y7, Y10 \
	LOOK(Y6, Y14) \
	VMULPS Y14, Y2, Y7 \
	VFMADD231PS Y1, Y7, Y11 \
	VFMADD231PS Y14, Y7, Y12 \
	ADDQ $4, SI \
	ADDQ $4, DI \
	DECQ CX \
	JNE  loop \
	MOVQ out+40(FP), AX \
	VMOVUPS Y9, 0(AX) \
	VMOVUPS Y10, 32(AX) \
	VMOVUPS Y11, 64(AX) \
	VMOVUPS Y12, 96(AX) \
	VZEROUPPER \
	RET

// func nlTrials8AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials8AVX2(SB), NOSPLIT, $0-48
	TRIALS(CMP7, LOOK8)

// func nlTrials16AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials16AVX2(SB), NOSPLIT, $0-48
	TRIALS(CMP15, LOOK16)

// func nlTrials32AVX2(tt *trialTables, x, w *float32, n int, ids *[8]float32, out *[4][8]float32)
TEXT ·nlTrials32AVX2(SB), NOSPLIT, $0-48
	TRIALS(CMP31, LOOK32)
