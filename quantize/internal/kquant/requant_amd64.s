//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// The reference's nearest_int: add 1.5*2^23 (float32), then the low 23 bits
// of the sum minus 2^22.
DATA requantMagic<>+0(SB)/4, $0x4b400000
DATA requantMagic<>+4(SB)/4, $0x007fffff
DATA requantMagic<>+8(SB)/4, $0x00400000
GLOBL requantMagic<>(SB), RODATA|NOPTR, $12

// func requantAVX2(x *float32, n int, dm, d float32, lo, hi, off int32, L *uint8)
TEXT ·requantAVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         L+40(FP), DI
	VBROADCASTSS dm+16(FP), Y1
	VBROADCASTSS d+20(FP), Y2
	VBROADCASTSS requantMagic<>+0(SB), Y3
	VPBROADCASTD requantMagic<>+4(SB), Y4
	VPBROADCASTD requantMagic<>+8(SB), Y5
	VBROADCASTSS lo+24(FP), Y6
	VBROADCASTSS hi+28(FP), Y7
	VBROADCASTSS off+32(FP), Y8
	XORQ         R10, R10

requant:
	VMOVUPS      (SI)(R10*4), Y0
	VADDPS       Y1, Y0, Y0        // x + dm
	VDIVPS       Y2, Y0, Y0        // / d
	VADDPS       Y3, Y0, Y0        // + 1.5*2^23
	VPAND        Y4, Y0, Y0
	VPSUBD       Y5, Y0, Y0        // nearest_int
	VPMAXSD      Y6, Y0, Y0
	VPMINSD      Y7, Y0, Y0        // clamp to [lo, hi]
	VPADDD       Y8, Y0, Y0
	VEXTRACTI128 $1, Y0, X9
	VPACKSSDW    X9, X0, X0
	VPACKUSWB    X0, X0, X0
	VMOVQ        X0, (DI)(R10*1)
	ADDQ         $8, R10
	CMPQ         R10, CX
	JLT          requant
	VZEROUPPER
	RET

DATA ternaryAbs<>+0(SB)/4, $0x7fffffff
DATA ternaryAbs<>+4(SB)/4, $0x3f000000 // 0.5
GLOBL ternaryAbs<>(SB), RODATA|NOPTR, $8

// func absMaxAVX2(x *float32, n int) (max float32, nan bool)
// The largest magnitude of n values (n a multiple of 8; eight lanes, then
// across them: without NaN the order does not matter), or nan true when
// one is a NaN (then max is not set).
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-21
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS ternaryAbs<>+0(SB), Y7
	VXORPS       Y0, Y0, Y0        // max
	VXORPS       Y1, Y1, Y1        // NaN lanes
	XORQ         R10, R10

ternmax:
	VMOVUPS   (SI)(R10*4), Y2
	VCMPPS    $3, Y2, Y2, Y3       // unordered
	VORPS     Y3, Y1, Y1
	VANDPS    Y7, Y2, Y2
	VMAXPS    Y2, Y0, Y0
	ADDQ      $8, R10
	CMPQ      R10, CX
	JLT       ternmax

	VMOVMSKPS Y1, AX
	TESTL     AX, AX
	JEQ       ternfinite
	MOVB      $1, nan+20(FP)
	VZEROUPPER
	RET

ternfinite:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0        // max in every lane
	VZEROUPPER
	VMOVSS       X0, max+16(FP)
	MOVB         $0, nan+20(FP)
	RET

// func ternarySumsAVX2(x *float32, n int, out *ternarySums)
// TernaryCheck.AddSums: scalar and in index order, adds x² to out.mse0
// and (x - max·l)² to out.mse with rounded products, l the ternary level
// of x for out.max.
TEXT ·ternarySumsAVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         out+16(FP), DI
	VMOVSS       ternarySums_max(DI), X0
	VMULSS       ternaryAbs<>+4(SB), X0, X1 // half = 0.5*max
	VXORPS       X2, X2, X2
	VSUBSS       X1, X2, X2        // -half
	VXORPS       X3, X3, X3
	VSUBSS       X0, X3, X3        // -max
	VMOVSS       ternarySums_mse0(DI), X4 // Σx²
	VMOVSS       ternarySums_mse(DI), X5  // Σ(x - max·l)²
	VXORPS       X6, X6, X6        // 0
	XORQ         R10, R10

ternsums:
	VMOVSS    (SI)(R10*4), X8      // v
	VMULSS    X8, X8, X9
	VADDSS    X9, X4, X4
	VCMPSS    $1, X1, X8, X10      // v < half
	VBLENDVPS X10, X6, X0, X11     // max·l: 0 there, else max
	VCMPSS    $1, X2, X8, X10      // v < -half
	VBLENDVPS X10, X3, X11, X11    // -max there
	VSUBSS    X11, X8, X9
	VMULSS    X9, X9, X9
	VADDSS    X9, X5, X5
	INCQ      R10
	CMPQ      R10, CX
	JLT       ternsums

	VMOVSS X4, ternarySums_mse0(DI)
	VMOVSS X5, ternarySums_mse(DI)
	RET

// 2^22 (float32): a rounded product at least this large in magnitude may not
// be the nearest integer to the exact one. The |x| mask follows it.
DATA roundLimit<>+0(SB)/4, $0x4a800000
DATA roundLimit<>+4(SB)/4, $0x7fffffff
GLOBL roundLimit<>(SB), RODATA|NOPTR, $8

// func roundShiftedAVX2(x *float32, n int, mm, lm, id float32, hi int32, L *uint8) bool
// Eight values per step: t = mm·lm + x fused, then t·id + 1.5*2^23 fused, so
// the product is rounded once, to the nearest integer (ties to even) where it
// is below 2^22 in magnitude; the integer is the sum's low bits. Any lane at
// or beyond that, or NaN, makes it return false (L is then not all set).
TEXT ·roundShiftedAVX2(SB), NOSPLIT, $0-41
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         L+32(FP), DI
	VBROADCASTSS mm+16(FP), Y1
	VBROADCASTSS lm+20(FP), Y12
	VBROADCASTSS id+24(FP), Y2
	VBROADCASTSS requantMagic<>+0(SB), Y3
	VPBROADCASTD requantMagic<>+4(SB), Y4
	VPBROADCASTD requantMagic<>+8(SB), Y5
	VBROADCASTSS roundLimit<>+0(SB), Y6
	VBROADCASTSS hi+28(FP), Y7
	VBROADCASTSS roundLimit<>+4(SB), Y11
	VPXOR        Y8, Y8, Y8        // 0, the low clamp
	VPXOR        Y9, Y9, Y9        // lanes out of range
	XORQ         R10, R10

roundshifted:
	VMOVUPS      (SI)(R10*4), Y0
	VFMADD231PS  Y12, Y1, Y0       // x + mm·lm, one rounding
	VFMADD213PS  Y3, Y2, Y0        // t·id + 1.5*2^23, one rounding
	VSUBPS       Y3, Y0, Y10
	VANDPS       Y11, Y10, Y10
	VCMPPS       $5, Y6, Y10, Y10  // not below 2^22, or NaN
	VORPS        Y10, Y9, Y9
	VPAND        Y4, Y0, Y0
	VPSUBD       Y5, Y0, Y0
	VPMAXSD      Y8, Y0, Y0
	VPMINSD      Y7, Y0, Y0        // clamp to [0, hi]
	VEXTRACTI128 $1, Y0, X10
	VPACKSSDW    X10, X0, X0
	VPACKUSWB    X0, X0, X0
	VMOVQ        X0, (DI)(R10*1)
	ADDQ         $8, R10
	CMPQ         R10, CX
	JLT          roundshifted

	VMOVMSKPS    Y9, AX
	TESTL        AX, AX
	SETEQ        ret+40(FP)
	VZEROUPPER
	RET
