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

// The AVX2 q8_KV row kernels (float32 and bfloat16 rows) share their
// frame: Q8KV_ENTRY loads the arguments (dst DI, src SI, next DX, n/32
// steps CX, mul broadcast in Y8) and the constants (the packs' lane order
// Y9, words of one Y13 for VPMADDWD), clears the int32 sums Y10 and the
// int16 sums Y11, and jumps to done for an empty row. Q8KV_STORE32 turns
// the 32 scaled values in Y0-Y3 into int8 quants with saturating packs,
// adds them to the int16 sums and stores them at DI. Q8KV_WIDEN folds the
// int16 sums into the int32 ones (every 128 steps, before a lane can
// overflow).
#define Q8KV_ENTRY \
	MOVQ         dst+0(FP), DI; \
	MOVQ         src+8(FP), SI; \
	MOVQ         next+16(FP), DX; \
	MOVQ         n+24(FP), CX; \
	VBROADCASTSS mul+32(FP), Y8; \
	VMOVDQU      q8perm<>(SB), Y9; \
	MOVL         $0x00010001, AX; \
	VMOVQ        AX, X13; \
	VPBROADCASTD X13, Y13; \
	VPXOR        Y10, Y10, Y10; \
	VPXOR        Y11, Y11, Y11; \
	SHRQ         $5, CX; \
	JZ           done

#define Q8KV_STORE32 \
	VCVTPS2DQ Y0, Y0; \
	VCVTPS2DQ Y1, Y1; \
	VCVTPS2DQ Y2, Y2; \
	VCVTPS2DQ Y3, Y3; \
	VPACKSSDW Y1, Y0, Y0; \
	VPACKSSDW Y3, Y2, Y2; \
	VPADDW    Y2, Y0, Y1; \
	VPADDW    Y1, Y11, Y11; \
	VPACKSSWB Y2, Y0, Y0; \
	VPERMD    Y0, Y9, Y0; \
	VMOVDQU   Y0, (DI)

#define Q8KV_WIDEN \
	VPMADDWD Y13, Y11, Y1; \
	VPADDD   Y1, Y10, Y10; \
	VPXOR    Y11, Y11, Y11

// func absMaxAVX2(x *float32, n int) float32
// The largest magnitude of n values (n a multiple of 32), taken as the
// largest bit pattern bits & 0x7fffffff (VPMAXUD): for finite values that
// is the largest magnitude, and an infinity or NaN anywhere makes the result
// an infinity or NaN, so callers learn that the input is not finite.
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7fffffff, AX
	VMOVQ         AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	VPXOR        Y2, Y2, Y2
	VPXOR        Y3, Y3, Y3
	SHRQ         $5, CX
	JZ           reduce

loop:
	VPAND   (SI), Y8, Y4
	VPAND   32(SI), Y8, Y5
	VPAND   64(SI), Y8, Y6
	VPAND   96(SI), Y8, Y7
	VPMAXUD Y4, Y0, Y0
	VPMAXUD Y5, Y1, Y1
	VPMAXUD Y6, Y2, Y2
	VPMAXUD Y7, Y3, Y3
	ADDQ    $128, SI
	DECQ    CX
	JNZ     loop

reduce:
	VPMAXUD      Y1, Y0, Y0
	VPMAXUD      Y3, Y2, Y2
	VPMAXUD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPMAXUD      X1, X0, X0
	VZEROUPPER
	VMOVSS        X0, ret+16(FP)
	RET

// Q8_QUANTS32 converts the 32 values at SI times Y8 to int32 (VCVTPS2DQ
// rounds to nearest even), adds them to the lane sums in Y10 and leaves the
// 32 saturated int8 quants, in order (Y9 = q8perm), in Y0.
#define Q8_QUANTS32 \
	VMULPS    (SI), Y8, Y0; \
	VMULPS    32(SI), Y8, Y1; \
	VMULPS    64(SI), Y8, Y2; \
	VMULPS    96(SI), Y8, Y3; \
	VCVTPS2DQ Y0, Y0; \
	VCVTPS2DQ Y1, Y1; \
	VCVTPS2DQ Y2, Y2; \
	VCVTPS2DQ Y3, Y3; \
	VPADDD    Y1, Y0, Y4; \
	VPADDD    Y3, Y2, Y5; \
	VPADDD    Y5, Y4, Y4; \
	VPADDD    Y4, Y10, Y10; \
	VPACKSSDW Y1, Y0, Y0; \
	VPACKSSDW Y3, Y2, Y2; \
	VPACKSSWB Y2, Y0, Y0; \
	VPERMD    Y0, Y9, Y0

// SUM_LANES leaves the sum of Y10's eight int32 lanes in AX (and clears the
// upper halves of the vector registers).
#define SUM_LANES \
	VEXTRACTI128 $1, Y10, X1; \
	VPADDD       X1, X10, X0; \
	VPSHUFD      $0x4e, X0, X1; \
	VPADDD       X1, X0, X0; \
	VPSHUFD      $0xb1, X0, X1; \
	VPADDD       X1, X0, X0; \
	VZEROUPPER; \
	VMOVD         X0, AX

// func quantizeQ8AVX2(dst *byte, src *float32, n int, mul float32) int32
// The reference's AVX2 q8 rounding for n values (n a multiple of 32):
// VMULPS by mul, VROUNDPS to nearest even, VCVTPS2DQ, saturating packs to
// int8. Returns the int32 sum of the converted values. VCVTPS2DQ alone
// rounds to nearest even (Go leaves MXCSR at its default), and rounding
// first changes nothing it converts, so the VROUNDPS is left out.
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
	Q8_QUANTS32
	VMOVDQU   Y0, (DI)
	ADDQ      $128, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

sum:
	SUM_LANES
	MOVL AX, ret+32(FP)
	RET

// Q8_ROW quantizes the 32 values at R8 with the multiplier at off(DX)
// (VMULPS, VCVTPS2DQ rounding to nearest even, saturating packs; q8perm
// undoes the packs' lane interleaving) into out, then moves R8 to the next
// row.
#define Q8_ROW(off, out) \
	VBROADCASTSS off(DX), Y14; \
	VMULPS       (R8), Y14, Y8; \
	VMULPS       32(R8), Y14, Y9; \
	VMULPS       64(R8), Y14, Y10; \
	VMULPS       96(R8), Y14, Y11; \
	VCVTPS2DQ    Y8, Y8; \
	VCVTPS2DQ    Y9, Y9; \
	VCVTPS2DQ    Y10, Y10; \
	VCVTPS2DQ    Y11, Y11; \
	VPACKSSDW    Y9, Y8, Y8; \
	VPACKSSDW    Y11, Y10, Y10; \
	VPACKSSWB    Y10, Y8, Y8; \
	VPERMD       Y8, Y15, out; \
	ADDQ         BX, R8

// TRANSPOSE_WORDS_8X8 transposes the 8x8 dwords of Y0-Y7 (Yk holds row k's
// words 0..7), leaving columns 0|4 of rows 0-3 in Y6 and of rows 4-7 in Y9,
// 1|5 in Y7/Y1, 2|6 in Y8/Y2 and 3|7 in Y0/Y4.
#define TRANSPOSE_WORDS_8X8 \
	VPUNPCKLDQ  Y1, Y0, Y8; \
	VPUNPCKHDQ  Y1, Y0, Y9; \
	VPUNPCKLDQ  Y3, Y2, Y0; \
	VPUNPCKHDQ  Y3, Y2, Y1; \
	VPUNPCKLDQ  Y5, Y4, Y2; \
	VPUNPCKHDQ  Y5, Y4, Y3; \
	VPUNPCKLDQ  Y7, Y6, Y4; \
	VPUNPCKHDQ  Y7, Y6, Y5; \
	VPUNPCKLQDQ Y0, Y8, Y6; \
	VPUNPCKHQDQ Y0, Y8, Y7; \
	VPUNPCKLQDQ Y1, Y9, Y8; \
	VPUNPCKHQDQ Y1, Y9, Y0; \
	VPUNPCKLQDQ Y4, Y2, Y9; \
	VPUNPCKHQDQ Y4, Y2, Y1; \
	VPUNPCKLQDQ Y5, Y3, Y2; \
	VPUNPCKHQDQ Y5, Y3, Y4

// STORE_COLUMNS stores the 8 transposed columns j (32 bytes each) at
// c<j>(out).
#define STORE_COLUMNS(out, c0, c1, c2, c3, c4, c5, c6, c7) \
	VPERM2I128 $0x20, Y9, Y6, Y10; \
	VPERM2I128 $0x31, Y9, Y6, Y11; \
	VMOVDQU    Y10, c0(out); \
	VMOVDQU    Y11, c4(out); \
	VPERM2I128 $0x20, Y1, Y7, Y10; \
	VPERM2I128 $0x31, Y1, Y7, Y11; \
	VMOVDQU    Y10, c1(out); \
	VMOVDQU    Y11, c5(out); \
	VPERM2I128 $0x20, Y2, Y8, Y10; \
	VPERM2I128 $0x31, Y2, Y8, Y11; \
	VMOVDQU    Y10, c2(out); \
	VMOVDQU    Y11, c6(out); \
	VPERM2I128 $0x20, Y4, Y0, Y10; \
	VPERM2I128 $0x31, Y4, Y0, Y11; \
	VMOVDQU    Y10, c3(out); \
	VMOVDQU    Y11, c7(out)

// func quantizeQ8Rows8AVX2(dst *byte, src *float32, stride, n int, muls *[8]float32)
// quantizeQ8AVX2 for 8 rows at once (row k at src + 4*stride*k bytes,
// multiplied by muls[k]; n a multiple of 32): the 8 rows' words j are
// transposed in registers and stored as the 32 contiguous bytes at
// dst + 32*j, instead of 4 bytes at a time. No sums.
TEXT ·quantizeQ8Rows8AVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    stride+16(FP), BX
	SHLQ    $2, BX
	MOVQ    n+24(FP), CX
	MOVQ    muls+32(FP), DX
	VMOVDQU q8perm<>(SB), Y15
	SHRQ    $5, CX
	JZ      done

loop:
	MOVQ SI, R8
	Q8_ROW(0, Y0)
	Q8_ROW(4, Y1)
	Q8_ROW(8, Y2)
	Q8_ROW(12, Y3)
	Q8_ROW(16, Y4)
	Q8_ROW(20, Y5)
	Q8_ROW(24, Y6)
	Q8_ROW(28, Y7)
	TRANSPOSE_WORDS_8X8
	STORE_COLUMNS(DI, 0, 32, 64, 96, 128, 160, 192, 224)

	ADDQ $128, SI
	ADDQ $256, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func quantizeQ8_0AVX2(dst *byte, src *float32, nb int) (maxBits, zeroScales uint32)
// quantize_row_q8_0_ref for nb blocks of 32 values: d = amax/127 as a half
// (VCVTPS2PH, nearest even), quants roundf(x * (1/d)) (0 when d is 0). The
// rounding half away from zero is trunc(y) plus ±1 where |y - trunc(y)| >=
// 0.5, all exact. Only valid where d is a normal float (the products then
// stay within ±127.5): the caller redoes blocks whose half scale is 0, of
// which there are zeroScales. amax is the largest magnitude's bit pattern
// (VPMAXUD: for magnitudes the same order as the floats', with NaNs above
// infinity), and maxBits the largest over the blocks, so the caller learns
// of an infinity or NaN in the input without a pass of its own.
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	VPXOR X14, X14, X14 // maxBits in its low word
	XORL R9, R9         // zeroScales
	TESTQ CX, CX
	JZ   done

	MOVL         $0x7fffffff, AX
	VMOVQ         AX, X8
	VPBROADCASTD X8, Y8            // magnitude mask
	MOVL         $0x80000000, AX
	VMOVQ         AX, X9
	VPBROADCASTD X9, Y9            // sign mask
	VMOVDQU      q8perm<>(SB), Y10
	MOVL         $0x3f000000, AX
	VMOVQ         AX, X11
	VPBROADCASTD X11, Y11          // 0.5
	MOVL         $0x3f800000, AX
	VMOVQ         AX, X12
	VPBROADCASTD X12, Y12          // 1.0
	MOVL         $0x42fe0000, AX
	VMOVQ         AX, X13           // 127.0

loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3

	VANDPS       Y8, Y0, Y4
	VANDPS       Y8, Y1, Y5
	VPMAXUD      Y5, Y4, Y4
	VANDPS       Y8, Y2, Y5
	VPMAXUD      Y5, Y4, Y4
	VANDPS       Y8, Y3, Y5
	VPMAXUD      Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VPMAXUD      X5, X4, X4
	VPERMILPS    $0x4e, X4, X5
	VPMAXUD      X5, X4, X4
	VPERMILPS    $0xb1, X4, X5
	VPMAXUD      X5, X4, X4        // amax
	VPMAXUD      X4, X14, X14

	VDIVSS    X13, X4, X4          // d = amax / 127
	VCVTPS2PH $0, X4, X5
	VMOVQ      X5, AX
	MOVW      AX, (DI)
	XORL      R8, R8
	TESTW     AX, AX
	SETEQ     R8
	ADDL      R8, R9
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

done:
	VMOVD      X14, AX
	VZEROUPPER
	MOVL       AX, maxBits+24(FP)
	MOVL       R9, zeroScales+28(FP)
	RET

// The 16 rows of a bf16_r16 group lie a power of two apart in a 4096-wide
// tensor, so the lines a step reads share one L1 set (Zen 5's and Sapphire
// Rapids' L1D have 12 ways), as do the next lines the prefetcher fetches
// for them: reading all 16 at the same column evicts lines before they are
// used. Rows 8-15 therefore run a few blocks of 16 columns behind rows 0-7
// (the lag, r16Lag in q8_amd64.go), which puts them in other sets; the
// other half of each output line is written 32*lag bytes of output later,
// while the line is still in L1. On the AMD EPYC (Zen 5) lags of 2, 4, 8,
// 16 and 32 blocks ran BenchmarkQuantize's bf16_r16 (AVX-512) at 0.83, 0.90,
// 0.92, 0.85 and 0.72x of its copy.

// LAGGED_HALVES runs half(base, out), one block of 16 columns of 8 rows,
// over the CX = n columns of a group at SI, rows BX bytes apart, into DI:
// rows 0-7 into the first 32 bytes of each output line, rows 8-15 DX (the
// lag) blocks behind into the last 32. The first and last blocks of the lag
// run one half only.
#define LAGGED_HALVES(half) \
	LEAQ    (SI)(BX*8), R9; \
	LEAQ    32(DI), R10; \
	SHRQ    $4, CX; \
	CMPQ    CX, DX; \
	CMOVQLT CX, DX; \
	SUBQ    DX, CX; \
	MOVQ    DX, R11; \
	TESTQ   DX, DX; \
	JZ      both; \
lead: \
	half(SI, DI); \
	ADDQ    $64, SI; \
	ADDQ    $512, DI; \
	DECQ    DX; \
	JNZ     lead; \
both: \
	TESTQ   CX, CX; \
	JZ      trail; \
bothloop: \
	half(SI, DI); \
	half(R9, R10); \
	ADDQ    $64, SI; \
	ADDQ    $512, DI; \
	ADDQ    $64, R9; \
	ADDQ    $512, R10; \
	DECQ    CX; \
	JNZ     bothloop; \
trail: \
	TESTQ   R11, R11; \
	JZ      reduce; \
trailloop: \
	half(R9, R10); \
	ADDQ    $64, R9; \
	ADDQ    $512, R10; \
	DECQ    R11; \
	JNZ     trailloop

// WORD_MAX leaves in AX the largest word of Y12 shifted to the high half
// (the bf16_r16 kernels' result).
#define WORD_MAX \
	VEXTRACTI128 $1, Y12, X13; \
	VPMAXUW      X13, X12, X12; \
	VPSHUFD      $0x4e, X12, X13; \
	VPMAXUW      X13, X12, X12; \
	VPSHUFD      $0xb1, X12, X13; \
	VPMAXUW      X13, X12, X12; \
	VPSRLD       $16, X12, X13; \
	VPMAXUW      X13, X12, X12; \
	VZEROUPPER; \
	VMOVD        X12, AX; \
	SHLL         $16, AX

// BF16_PAIR_AVX2 truncates 8 float32 (32 bytes at off) of row a at R8 and
// of row b at R8+BX and packs them into out: in each 128-bit lane the
// dwords (pairs of columns) of a, then the same two of b (a0 a1 b0 b1 |
// a2 a3 b2 b3). It folds their magnitudes into the word maxima Y12 (Y14 =
// 0x7fff in every word: a bf16 value is an infinity or a NaN exactly when
// its magnitude is at least 0x7f80, as its float32 is) and moves R8 two
// rows on. The rows are loaded before the shifts: a VPSRLD with a memory
// operand exists only in EVEX (AVX-512) form, which the assembler would
// pick silently.
#define BF16_PAIR_AVX2(off, out) \
	VMOVDQU   off(R8), Y4; \
	VMOVDQU   off(R8)(BX*1), Y5; \
	VPSRLD    $16, Y4, Y4; \
	VPSRLD    $16, Y5, Y5; \
	VPACKUSDW Y5, Y4, out; \
	VPAND     Y14, out, Y13; \
	VPMAXUW   Y13, Y12, Y12; \
	LEAQ      (R8)(BX*2), R8

// BF16_COLS8_AVX2 stores 8 columns (32 bytes at off) of the 8 rows from
// base, four pairs of columns, as the 32-byte halves at out + c0 .. c3. A
// VSHUFPS of two packed pairs of rows takes one pair of columns of four
// rows into each lane, and a VPERM2I128 puts rows 0-3 and 4-7 together.
#define BF16_COLS8_AVX2(base, out, off, c0, c1, c2, c3) \
	MOVQ       base, R8; \
	BF16_PAIR_AVX2(off, Y0); \
	BF16_PAIR_AVX2(off, Y1); \
	BF16_PAIR_AVX2(off, Y2); \
	BF16_PAIR_AVX2(off, Y3); \
	VSHUFPS    $0x88, Y1, Y0, Y6; \
	VSHUFPS    $0xdd, Y1, Y0, Y7; \
	VSHUFPS    $0x88, Y3, Y2, Y8; \
	VSHUFPS    $0xdd, Y3, Y2, Y9; \
	VPERM2I128 $0x20, Y8, Y6, Y4; \
	VPERM2I128 $0x31, Y8, Y6, Y5; \
	VMOVDQU    Y4, c0(out); \
	VMOVDQU    Y5, c2(out); \
	VPERM2I128 $0x20, Y9, Y7, Y4; \
	VPERM2I128 $0x31, Y9, Y7, Y5; \
	VMOVDQU    Y4, c1(out); \
	VMOVDQU    Y5, c3(out)

// BF16_ROWS8_AVX2 is BF16_ROWS8 with 256-bit registers: 8 rows from base,
// 16 columns each, into the 32-byte halves at out + 64*j.
#define BF16_ROWS8_AVX2(base, out) \
	BF16_COLS8_AVX2(base, out, 0, 0, 64, 128, 192); \
	BF16_COLS8_AVX2(base, out, 32, 256, 320, 384, 448)

// func bf16R16Rows16AVX2(dst *byte, src *float32, stride, n, lag int) uint32
// Truncates n float32 of each of 16 rows (row k at src + 4*stride*k bytes;
// n a multiple of 16) to their high 16 bits and stores the pair of columns
// 2j, 2j+1 of row k as the 4-byte word at dst + 64*j + 4*k: the layout of
// a bf16_r16 group. Per 16 columns the words of rows 0-7 and of rows 8-15
// are transposed in registers (BF16_COLS8_AVX2) and stored as the two
// 32-byte halves of each 64-byte line, rows 8-15 lag blocks of columns
// behind (see LAGGED_HALVES), so every output line is written whole while it is in L1. It
// returns the largest magnitude of the bf16 values (bits & 0x7fff) shifted
// to the high half: the magnitude bit pattern of a float32, at least
// 0x7f800000 exactly when some value is an infinity or a NaN.
TEXT ·bf16R16Rows16AVX2(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         stride+16(FP), BX
	SHLQ         $2, BX
	MOVQ         n+24(FP), CX
	MOVQ         lag+32(FP), DX
	MOVL         $0x7fff7fff, AX
	VMOVQ         AX, X14
	VPBROADCASTD X14, Y14          // magnitude mask
	VPXOR        Y12, Y12, Y12     // largest magnitudes

	LAGGED_HALVES(BF16_ROWS8_AVX2)

reduce:
	WORD_MAX
	MOVL AX, ret+40(FP)
	RET

// The VPERMT2W index of BF16_ROWS8: from rows a (words 0-31) and b (words
// 32-63) it takes the high word of each float32 and puts the dword of a's
// columns 2j, 2j+1 next to b's, at dwords 2j and 2j+1.
DATA bf16r16pack<>+0(SB)/8, $0x0023002100030001
DATA bf16r16pack<>+8(SB)/8, $0x0027002500070005
DATA bf16r16pack<>+16(SB)/8, $0x002b0029000b0009
DATA bf16r16pack<>+24(SB)/8, $0x002f002d000f000d
DATA bf16r16pack<>+32(SB)/8, $0x0033003100130011
DATA bf16r16pack<>+40(SB)/8, $0x0037003500170015
DATA bf16r16pack<>+48(SB)/8, $0x003b0039001b0019
DATA bf16r16pack<>+56(SB)/8, $0x003f003d001f001d
GLOBL bf16r16pack<>(SB), RODATA|NOPTR, $64

// The two VPERMI2Q indexes of BF16_ROWS8 (128-bit lanes 0 and 1, then 2
// and 3, of two registers, alternating).
DATA bf16r16lanes<>+0(SB)/8, $0
DATA bf16r16lanes<>+8(SB)/8, $1
DATA bf16r16lanes<>+16(SB)/8, $8
DATA bf16r16lanes<>+24(SB)/8, $9
DATA bf16r16lanes<>+32(SB)/8, $2
DATA bf16r16lanes<>+40(SB)/8, $3
DATA bf16r16lanes<>+48(SB)/8, $10
DATA bf16r16lanes<>+56(SB)/8, $11
DATA bf16r16lanes<>+64(SB)/8, $4
DATA bf16r16lanes<>+72(SB)/8, $5
DATA bf16r16lanes<>+80(SB)/8, $12
DATA bf16r16lanes<>+88(SB)/8, $13
DATA bf16r16lanes<>+96(SB)/8, $6
DATA bf16r16lanes<>+104(SB)/8, $7
DATA bf16r16lanes<>+112(SB)/8, $14
DATA bf16r16lanes<>+120(SB)/8, $15
GLOBL bf16r16lanes<>(SB), RODATA|NOPTR, $128

// BF16_ROWS8 stores the 8 rows from base (rows BX bytes apart), 16 columns
// of each, truncated to bf16, as one half (32 bytes, rows 0-3 then 4-7) of
// each of the 8 bf16_r16 lines at out + 64*j, folding their magnitudes into
// the word maxima Z12 (Z30 = 0x7fff in every word). A VPERMT2W per pair of
// rows (a, b) truncates both and interleaves their dwords (a0 b0 a1 b1 |
// a2 b2 a3 b3 | ...); the qword unpacks of two pairs give each 128-bit lane
// one column of four rows; a VPERMI2Q puts the four rows of rows 0-3 and
// 4-7 of one column next to each other.
#define BF16_ROWS8(base, out) \
	MOVQ        base, R8; \
	BF16_PAIR512(Z0); \
	BF16_PAIR512(Z1); \
	BF16_PAIR512(Z2); \
	BF16_PAIR512(Z3); \
	VPUNPCKLQDQ Z1, Z0, Z4; \
	VPUNPCKHQDQ Z1, Z0, Z5; \
	VPUNPCKLQDQ Z3, Z2, Z6; \
	VPUNPCKHQDQ Z3, Z2, Z7; \
	VMOVDQA64   Z28, Z8; \
	VPERMI2Q    Z6, Z4, Z8; \
	VMOVDQA64   Z29, Z9; \
	VPERMI2Q    Z6, Z4, Z9; \
	VMOVDQA64   Z28, Z10; \
	VPERMI2Q    Z7, Z5, Z10; \
	VMOVDQA64   Z29, Z11; \
	VPERMI2Q    Z7, Z5, Z11; \
	VMOVDQU     Y8, (out); \
	VEXTRACTI64X4 $1, Z8, 128(out); \
	VMOVDQU     Y9, 256(out); \
	VEXTRACTI64X4 $1, Z9, 384(out); \
	VMOVDQU     Y10, 64(out); \
	VEXTRACTI64X4 $1, Z10, 192(out); \
	VMOVDQU     Y11, 320(out); \
	VEXTRACTI64X4 $1, Z11, 448(out)

// BF16_PAIR512 loads row a at R8 and row b at R8+BX (16 float32 each) into
// r as the VPERMT2W index Z31 arranges them, folds their magnitudes into
// Z12 and moves R8 two rows on.
#define BF16_PAIR512(r) \
	VMOVDQU64 (R8), r; \
	VPERMT2W  (R8)(BX*1), Z31, r; \
	VPANDD    Z30, r, Z13; \
	VPMAXUW   Z13, Z12, Z12; \
	LEAQ      (R8)(BX*2), R8


// func bf16R16Rows16AVX512(dst *byte, src *float32, stride, n, lag int) uint32
// bf16R16Rows16AVX2 with AVX-512, for the same bytes and result: rows 0-7
// fill the first 32 bytes of each output line and rows 8-15, lag blocks
// behind, the last 32 (the first and last lag blocks run one half only).
TEXT ·bf16R16Rows16AVX512(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         stride+16(FP), BX
	SHLQ         $2, BX
	MOVQ         n+24(FP), CX
	MOVQ         lag+32(FP), DX
	VMOVDQU64    bf16r16pack<>(SB), Z31
	VMOVDQU64    bf16r16lanes<>(SB), Z28
	VMOVDQU64    bf16r16lanes<>+64(SB), Z29
	MOVL         $0x7fff7fff, AX
	VPBROADCASTD AX, Z30
	VPXORQ       Z12, Z12, Z12
	LAGGED_HALVES(BF16_ROWS8)

reduce:
	VEXTRACTI64X4 $1, Z12, Y13
	VPMAXUW       Y13, Y12, Y12
	WORD_MAX
	MOVL AX, ret+40(FP)
	RET

// func quantizeQ8KVRowAVX2(dst *byte, src, next *float32, n int, mul float32) int32
// Quantizes one q8_KV row as quantizeQ8AVX2 does (VMULPS by mul, VCVTPS2DQ
// rounding to nearest even, saturating packs) and returns the sum of the
// quants, n a multiple of 32. While it works on src (in L1 after the
// maximum pass) it prefetches the first n values of next (one line per 32
// values, 8 KiB for 4096) into L1, so the next row's maximum pass starts
// with half its data at hand; the whole of src stays in L1 meanwhile. The
// caller guarantees |mul*v| < 127.5 for every v of src (a normal scale),
// so the packed int16 values equal the converted int32 ones: they are summed
// as int16 lanes (at most 254 per lane and step) and widened with VPMADDWD
// every 128 steps, before a lane can pass 32767.
TEXT ·quantizeQ8KVRowAVX2(SB), NOSPLIT, $0-44
	Q8KV_ENTRY

chunk:
	MOVQ CX, BX
	CMPQ BX, $128
	JBE  sized
	MOVQ $128, BX

sized:
	SUBQ BX, CX

loop:
	PREFETCHT0 (DX)
	VMULPS     (SI), Y8, Y0
	VMULPS     32(SI), Y8, Y1
	VMULPS     64(SI), Y8, Y2
	VMULPS     96(SI), Y8, Y3
	Q8KV_STORE32
	ADDQ       $128, SI
	ADDQ       $64, DX
	ADDQ       $32, DI
	DECQ       BX
	JNZ        loop

	Q8KV_WIDEN
	TESTQ    CX, CX
	JNZ      chunk

done:
	SUM_LANES
	MOVL AX, ret+40(FP)
	RET

// func quantizeQ8KVBF16AVX2(dst, src, next *byte, n int, mul float32) int32
// quantizeQ8KVRowAVX2 on n little-endian bfloat16 values (n a multiple of
// 32), each widened in the register (VPMOVZXWD, VPSLLD) as
// formats.BF16RowToFP32 does, so no float32 row is stored. The quants are
// cvtRoundSat's (saturating packs) for every mul; the sum, of int16 lanes
// widened every 128 steps, is right while every |mul*v| < 127.5. It
// prefetches one line of next per 64 bytes of src: the whole next row, for
// the maximum pass that comes next.
TEXT ·quantizeQ8KVBF16AVX2(SB), NOSPLIT, $0-44
	Q8KV_ENTRY

chunk:
	MOVQ CX, BX
	CMPQ BX, $128
	JBE  sized
	MOVQ $128, BX

sized:
	SUBQ BX, CX

loop:
	PREFETCHT0 (DX)
	VPMOVZXWD  (SI), Y0
	VPMOVZXWD  16(SI), Y1
	VPMOVZXWD  32(SI), Y2
	VPMOVZXWD  48(SI), Y3
	VPSLLD     $16, Y0, Y0
	VPSLLD     $16, Y1, Y1
	VPSLLD     $16, Y2, Y2
	VPSLLD     $16, Y3, Y3
	VMULPS     Y0, Y8, Y0
	VMULPS     Y1, Y8, Y1
	VMULPS     Y2, Y8, Y2
	VMULPS     Y3, Y8, Y3
	Q8KV_STORE32
	ADDQ       $64, SI
	ADDQ       $64, DX
	ADDQ       $32, DI
	DECQ       BX
	JNZ        loop

	Q8KV_WIDEN
	TESTQ    CX, CX
	JNZ      chunk

done:
	SUM_LANES
	MOVL AX, ret+40(FP)
	RET

// func quantizeQ8KVBF16AVX512(dst, src, next *byte, n int, mul float32) int32
// quantizeQ8KVBF16AVX2 with 512-bit vectors, 32 values per step: VPMOVSDB
// saturates each int32 to int8 as the two packs do, in order (no
// permutation), and the int32 lanes are summed as they are, so the sum is
// the quants' whatever mul.
TEXT ·quantizeQ8KVBF16AVX512(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         next+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS mul+32(FP), Z8
	VPXORD       Z10, Z10, Z10
	VPXORD       Z11, Z11, Z11
	SHRQ         $5, CX
	JZ           done

loop:
	PREFETCHT0 (DX)
	VPMOVZXWD  (SI), Z0
	VPMOVZXWD  32(SI), Z1
	VPSLLD     $16, Z0, Z0
	VPSLLD     $16, Z1, Z1
	VMULPS     Z0, Z8, Z0
	VMULPS     Z1, Z8, Z1
	VCVTPS2DQ  Z0, Z0
	VCVTPS2DQ  Z1, Z1
	VPADDD     Z0, Z10, Z10
	VPADDD     Z1, Z11, Z11
	VPMOVSDB   Z0, X0
	VPMOVSDB   Z1, X1
	VMOVDQU    X0, (DI)
	VMOVDQU    X1, 16(DI)
	ADDQ       $64, SI
	ADDQ       $64, DX
	ADDQ       $32, DI
	DECQ       CX
	JNZ        loop

done:
	VPADDD        Z11, Z10, Z10
	VEXTRACTI64X4 $1, Z10, Y1
	VPADDD        Y1, Y10, Y10
	SUM_LANES
	MOVL AX, ret+40(FP)
	RET

// Q8_ROW_BF16 is Q8_ROW on 32 little-endian bfloat16 values at R8, each
// widened in the register (VPMOVZXWD, VPSLLD) as formats.BF16RowToFP32 does.
#define Q8_ROW_BF16(off, out) \
	VBROADCASTSS off(DX), Y14; \
	VPMOVZXWD    (R8), Y8; \
	VPMOVZXWD    16(R8), Y9; \
	VPMOVZXWD    32(R8), Y10; \
	VPMOVZXWD    48(R8), Y11; \
	VPSLLD       $16, Y8, Y8; \
	VPSLLD       $16, Y9, Y9; \
	VPSLLD       $16, Y10, Y10; \
	VPSLLD       $16, Y11, Y11; \
	VMULPS       Y8, Y14, Y8; \
	VMULPS       Y9, Y14, Y9; \
	VMULPS       Y10, Y14, Y10; \
	VMULPS       Y11, Y14, Y11; \
	VCVTPS2DQ    Y8, Y8; \
	VCVTPS2DQ    Y9, Y9; \
	VCVTPS2DQ    Y10, Y10; \
	VCVTPS2DQ    Y11, Y11; \
	VPACKSSDW    Y9, Y8, Y8; \
	VPACKSSDW    Y11, Y10, Y10; \
	VPACKSSWB    Y10, Y8, Y8; \
	VPERMD       Y8, Y15, out; \
	ADDQ         BX, R8

// func quantizeQ8Rows8BF16AVX2(dst, src *byte, stride, n int, muls *[8]float32)
// quantizeQ8Rows8AVX2 on little-endian bfloat16 rows (row k at src +
// 2*stride*k bytes), widened in the registers: q8_KV_r8 from a bf16 model
// without float32 rows.
TEXT ·quantizeQ8Rows8BF16AVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    stride+16(FP), BX
	SHLQ    $1, BX
	MOVQ    n+24(FP), CX
	MOVQ    muls+32(FP), DX
	VMOVDQU q8perm<>(SB), Y15
	SHRQ    $5, CX
	JZ      done

loop:
	MOVQ SI, R8
	Q8_ROW_BF16(0, Y0)
	Q8_ROW_BF16(4, Y1)
	Q8_ROW_BF16(8, Y2)
	Q8_ROW_BF16(12, Y3)
	Q8_ROW_BF16(16, Y4)
	Q8_ROW_BF16(20, Y5)
	Q8_ROW_BF16(24, Y6)
	Q8_ROW_BF16(28, Y7)
	TRANSPOSE_WORDS_8X8
	STORE_COLUMNS(DI, 0, 32, 64, 96, 128, 160, 192, 224)

	ADDQ $64, SI
	ADDQ $256, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
