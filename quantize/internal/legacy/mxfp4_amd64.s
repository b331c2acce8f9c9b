//go:build amd64 && !purego

#include "textflag.h"

// The code magnitude k for c = ceil(2|x|/d) in 0..15 and in 16..31 (the
// count of the doubled midpoints 1, 3, 5, 7, 10, 14, 20 below c, as
// mxfp4Codes), and the code of a negative weight for each k.
DATA mxfp4Lo<>+0(SB)/8, $0x0303020201010000
DATA mxfp4Lo<>+8(SB)/8, $0x0605050505040404
GLOBL mxfp4Lo<>(SB), RODATA|NOPTR, $16
DATA mxfp4Hi<>+0(SB)/8, $0x0707070606060606
DATA mxfp4Hi<>+8(SB)/8, $0x0707070707070707
GLOBL mxfp4Hi<>(SB), RODATA|NOPTR, $16
DATA mxfp4Neg<>+0(SB)/8, $0x0f0e0d0c0b0a0900
DATA mxfp4Neg<>+8(SB)/8, $0x0000000000000000
GLOBL mxfp4Neg<>(SB), RODATA|NOPTR, $16

// The dword order that undoes the lane interleaving of the two packs.
DATA mxfp4Perm<>+0(SB)/4, $0
DATA mxfp4Perm<>+4(SB)/4, $4
DATA mxfp4Perm<>+8(SB)/4, $1
DATA mxfp4Perm<>+12(SB)/4, $5
DATA mxfp4Perm<>+16(SB)/4, $2
DATA mxfp4Perm<>+20(SB)/4, $6
DATA mxfp4Perm<>+24(SB)/4, $3
DATA mxfp4Perm<>+28(SB)/4, $7
GLOBL mxfp4Perm<>(SB), RODATA|NOPTR, $32

// func quantizeMXFP4AVX2(dst *byte, src *float32, nb int) int
// quantizeMXFP4Blocks for up to nb blocks, as long as each block is all
// zero or takes the fast path: amax normal with exponent field in [4, 252]
// and mantissa below 0x7ffe00 (see mxfp4ExponentFast). It returns the
// number of blocks done; the block after them, if any, is left to the
// caller (it needs the logarithm or the full code scan, or is not finite).
//
// Per block: e = field - 2, 2/d = 2^(129-e) (bits (258-field)<<23), c =
// ceil(|x| * 2/d) in 0..32, k looked up from c with VPSHUFB (c = 32 as 31),
// the negative codes from k where x's sign bit is set, and the codes of
// weights j and j+16 packed into byte j.
TEXT ·quantizeMXFP4AVX2(SB), NOSPLIT, $0-32
	MOVQ           dst+0(FP), DI
	MOVQ           src+8(FP), SI
	MOVQ           nb+16(FP), CX
	XORQ           BX, BX
	TESTQ          CX, CX
	JZ             done
	MOVL           $0x7fffffff, AX
	VMOVQ           AX, X8
	VPBROADCASTD   X8, Y8          // magnitude mask
	VMOVDQU        mxfp4Perm<>(SB), Y9
	VBROADCASTI128 mxfp4Lo<>(SB), Y10
	VBROADCASTI128 mxfp4Hi<>(SB), Y11
	VBROADCASTI128 mxfp4Neg<>(SB), Y12
	MOVL           $0x0f0f0f0f, AX
	VMOVQ           AX, X13
	VPBROADCASTD   X13, Y13        // 15 in every byte
	MOVL           $0x1f1f1f1f, AX
	VMOVQ           AX, X14
	VPBROADCASTD   X14, Y14        // 31 in every byte

block:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VPAND   Y8, Y0, Y4
	VPAND   Y8, Y1, Y5
	VPAND   Y8, Y2, Y6
	VPAND   Y8, Y3, Y7

	// Sign bytes in weight order: the signed packs keep each sign.
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y9, Y0

	// amax bits
	VPMAXUD      Y5, Y4, Y1
	VPMAXUD      Y7, Y6, Y2
	VPMAXUD      Y2, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPMAXUD      X2, X1, X1
	VPSHUFD      $0x4e, X1, X2
	VPMAXUD      X2, X1, X1
	VPSHUFD      $0xb1, X1, X2
	VPMAXUD      X2, X1, X1
	VMOVD         X1, AX
	TESTL        AX, AX
	JZ           zero
	MOVL         AX, DX
	SHRL         $23, DX           // exponent field
	ANDL         $0x7fffff, AX
	CMPL         AX, $0x7ffe00
	JAE          stop
	LEAL         -4(DX), AX
	CMPL         AX, $248
	JA           stop
	LEAL         -2(DX), AX
	MOVB         AX, (DI)          // e
	MOVL         $258, AX
	SUBL         DX, AX
	SHLL         $23, AX
	VMOVQ         AX, X15
	VPBROADCASTD X15, Y15          // 2/d

	VMULPS     Y15, Y4, Y4
	VMULPS     Y15, Y5, Y5
	VMULPS     Y15, Y6, Y6
	VMULPS     Y15, Y7, Y7
	VROUNDPS   $2, Y4, Y4          // ceil
	VROUNDPS   $2, Y5, Y5
	VROUNDPS   $2, Y6, Y6
	VROUNDPS   $2, Y7, Y7
	VCVTTPS2DQ Y4, Y4
	VCVTTPS2DQ Y5, Y5
	VCVTTPS2DQ Y6, Y6
	VCVTTPS2DQ Y7, Y7
	VPACKSSDW  Y5, Y4, Y4
	VPACKSSDW  Y7, Y6, Y6
	VPACKUSWB  Y6, Y4, Y4
	VPERMD     Y4, Y9, Y4          // c, in weight order
	VPMINUB    Y14, Y4, Y4
	VPSHUFB    Y4, Y10, Y5         // k for c < 16
	VPSHUFB    Y4, Y11, Y6         // k for c >= 16
	VPCMPGTB   Y13, Y4, Y7
	VPBLENDVB  Y7, Y6, Y5, Y5      // k
	VPSHUFB    Y5, Y12, Y6         // negative codes
	VPBLENDVB  Y0, Y6, Y5, Y5      // codes
	VEXTRACTI128 $1, Y5, X6
	VPSLLW     $4, X6, X6
	VPOR       X6, X5, X5
	VMOVDQU    X5, 1(DI)
	JMP        next

zero:
	MOVB    $0, (DI)
	VPXOR   X5, X5, X5
	VMOVDQU X5, 1(DI)

next:
	ADDQ $128, SI
	ADDQ $17, DI
	INCQ BX
	CMPQ BX, CX
	JB   block

stop:
	VZEROUPPER

done:
	MOVQ BX, ret+24(FP)
	RET
