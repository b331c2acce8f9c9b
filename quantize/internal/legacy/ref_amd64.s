//go:build amd64 && !purego

#include "textflag.h"

// The reference's quantize_row_q4_0_ref, _q4_1_ref, _q5_0_ref and _q5_1_ref
// (what llama-quantize runs for these types without an importance matrix)
// with AVX2 and FMA, block after block, bit for bit as ref.go's Go loops:
//
// - The block's scale comes from its first value of largest magnitude (q4_0,
//   q5_0) or its first smallest and first largest value (q4_1, q5_1): the
//   extreme is found with a vector reduction and its first position with a
//   compare mask, so ties and signed zeros pick the value the reference's
//   scalar loop picks.
// - Quants are truncate(x*id + bias) with one rounding (VFMADD, as GCC
//   contracts the reference's code), converted to int32 with VCVTTPS2DQ as
//   the reference's (int8_t) and (uint8_t) casts are (low byte of the int32),
//   then limited with MIN as the reference does.
// - Scales become halves with VCVTPS2PH, nearest even, as GGML_FP32_TO_FP16.

DATA refc15<>+0(SB)/8, $0x0000000f0000000f
DATA refc15<>+8(SB)/8, $0x0000000f0000000f
DATA refc15<>+16(SB)/8, $0x0000000f0000000f
DATA refc15<>+24(SB)/8, $0x0000000f0000000f
GLOBL refc15<>(SB), RODATA|NOPTR, $32

DATA refc31<>+0(SB)/8, $0x0000001f0000001f
DATA refc31<>+8(SB)/8, $0x0000001f0000001f
DATA refc31<>+16(SB)/8, $0x0000001f0000001f
DATA refc31<>+24(SB)/8, $0x0000001f0000001f
GLOBL refc31<>(SB), RODATA|NOPTR, $32

DATA refcff<>+0(SB)/8, $0x000000ff000000ff
DATA refcff<>+8(SB)/8, $0x000000ff000000ff
DATA refcff<>+16(SB)/8, $0x000000ff000000ff
DATA refcff<>+24(SB)/8, $0x000000ff000000ff
GLOBL refcff<>(SB), RODATA|NOPTR, $32

// REF_LOAD puts the block's 32 values at SI in Y0..Y3.
#define REF_LOAD \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	VMOVUPS 64(SI), Y2; \
	VMOVUPS 96(SI), Y3

// REF_REDUCE(op, y, x, t) leaves op over the 8 lanes of y in every lane
// of x (y's low half), using t.
#define REF_REDUCE(op, y, x, tx) \
	VEXTRACTF128 $1, y, tx; \
	op           tx, x, x; \
	VPERMILPS    $0x4e, x, tx; \
	op           tx, x, x; \
	VPERMILPS    $0xb1, x, tx; \
	op           tx, x, x

// REF_FIRST(v, a, b, c, d) sets AX to the first position among the 32
// lanes of a, b, c, d (in that order) equal to v's lanes. a..d are
// overwritten with the compare masks; BX is clobbered.
#define REF_FIRST(v, a, b, c, d) \
	VCMPPS    $0, v, a, a; \
	VCMPPS    $0, v, b, b; \
	VCMPPS    $0, v, c, c; \
	VCMPPS    $0, v, d, d; \
	VMOVMSKPS a, AX; \
	VMOVMSKPS b, BX; \
	SHLL      $8, BX; \
	ORL       BX, AX; \
	VMOVMSKPS c, BX; \
	SHLL      $16, BX; \
	ORL       BX, AX; \
	VMOVMSKPS d, BX; \
	SHLL      $24, BX; \
	ORL       BX, AX; \
	BSFL      AX, AX

// REF_SIGNED_MAX leaves in X10 the block's first value of largest magnitude
// (Y15: magnitude mask), +0 if all are zeros: the reference starts from
// max = 0 and replaces it only by a larger magnitude, and adding +0 turns
// a -0 into +0 and leaves every other value as it is (X14 = 0).
#define REF_SIGNED_MAX \
	VANDPS       Y15, Y0, Y4; \
	VANDPS       Y15, Y1, Y5; \
	VANDPS       Y15, Y2, Y6; \
	VANDPS       Y15, Y3, Y7; \
	VMAXPS       Y5, Y4, Y8; \
	VMAXPS       Y7, Y6, Y9; \
	VMAXPS       Y9, Y8, Y8; \
	REF_REDUCE(VMAXPS, Y8, X8, X9); \
	VBROADCASTSS X8, Y8; \
	REF_FIRST(Y8, Y4, Y5, Y6, Y7); \
	VMOVSS       (SI)(AX*4), X10; \
	VADDSS       X14, X10, X10

// REF_EXTREME(op, v, vx, tx, dst, ok) leaves in dst the block's first
// value equal to op (VMINPS or VMAXPS) over its 32 values. A non-zero
// extreme is the value itself; only a zero one takes a search for its first
// position, where the first of equal zeros keeps its sign, as the
// reference's strict compares do. v (vx its low half) and tx are work
// registers, ok a label unique to the use; uses Y6-Y9.
#define REF_EXTREME(op, v, vx, tx, dst, ok) \
	op           Y1, Y0, v; \
	op           Y3, Y2, Y6; \
	op           Y6, v, v; \
	REF_REDUCE(op, v, vx, tx); \
	VMOVAPS      vx, dst; \
	VUCOMISS     X14, vx; \
	JNE          ok; \
	VBROADCASTSS vx, v; \
	VMOVAPS      Y0, Y6; \
	VMOVAPS      Y1, Y7; \
	VMOVAPS      Y2, Y8; \
	VMOVAPS      Y3, Y9; \
	REF_FIRST(v, Y6, Y7, Y8, Y9); \
	VMOVSS       (SI)(AX*4), dst; \
ok:

// REF_AFFINE(minok, maxok) is the head of q4_1 and q5_1: from the block's
// first smallest value m and first largest max, d = (max - m) / X13 and id
// in Y6 (REF_SCALE), d and m stored as halves at 0(DI) and 2(DI), and
// Y0..Y3 less m. minok and maxok are labels unique to the use.
#define REF_AFFINE(minok, maxok) \
	REF_EXTREME(VMINPS, Y4, X4, X5, X10, minok); \
	REF_EXTREME(VMAXPS, Y5, X5, X6, X9, maxok); \
	VSUBSS       X10, X9, X4; \
	VDIVSS       X13, X4, X4; \
	REF_SCALE(X4, 0); \
	VCVTPS2PH    $0, X10, X5; \
	VMOVD        X5, AX; \
	MOVW         AX, 2(DI); \
	VBROADCASTSS X10, Y10; \
	VSUBPS       Y10, Y0, Y0; \
	VSUBPS       Y10, Y1, Y1; \
	VSUBPS       Y10, Y2, Y2; \
	VSUBPS       Y10, Y3, Y3

// REF_SCALE(s, off) stores the half of the scale s (an X register) at
// off(DI) and leaves id = s != 0 ? 1/s : 0 in every lane of Y6 (X12 = 1,
// X14 = 0).
#define REF_SCALE(s, off) \
	VCVTPS2PH    $0, s, X5; \
	VMOVD        X5, AX; \
	MOVW         AX, off(DI); \
	VDIVSS       s, X12, X6; \
	VCMPSS       $4, X14, s, X7; \
	VANDPS       X7, X6, X6; \
	VBROADCASTSS X6, Y6

// REF_QUANTS(bias) sets Y0..Y3 to the int32 truncate(x*Y6 + bias).
#define REF_QUANTS(bias) \
	VFMADD213PS bias, Y6, Y0; \
	VFMADD213PS bias, Y6, Y1; \
	VFMADD213PS bias, Y6, Y2; \
	VFMADD213PS bias, Y6, Y3; \
	VCVTTPS2DQ  Y0, Y0; \
	VCVTTPS2DQ  Y1, Y1; \
	VCVTTPS2DQ  Y2, Y2; \
	VCVTTPS2DQ  Y3, Y3

// REF_MIN_INT8(lim) is MIN(lim, (int8_t)q) on Y0..Y3: the low byte,
// sign-extended, then the limit.
#define REF_MIN_INT8(lim) \
	VPSLLD  $24, Y0, Y0; \
	VPSLLD  $24, Y1, Y1; \
	VPSLLD  $24, Y2, Y2; \
	VPSLLD  $24, Y3, Y3; \
	VPSRAD  $24, Y0, Y0; \
	VPSRAD  $24, Y1, Y1; \
	VPSRAD  $24, Y2, Y2; \
	VPSRAD  $24, Y3, Y3; \
	VPMINSD lim, Y0, Y0; \
	VPMINSD lim, Y1, Y1; \
	VPMINSD lim, Y2, Y2; \
	VPMINSD lim, Y3, Y3

// REF_QH sets AX to the 32 fifth bits of Y0..Y3 (bit j from value j).
#define REF_QH \
	VPSLLD    $27, Y0, Y4; \
	VPSLLD    $27, Y1, Y5; \
	VPSLLD    $27, Y2, Y6; \
	VPSLLD    $27, Y3, Y7; \
	VMOVMSKPS Y4, AX; \
	VMOVMSKPS Y5, BX; \
	SHLL      $8, BX; \
	ORL       BX, AX; \
	VMOVMSKPS Y6, BX; \
	SHLL      $16, BX; \
	ORL       BX, AX; \
	VMOVMSKPS Y7, BX; \
	SHLL      $24, BX; \
	ORL       BX, AX

// REF_NIBBLES(off) stores the 16 bytes (q[j] | q[j+16] << 4) & 0xff at
// off(DI), q being Y0..Y3 in order; for the 5-bit types Y0..Y3 are first
// cut to their low 4 bits by the caller.
#define REF_NIBBLES(off) \
	VPSLLD       $4, Y2, Y2; \
	VPSLLD       $4, Y3, Y3; \
	VPOR         Y2, Y0, Y0; \
	VPOR         Y3, Y1, Y1; \
	VPAND        refcff<>(SB), Y0, Y0; \
	VPAND        refcff<>(SB), Y1, Y1; \
	VPACKUSDW    Y1, Y0, Y0; \
	VPERMQ       $0xd8, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPACKUSWB    X1, X0, X0; \
	VMOVDQU      X0, off(DI)

// REF_LOW4 cuts Y0..Y3 to their low 4 bits.
#define REF_LOW4 \
	VPSRLD $27, Y15, Y4; \
	VPAND  Y4, Y0, Y0; \
	VPAND  Y4, Y1, Y1; \
	VPAND  Y4, Y2, Y2; \
	VPAND  Y4, Y3, Y3

// REF_SETUP loads the arguments and the constants: Y15 the magnitude mask,
// X14 zero, X12 one, X13 the scale divisor (a float32's bits), Y11 the
// rounding bias broadcast (bits).
#define REF_SETUP(div, bias) \
	MOVQ         dst+0(FP), DI; \
	MOVQ         src+8(FP), SI; \
	MOVQ         nb+16(FP), CX; \
	MOVL         $0x7fffffff, AX; \
	VMOVD        AX, X15; \
	VPBROADCASTD X15, Y15; \
	VXORPS       X14, X14, X14; \
	MOVL         $0x3f800000, AX; \
	VMOVD        AX, X12; \
	MOVL         div, AX; \
	VMOVD        AX, X13; \
	MOVL         bias, AX; \
	VMOVD        AX, X11; \
	VPBROADCASTD X11, Y11

// func quantizeQ4_0RefAVX2(dst *byte, src *float32, nb int)
// d = max / -8, quants MIN(15, (int8_t)(x*id + 8.5)); 18-byte blocks.
TEXT ·quantizeQ4_0RefAVX2(SB), NOSPLIT, $0-24
	REF_SETUP($0xc1000000, $0x41080000)
	TESTQ CX, CX
	JZ    q40done

q40loop:
	REF_LOAD
	REF_SIGNED_MAX
	VDIVSS X13, X10, X4
	REF_SCALE(X4, 0)
	REF_QUANTS(Y11)
	REF_MIN_INT8(refc15<>(SB))
	REF_NIBBLES(2)
	ADDQ   $128, SI
	ADDQ   $18, DI
	DECQ   CX
	JNZ    q40loop

q40done:
	VZEROUPPER
	RET

// func quantizeQ5_0RefAVX2(dst *byte, src *float32, nb int)
// d = max / -16, quants MIN(31, (int8_t)(x*id + 16.5)); 22-byte blocks:
// d, the fifth bits, the low nibbles.
TEXT ·quantizeQ5_0RefAVX2(SB), NOSPLIT, $0-24
	REF_SETUP($0xc1800000, $0x41840000)
	TESTQ CX, CX
	JZ    q50done

q50loop:
	REF_LOAD
	REF_SIGNED_MAX
	VDIVSS X13, X10, X4
	REF_SCALE(X4, 0)
	REF_QUANTS(Y11)
	REF_MIN_INT8(refc31<>(SB))
	REF_QH
	MOVL   AX, 2(DI)
	REF_LOW4
	REF_NIBBLES(6)
	ADDQ   $128, SI
	ADDQ   $22, DI
	DECQ   CX
	JNZ    q50loop

q50done:
	VZEROUPPER
	RET

// func quantizeQ4_1RefAVX2(dst *byte, src *float32, nb int)
// d = (max - min) / 15, m = min, quants MIN(15, (int8_t)((x - min)*id +
// 0.5)); 20-byte blocks.
TEXT ·quantizeQ4_1RefAVX2(SB), NOSPLIT, $0-24
	REF_SETUP($0x41700000, $0x3f000000)
	TESTQ CX, CX
	JZ    q41done

q41loop:
	REF_LOAD
	REF_AFFINE(q41min, q41max)
	REF_QUANTS(Y11)
	REF_MIN_INT8(refc15<>(SB))
	REF_NIBBLES(4)
	ADDQ         $128, SI
	ADDQ         $20, DI
	DECQ         CX
	JNZ          q41loop

q41done:
	VZEROUPPER
	RET

// func quantizeQ5_1RefAVX2(dst *byte, src *float32, nb int)
// d = (max - min) / 31, m = min, quants (uint8_t)((x - min)*id + 0.5);
// 24-byte blocks: d, m, the fifth bits, the low nibbles.
TEXT ·quantizeQ5_1RefAVX2(SB), NOSPLIT, $0-24
	REF_SETUP($0x41f80000, $0x3f000000)
	TESTQ CX, CX
	JZ    q51done

q51loop:
	REF_LOAD
	REF_AFFINE(q51min, q51max)
	REF_QUANTS(Y11)
	REF_QH
	MOVL         AX, 4(DI)
	REF_LOW4
	REF_NIBBLES(8)
	ADDQ         $128, SI
	ADDQ         $24, DI
	DECQ         CX
	JNZ          q51loop

q51done:
	VZEROUPPER
	RET
