//go:build amd64 && !purego

#include "textflag.h"

// func fp32ToFP16F16C(dst *byte, src *float32, n int)
// Converts n float32 (n a multiple of 16) to halves with VCVTPS2PH, rounding
// to nearest even (immediate 0), 16 values per step.
TEXT ·fp32ToFP16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   done

loop:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y1, 16(DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop
	VZEROUPPER

done:
	RET

// func fp32ToBF16AVX2(dst *byte, src *float32, n int)
// Converts n float32 (n a multiple of 16) to bfloat16 as FP32ToBF16 does:
// u + 0x7fff + ((u >> 16) & 1), high half; NaNs become (u >> 16) | 64.
TEXT ·fp32ToBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   done

	MOVL         $1, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8            // 1
	MOVL         $0x7fff, AX
	MOVQ         AX, X9
	VPBROADCASTD X9, Y9            // 0x7fff
	MOVL         $0x7fffffff, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, Y10          // magnitude mask
	MOVL         $0x7f800000, AX
	MOVQ         AX, X11
	VPBROADCASTD X11, Y11          // infinity
	MOVL         $64, AX
	MOVQ         AX, X12
	VPBROADCASTD X12, Y12          // quiet bit of a bf16 NaN

loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1

	VPSRLD    $16, Y0, Y2          // u >> 16
	VPAND     Y8, Y2, Y3
	VPADDD    Y9, Y3, Y3
	VPADDD    Y0, Y3, Y3
	VPSRLD    $16, Y3, Y3          // rounded
	VPAND     Y10, Y0, Y4
	VPCMPGTD  Y11, Y4, Y4          // NaN: |u| > infinity
	VPOR      Y12, Y2, Y2
	VPBLENDVB Y4, Y2, Y3, Y3

	VPSRLD    $16, Y1, Y5
	VPAND     Y8, Y5, Y6
	VPADDD    Y9, Y6, Y6
	VPADDD    Y1, Y6, Y6
	VPSRLD    $16, Y6, Y6
	VPAND     Y10, Y1, Y7
	VPCMPGTD  Y11, Y7, Y7
	VPOR      Y12, Y5, Y5
	VPBLENDVB Y7, Y5, Y6, Y6

	// Pack to words (all values fit in 16 bits) and undo the per-lane
	// interleaving of the pack.
	VPACKUSDW Y6, Y3, Y3
	VPERMQ    $0xd8, Y3, Y3
	VMOVDQU   Y3, (DI)

	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER

done:
	RET

// func anyNonFiniteAVX2(x *float32, n int) bool
// Reports whether any of n float32 (n a multiple of 32) is an infinity or a
// NaN (all exponent bits set).
TEXT ·anyNonFiniteAVX2(SB), NOSPLIT, $0-17
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7f800000, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y9, Y9, Y9
	SHRQ         $5, CX
	JZ           done

loop:
	VPAND    (SI), Y8, Y0
	VPAND    32(SI), Y8, Y1
	VPAND    64(SI), Y8, Y2
	VPAND    96(SI), Y8, Y3
	VPCMPEQD Y8, Y0, Y0
	VPCMPEQD Y8, Y1, Y1
	VPCMPEQD Y8, Y2, Y2
	VPCMPEQD Y8, Y3, Y3
	VPOR     Y1, Y0, Y0
	VPOR     Y3, Y2, Y2
	VPOR     Y2, Y0, Y0
	VPOR     Y0, Y9, Y9
	ADDQ     $128, SI
	DECQ     CX
	JNZ      loop

done:
	VPTEST     Y9, Y9
	SETNE      AL
	VZEROUPPER
	MOVB       AL, ret+16(FP)
	RET
