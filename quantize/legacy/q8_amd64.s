//go:build amd64 && !purego

#include "textflag.h"

// The dword order that undoes the lane interleaving of the two packs (the
// reference's _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)).
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// func absMaxAVX2(x *float32, n int) float32
// The largest magnitude of n values (n a multiple of 32), with VMAXPS.
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7fffffff, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	SHRQ         $5, CX
	JZ           reduce

loop:
	VANDPS (SI), Y8, Y4
	VANDPS 32(SI), Y8, Y5
	VANDPS 64(SI), Y8, Y6
	VANDPS 96(SI), Y8, Y7
	VMAXPS Y4, Y0, Y0
	VMAXPS Y5, Y1, Y1
	VMAXPS Y6, Y2, Y2
	VMAXPS Y7, Y3, Y3
	ADDQ   $128, SI
	DECQ   CX
	JNZ    loop

reduce:
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET

// func quantizeQ8AVX2(dst *byte, src *float32, n int, mul float32) int32
// The reference's AVX2 q8 rounding for n values (n a multiple of 32):
// VMULPS by mul, VROUNDPS to nearest even, VCVTPS2DQ, saturating packs to
// int8. Returns the int32 sum of the converted values.
TEXT ·quantizeQ8AVX2(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS mul+24(FP), Y8
	VMOVDQU      q8perm<>(SB), Y9
	VPXOR        Y10, Y10, Y10
	SHRQ         $5, CX
	JZ           sum

loop:
	VMULPS    (SI), Y8, Y0
	VMULPS    32(SI), Y8, Y1
	VMULPS    64(SI), Y8, Y2
	VMULPS    96(SI), Y8, Y3
	VROUNDPS  $0, Y0, Y0
	VROUNDPS  $0, Y1, Y1
	VROUNDPS  $0, Y2, Y2
	VROUNDPS  $0, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPADDD    Y1, Y0, Y4
	VPADDD    Y3, Y2, Y5
	VPADDD    Y5, Y4, Y4
	VPADDD    Y4, Y10, Y10
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y9, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $128, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

sum:
	VEXTRACTI128 $1, Y10, X1
	VPADDD       X1, X10, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VZEROUPPER
	MOVL         X0, AX
	MOVL         AX, ret+32(FP)
	RET

// func quantizeQ8WordsAVX2(dst *byte, src *float32, n int, mul float32) int32
// quantizeQ8AVX2 storing the quants of each group of 4 values j as one
// 4-byte word at dst + 32*j: the layout of row k of the 8-row interleaved
// q8_KV_r8 and q8_k_r8 when dst points at that row's first word.
TEXT ·quantizeQ8WordsAVX2(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS mul+24(FP), Y8
	VMOVDQU      q8perm<>(SB), Y9
	VPXOR        Y10, Y10, Y10
	SHRQ         $5, CX
	JZ           sum

loop:
	VMULPS       (SI), Y8, Y0
	VMULPS       32(SI), Y8, Y1
	VMULPS       64(SI), Y8, Y2
	VMULPS       96(SI), Y8, Y3
	VROUNDPS     $0, Y0, Y0
	VROUNDPS     $0, Y1, Y1
	VROUNDPS     $0, Y2, Y2
	VROUNDPS     $0, Y3, Y3
	VCVTPS2DQ    Y0, Y0
	VCVTPS2DQ    Y1, Y1
	VCVTPS2DQ    Y2, Y2
	VCVTPS2DQ    Y3, Y3
	VPADDD       Y1, Y0, Y4
	VPADDD       Y3, Y2, Y5
	VPADDD       Y5, Y4, Y4
	VPADDD       Y4, Y10, Y10
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VPERMD       Y0, Y9, Y0
	VEXTRACTI128 $1, Y0, X1
	VMOVD        X0, (DI)
	VPEXTRD      $1, X0, 32(DI)
	VPEXTRD      $2, X0, 64(DI)
	VPEXTRD      $3, X0, 96(DI)
	VMOVD        X1, 128(DI)
	VPEXTRD      $1, X1, 160(DI)
	VPEXTRD      $2, X1, 192(DI)
	VPEXTRD      $3, X1, 224(DI)
	ADDQ         $128, SI
	ADDQ         $256, DI
	DECQ         CX
	JNZ          loop

sum:
	VEXTRACTI128 $1, Y10, X1
	VPADDD       X1, X10, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VZEROUPPER
	MOVL         X0, AX
	MOVL         AX, ret+32(FP)
	RET

// func quantizeQ8_0AVX2(dst *byte, src *float32, nb int)
// quantize_row_q8_0_ref for nb blocks of 32 values: d = amax/127 as a half
// (VCVTPS2PH, nearest even), quants roundf(x * (1/d)) (0 when d is 0). The
// rounding half away from zero is trunc(y) plus ±1 where |y - trunc(y)| >=
// 0.5, all exact. Only valid where d is a normal float (the products then
// stay within ±127.5): the caller redoes blocks whose half scale is 0.
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	TESTQ CX, CX
	JZ   done

	MOVL         $0x7fffffff, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8            // magnitude mask
	MOVL         $0x80000000, AX
	MOVQ         AX, X9
	VPBROADCASTD X9, Y9            // sign mask
	VMOVDQU      q8perm<>(SB), Y10
	MOVL         $0x3f000000, AX
	MOVQ         AX, X11
	VPBROADCASTD X11, Y11          // 0.5
	MOVL         $0x3f800000, AX
	MOVQ         AX, X12
	VPBROADCASTD X12, Y12          // 1.0
	MOVL         $0x42fe0000, AX
	MOVQ         AX, X13           // 127.0

loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3

	VANDPS       Y8, Y0, Y4
	VANDPS       Y8, Y1, Y5
	VMAXPS       Y5, Y4, Y4
	VANDPS       Y8, Y2, Y5
	VMAXPS       Y5, Y4, Y4
	VANDPS       Y8, Y3, Y5
	VMAXPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VMAXPS       X5, X4, X4        // amax

	VDIVSS    X13, X4, X4          // d = amax / 127
	VCVTPS2PH $0, X4, X5
	MOVQ      X5, AX
	MOVW      AX, (DI)
	VDIVSS    X4, X12, X6          // 1/d
	VXORPS    X7, X7, X7
	VCMPSS    $4, X7, X4, X7       // d != 0
	VANDPS    X7, X6, X6
	VBROADCASTSS X6, Y6            // id

	VMULPS     Y6, Y0, Y0
	VROUNDPS   $3, Y0, Y4
	VSUBPS     Y4, Y0, Y5
	VANDPS     Y8, Y5, Y5
	VCMPPS     $13, Y11, Y5, Y5
	VANDPS     Y9, Y0, Y7
	VORPS      Y12, Y7, Y7
	VANDPS     Y5, Y7, Y7
	VADDPS     Y7, Y4, Y0
	VCVTTPS2DQ Y0, Y0

	VMULPS     Y6, Y1, Y1
	VROUNDPS   $3, Y1, Y4
	VSUBPS     Y4, Y1, Y5
	VANDPS     Y8, Y5, Y5
	VCMPPS     $13, Y11, Y5, Y5
	VANDPS     Y9, Y1, Y7
	VORPS      Y12, Y7, Y7
	VANDPS     Y5, Y7, Y7
	VADDPS     Y7, Y4, Y1
	VCVTTPS2DQ Y1, Y1

	VMULPS     Y6, Y2, Y2
	VROUNDPS   $3, Y2, Y4
	VSUBPS     Y4, Y2, Y5
	VANDPS     Y8, Y5, Y5
	VCMPPS     $13, Y11, Y5, Y5
	VANDPS     Y9, Y2, Y7
	VORPS      Y12, Y7, Y7
	VANDPS     Y5, Y7, Y7
	VADDPS     Y7, Y4, Y2
	VCVTTPS2DQ Y2, Y2

	VMULPS     Y6, Y3, Y3
	VROUNDPS   $3, Y3, Y4
	VSUBPS     Y4, Y3, Y5
	VANDPS     Y8, Y5, Y5
	VCMPPS     $13, Y11, Y5, Y5
	VANDPS     Y9, Y3, Y7
	VORPS      Y12, Y7, Y7
	VANDPS     Y5, Y7, Y7
	VADDPS     Y7, Y4, Y3
	VCVTTPS2DQ Y3, Y3

	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y10, Y0
	VMOVDQU   Y0, 2(DI)

	ADDQ $128, SI
	ADDQ $34, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER

done:
	RET

// func bf16R16RowAVX2(dst *byte, src *float32, n int)
// Truncates n float32 of one row (n a multiple of 16) to their high 16 bits
// and stores the pair of columns 2j, 2j+1 as one 4-byte word at dst + 64*j:
// the layout of row k of bf16_r16 when dst points at that row's first word.
TEXT ·bf16R16RowAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   done

loop:
	VMOVDQU      (SI), Y0
	VMOVDQU      32(SI), Y1
	VPSRLD       $16, Y0, Y0
	VPSRLD       $16, Y1, Y1
	VPACKUSDW    Y1, Y0, Y0
	VPERMQ       $0xd8, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VMOVD        X0, (DI)
	VPEXTRD      $1, X0, 64(DI)
	VPEXTRD      $2, X0, 128(DI)
	VPEXTRD      $3, X0, 192(DI)
	VMOVD        X1, 256(DI)
	VPEXTRD      $1, X1, 320(DI)
	VPEXTRD      $2, X1, 384(DI)
	VPEXTRD      $3, X1, 448(DI)
	ADDQ         $64, SI
	ADDQ         $512, DI
	DECQ         CX
	JNZ          loop
	VZEROUPPER

done:
	RET
