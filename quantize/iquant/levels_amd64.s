//go:build amd64 && !purego

#include "textflag.h"

DATA lvConsts<>+0(SB)/4, $1.0
DATA lvConsts<>+4(SB)/4, $0.5
DATA lvConsts<>+8(SB)/4, $12582912.0
DATA lvConsts<>+12(SB)/4, $0x007fffff
DATA lvConsts<>+16(SB)/4, $0x00400000
GLOBL lvConsts<>(SB), RODATA|NOPTR, $20

// LEVELS_SETUP loads the arguments and constants of levelsAVX2 and
// levelsUnfusedAVX2 (same frame).
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

// func levelsUnfusedAVX2(L *int8, id float32, x *float32, n, maxL int)
// As levelsAVX2 with id*x rounded before 1 is subtracted.
TEXT ·levelsUnfusedAVX2(SB), NOSPLIT, $0-40
	LEVELS_SETUP
	JZ udone

uloop:
	VMULPS (SI), Y15, Y0
	VSUBPS Y13, Y0, Y0
	LEVELS_FINISH
	DECQ   CX
	JNZ    uloop

udone:
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
	MOVQ         BX, X5
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
