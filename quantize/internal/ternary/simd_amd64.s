//go:build amd64 && !purego

#include "textflag.h"

DATA absMask<>+0(SB)/4, $0x7fffffff
GLOBL absMask<>(SB), RODATA|NOPTR, $4

DATA one<>+0(SB)/4, $1
GLOBL one<>(SB), RODATA|NOPTR, $4

DATA two<>+0(SB)/4, $2
GLOBL two<>(SB), RODATA|NOPTR, $4

// Dword order that undoes the lane interleave of VPACKSSDW + VPACKSSWB.
DATA packOrder<>+0(SB)/4, $0
DATA packOrder<>+4(SB)/4, $4
DATA packOrder<>+8(SB)/4, $1
DATA packOrder<>+12(SB)/4, $5
DATA packOrder<>+16(SB)/4, $2
DATA packOrder<>+20(SB)/4, $6
DATA packOrder<>+24(SB)/4, $3
DATA packOrder<>+28(SB)/4, $7
GLOBL packOrder<>(SB), RODATA|NOPTR, $32

// VMAXPS m, a, m keeps m = a > m ? a : m, and m when a is a NaN, as the
// reference's std::max(max, fabsf(x)) does. Four chains of 8 lanes, merged
// at the end (the maximum of numbers does not depend on the order).
//
// func absMaxAVX2(src *float32, n int, lanes *[8]float32)
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ lanes+16(FP), DI
	VBROADCASTSS absMask<>(SB), Y8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JEQ maxdone

maxloop:
	VANDPS 0(SI), Y8, Y4
	VANDPS 32(SI), Y8, Y5
	VANDPS 64(SI), Y8, Y6
	VANDPS 96(SI), Y8, Y7
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	VMAXPS Y2, Y6, Y2
	VMAXPS Y3, Y7, Y3
	ADDQ $128, SI
	DECQ CX
	JNE maxloop

maxdone:
	VMAXPS Y0, Y1, Y0
	VMAXPS Y2, Y3, Y2
	VMAXPS Y0, Y2, Y0
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// Trits of 32 values per step: zero = |v| < thresh, neg = v < 0 (both
// ordered comparisons: false for a NaN, and -0 is not negative); the trit is
// 1 where zero, else 0 where neg, else 2. The dwords are then packed to bytes.
//
// func tritsAVX2(src *float32, n int, thresh float32, dst *byte)
TEXT ·tritsAVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS thresh+16(FP), Y9
	MOVQ dst+24(FP), DI
	VBROADCASTSS absMask<>(SB), Y8
	VPBROADCASTD one<>(SB), Y10
	VPBROADCASTD two<>(SB), Y11
	VXORPS Y12, Y12, Y12
	VMOVDQU packOrder<>(SB), Y13
	SHRQ $5, CX
	JEQ tritdone

tritloop:
	VMOVUPS 0(SI), Y0
	VANDPS Y0, Y8, Y4
	VCMPPS $0x11, Y9, Y4, Y4 // |v| < thresh
	VCMPPS $0x11, Y12, Y0, Y0 // v < 0
	VPANDN Y11, Y0, Y0        // 2 where not negative
	VBLENDVPS Y4, Y10, Y0, Y0 // 1 where zero
	VMOVUPS 32(SI), Y1
	VANDPS Y1, Y8, Y5
	VCMPPS $0x11, Y9, Y5, Y5
	VCMPPS $0x11, Y12, Y1, Y1
	VPANDN Y11, Y1, Y1
	VBLENDVPS Y5, Y10, Y1, Y1
	VMOVUPS 64(SI), Y2
	VANDPS Y2, Y8, Y6
	VCMPPS $0x11, Y9, Y6, Y6
	VCMPPS $0x11, Y12, Y2, Y2
	VPANDN Y11, Y2, Y2
	VBLENDVPS Y6, Y10, Y2, Y2
	VMOVUPS 96(SI), Y3
	VANDPS Y3, Y8, Y7
	VCMPPS $0x11, Y9, Y7, Y7
	VCMPPS $0x11, Y12, Y3, Y3
	VPANDN Y11, Y3, Y3
	VBLENDVPS Y7, Y10, Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y13, Y0
	VMOVDQU Y0, 0(DI)
	ADDQ $128, SI
	ADDQ $32, DI
	DECQ CX
	JNE tritloop

tritdone:
	VZEROUPPER
	RET
