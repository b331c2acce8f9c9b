//go:build amd64 && !purego

#include "textflag.h"

DATA lvConsts<>+0(SB)/4, $1.0
DATA lvConsts<>+4(SB)/4, $0.5
DATA lvConsts<>+8(SB)/4, $12582912.0
DATA lvConsts<>+12(SB)/4, $0x007fffff
DATA lvConsts<>+16(SB)/4, $0x00400000
GLOBL lvConsts<>(SB), RODATA|NOPTR, $20

// LEVELS_SETUP loads the arguments and constants of levelsAVX2 and
// levelsIQ2STrialAVX2 (same frame).
#define LEVELS_SETUP \
	MOVQ         L+0(FP), DI \
	VBROADCASTSS id+8(FP), Y15 \
	MOVQ         x+16(FP), SI \
	MOVQ         n+24(FP), CX \
	VPBROADCASTD maxL+32(FP), Y14 \
	VBROADCASTSS lvConsts<>+0(SB), Y13 \
	VBROADCASTSS lvConsts<>+4(SB), Y12 \
	VBROADCASTSS lvConsts<>+8(SB), Y11 \
	VPBROADCASTD lvConsts<>+12(SB), Y10 \
	VPBROADCASTD lvConsts<>+16(SB), Y9 \
	VPXOR        Y8, Y8, Y8 \
	SHRQ         $3, CX

// LEVELS_FINISH turns Y0 = id*x - 1 into levels and stores 8 bytes at DI.
#define LEVELS_FINISH \
	VMULPS       Y12, Y0, Y0 \
	VADDPS       Y11, Y0, Y0 \
	VPAND        Y10, Y0, Y0 \
	VPSUBD       Y9, Y0, Y0 \
	VPMAXSD      Y8, Y0, Y0 \
	VPMINSD      Y14, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPACKSSDW    X1, X0, X0 \
	VPACKSSWB    X0, X0, X0 \
	VMOVQ        X0, (DI) \
	ADDQ         $32, SI \
	ADDQ         $8, DI

// func levelsAVX2(L *int8, id float32, x *float32, n, maxL int)
// L[i] = clamp(nearest(0.5*fma(id, x[i], -1)), 0, maxL), n a multiple of 8;
// nearest is the reference's magic-number rounding, bit for bit.
TEXT ·levelsAVX2(SB), NOSPLIT, $0-40
	LEVELS_SETUP
	JZ done

loop:
	VMOVAPS     Y13, Y0
	VFMSUB231PS (SI), Y15, Y0 // id*x - 1
	LEVELS_FINISH
	DECQ        CX
	JNZ         loop

done:
	VZEROUPPER
	RET

// func levelsIQ2STrialAVX2(L *int8, id float32, x *float32, n, maxL int)
// levelsOfIQ2STrial: x[0..7] with id*x rounded before 1 is subtracted
// (levelOfUnfused), x[8..15] as levelsAVX2 (n is 16), in one call.
TEXT ·levelsIQ2STrialAVX2(SB), NOSPLIT, $0-40
	LEVELS_SETUP
	VMULPS      (SI), Y15, Y0
	VSUBPS      Y13, Y0, Y0
	LEVELS_FINISH
	VMOVAPS     Y13, Y0
	VFMSUB231PS (SI), Y15, Y0
	LEVELS_FINISH
	VZEROUPPER
	RET

// func sumsOddFMA(weight, xval *float32, L *int8, n int) (sumqx, sumq2 float32)
// Sequential sums over i of fma(w*x, q, sumqx) and fma(w*q, q, sumq2) with
// q = 2L+1 and both products rounded.
TEXT ·sumsOddFMA(SB), NOSPLIT, $0-40
	MOVQ   weight+0(FP), SI
	MOVQ   xval+8(FP), DI
	MOVQ   L+16(FP), BX
	MOVQ   n+24(FP), CX
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	XORQ   DX, DX
	TESTQ  CX, CX
	JLE    sdone

sloop:
	MOVBQSX     (BX)(DX*1), AX
	LEAQ        1(AX)(AX*1), AX
	VCVTSI2SSQ  AX, X2, X2
	VMOVSS      (SI)(DX*4), X3
	VMULSS      (DI)(DX*4), X3, X4 // w*x
	VMULSS      X2, X3, X5         // w*q
	VFMADD231SS X2, X4, X0
	VFMADD231SS X2, X5, X1
	INCQ        DX
	CMPQ        DX, CX
	JLT         sloop

sdone:
	VMOVSS X0, sumqx+32(FP)
	VMOVSS X1, sumq2+36(FP)
	RET

DATA rankIota<>+0(SB)/8, $0x0000000100000000
DATA rankIota<>+8(SB)/8, $0x0000000300000002
DATA rankIota<>+16(SB)/8, $0x0000000500000004
DATA rankIota<>+24(SB)/8, $0x0000000700000006
GLOBL rankIota<>(SB), RODATA|NOPTR, $32

DATA rankEight<>+0(SB)/4, $8
GLOBL rankEight<>(SB), RODATA|NOPTR, $4

// func sortRanksAVX2(x *float32, n int, idx *int)
// idx[rank(i)] = i with rank(i) = #{j: x[j] < x[i]} + #{j < i: x[j] == x[i]},
// the stable sorted order of finite values; n is a multiple of 8. The
// counts are taken per lane (a true compare is -1) and summed at the end.
TEXT ·sortRanksAVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), DX
	MOVQ         idx+16(FP), DI
	VPBROADCASTD rankEight<>(SB), Y8
	XORQ         BX, BX

rkI:
	VBROADCASTSS (SI)(BX*4), Y0
	VMOVQ         BX, X5
	VPBROADCASTD X5, Y5 // i
	VMOVDQU      rankIota<>(SB), Y6 // j of each lane
	VPXOR        Y3, Y3, Y3
	XORQ         CX, CX

rkChunk:
	VMOVUPS  (SI)(CX*4), Y1
	VCMPPS   $0x11, Y0, Y1, Y2 // x[j] < x[i]
	VPSUBD   Y2, Y3, Y3
	VCMPPS   $0x00, Y0, Y1, Y2 // x[j] == x[i]
	VPCMPGTD Y6, Y5, Y7        // j < i
	VPAND    Y7, Y2, Y2
	VPSUBD   Y2, Y3, Y3
	VPADDD   Y8, Y6, Y6
	ADDQ     $8, CX
	CMPQ     CX, DX
	JLT      rkChunk

	VEXTRACTI128 $1, Y3, X4
	VPADDD       X4, X3, X3
	VPSHUFD      $0x4e, X3, X4
	VPADDD       X4, X3, X3
	VPSHUFD      $0xb1, X3, X4
	VPADDD       X4, X3, X3
	VMOVD        X3, AX
	MOVQ         BX, (DI)(AX*8)
	INCQ         BX
	CMPQ         BX, DX
	JLT          rkI
	VZEROUPPER
	RET

// SUMS_ODD_LANES adds weight j of the eight trials whose levels are the
// bytes at OFF(BX) (one trial per lane): q = 2L+1, QX += (w*x)*q and
// Q2 += (w*q)*q, w in Y14, w*x in Y13, the integer 1 in Y12.
#define SUMS_ODD_LANES(OFF, QX, Q2) \
	VPMOVZXBD   OFF(BX), Y0 \
	VPADDD      Y0, Y0, Y0  \
	VPADDD      Y12, Y0, Y0 \
	VCVTDQ2PS   Y0, Y0      \
	VMULPS      Y0, Y14, Y1 \
	VFMADD231PS Y0, Y13, QX \
	VFMADD231PS Y0, Y1, Q2

// TRANSPOSE8x8 moves the 8x8 bytes at R11 (rows 32 bytes apart) to R10
// transposed (also 32 bytes apart): unpacks of bytes, words, then dwords.
#define TRANSPOSE8x8 \
	VMOVQ      0(R11), X0   \
	VMOVQ      32(R11), X1  \
	VMOVQ      64(R11), X2  \
	VMOVQ      96(R11), X3  \
	VMOVQ      128(R11), X4 \
	VMOVQ      160(R11), X5 \
	VMOVQ      192(R11), X6 \
	VMOVQ      224(R11), X7 \
	VPUNPCKLBW X1, X0, X0   \
	VPUNPCKLBW X3, X2, X2   \
	VPUNPCKLBW X5, X4, X4   \
	VPUNPCKLBW X7, X6, X6   \
	VPUNPCKHWD X2, X0, X1   \
	VPUNPCKLWD X2, X0, X0   \
	VPUNPCKHWD X6, X4, X5   \
	VPUNPCKLWD X6, X4, X4   \
	VPUNPCKHDQ X4, X0, X2   \
	VPUNPCKLDQ X4, X0, X0   \
	VPUNPCKHDQ X5, X1, X3   \
	VPUNPCKLDQ X5, X1, X1   \
	VMOVQ      X0, 0(R10)   \
	VMOVHPS    X0, 32(R10)  \
	VMOVQ      X2, 64(R10)  \
	VMOVHPS    X2, 96(R10)  \
	VMOVQ      X1, 128(R10) \
	VMOVHPS    X1, 160(R10) \
	VMOVQ      X3, 192(R10) \
	VMOVHPS    X3, 224(R10)

// func sumsOddTrialsAVX2(weight, xval *float32, rows, cols *[32][32]int8, sums *[64]float32)
// sumsOdd of 32 level vectors at once: rows[t] holds the levels of trial t,
// cols receives them transposed (cols[j][t], scratch); sums[t] and
// sums[32+t] receive trial t's sumqx and sumq2, each a sequential sum over j
// in its own lane.
TEXT ·sumsOddTrialsAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+16(FP), R9
	MOVQ cols+24(FP), R12
	XORQ AX, AX

trBlockT:
	XORQ DX, DX

trBlockJ:
	MOVQ AX, R11
	SHLQ $8, R11
	ADDQ R9, R11
	LEAQ (R11)(DX*8), R11 // rows + 256*tb + 8*jb
	MOVQ DX, R10
	SHLQ $8, R10
	ADDQ R12, R10
	LEAQ (R10)(AX*8), R10 // cols + 256*jb + 8*tb
	TRANSPOSE8x8
	INCQ DX
	CMPQ DX, $4
	JLT  trBlockJ
	INCQ AX
	CMPQ AX, $4
	JLT  trBlockT

	MOVQ         weight+0(FP), SI
	MOVQ         xval+8(FP), DI
	MOVQ         cols+24(FP), BX
	MOVQ         sums+32(FP), R8
	MOVL         $1, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	VXORPS       Y7, Y7, Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	VXORPS       Y10, Y10, Y10
	VXORPS       Y11, Y11, Y11
	XORQ         CX, CX

toLoop:
	VMOVSS       (SI)(CX*4), X14
	VMULSS       (DI)(CX*4), X14, X13 // w*x, rounded
	VBROADCASTSS X14, Y14
	VBROADCASTSS X13, Y13
	SUMS_ODD_LANES(0, Y4, Y8)
	SUMS_ODD_LANES(8, Y5, Y9)
	SUMS_ODD_LANES(16, Y6, Y10)
	SUMS_ODD_LANES(24, Y7, Y11)
	ADDQ         $32, BX
	INCQ         CX
	CMPQ         CX, $32
	JLT          toLoop

	VMOVUPS Y4, 0(R8)
	VMOVUPS Y5, 32(R8)
	VMOVUPS Y6, 64(R8)
	VMOVUPS Y7, 96(R8)
	VMOVUPS Y8, 128(R8)
	VMOVUPS Y9, 160(R8)
	VMOVUPS Y10, 192(R8)
	VMOVUPS Y11, 224(R8)
	VZEROUPPER
	RET
