//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// THR_EVAL tells, for the candidate y in Z7 (float bits) of 16 scales,
// whether y is still short of the threshold between a (Z1) and b (Z2):
// K1 = (y-b)^2 >= (y-a)^2, the negation of COUNT_CHUNK's strict fall, with
// the same roundings; each such candidate moves the threshold in Z8 one
// step (Z6) up, and the candidate steps up.
#define THR_EVAL \
	VSUBPS  Z1, Z7, Z9         \
	VMULPS  Z9, Z9, Z9         \
	VSUBPS  Z2, Z7, Z10        \
	VMULPS  Z10, Z10, Z10      \
	VCMPPS  $0x1D, Z9, Z10, K1 \
	VPADDD  Z6, Z8, K1, Z8     \
	VPADDD  Z6, Z7, Z7

// THR_CHUNK is COUNT_CHUNK512 with the thresholds: XS is the chunk of x
// signed for the orientation (its lanes y = ±x), Z20-Z22 the thresholds of
// the pair's two scales; y >= t_j for the j+1 thresholds y has reached
// (nested: t_0 < t_1 < t_2), so q = v0, v1, v2 or v3 is built from v0 (Z16),
// v1 (Z17) and the steps v2-v1 (Z18), v3-v2 (Z19), exactly (small
// integers). X and W are the chunk of x and of w; the sums as COUNT_CHUNK.
#define THR_CHUNK(XS, X, W, ACCX, ACCQ) \
	VCMPPS      $0x1D, Z20, XS, K1 \
	VCMPPS      $0x1D, Z21, XS, K2 \
	VCMPPS      $0x1D, Z22, XS, K3 \
	VBLENDMPS   Z17, Z16, K1, Z28  \
	VADDPS      Z18, Z28, K2, Z28  \
	VADDPS      Z19, Z28, K3, Z28  \
	VMULPS      W, Z28, Z29        \
	VFMADD231PS X, Z29, ACCX       \
	VFMADD231PS Z28, Z29, ACCQ

// func iq2ksFitsThr512(x, w *float32, maxv float32, den *[32]float32, grid *iq2ksThrGrid, raw *[4][8]float32) (ok bool)
//
// The fits of iq2ksFitsCount512 for the 27 scales maxv/den[0..27) of one
// grid (den negative, so every scale has the sign of -maxv), with the
// nearest points found by comparing with thresholds: first, for 16 scales
// at a time (den[27..32) pad the second 16), the exact threshold of each
// pair of neighbouring grid points, searched among the candidates the grid
// names around the midpoint; then the pairs of scales as in
// iq2ksFitsCount512. The frame holds the thresholds: 0(SP) + 192h + 64j is
// threshold j of scales 16h..16h+15. ok is false, and raw untouched, when a
// threshold lies outside its candidates.
TEXT ·iq2ksFitsThr512(SB), NOSPLIT, $384-49
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	VBROADCASTSS maxv+16(FP), Z30
	MOVQ         den+24(FP), AX
	MOVQ         grid+32(FP), R8
	MOVQ         raw+40(FP), DX
	MOVL         $0x7fffffff, R10
	VPBROADCASTD R10, Z29
	MOVL         $0x3f000000, R10 // 0.5
	VPBROADCASTD R10, Z28
	KXORW        K7, K7, K7       // lanes whose threshold was not bracketed
	LEAQ         0(SP), R11
	XORQ         BX, BX

thrHalf:
	VMOVUPS      (AX), Z0
	VDIVPS       Z0, Z30, Z0 // d = maxv/den
	VPANDD       Z29, Z0, Z0 // |d|
	XORQ         R12, R12

thrPair:
	// a = |d|·v_j, b = |d|·v_{j+1}, the midpoint m = (a+b)·0.5; the
	// candidates are m + start + k·dir in the bits (dir is +1 for a
	// positive m, -1 for a negative one: one step up in value).
	VMULPS.BCST  iq2ksThrGrid_vb(R8)(R12*4), Z0, Z1
	VMULPS.BCST  (iq2ksThrGrid_vb+4)(R8)(R12*4), Z0, Z2
	VADDPS       Z2, Z1, Z5
	VMULPS       Z28, Z5, Z5
	VPBROADCASTD iq2ksThrGrid_dir(R8)(R12*4), Z6
	VPADDD.BCST  iq2ksThrGrid_start(R8)(R12*4), Z5, Z7
	VMOVDQA32    Z7, Z8
	// The first candidate must be short of the threshold, the last past
	// it; P is monotone in y, so the threshold is the first candidate
	// past it.
	THR_EVAL
	KNOTW        K1, K2
	KORW         K2, K7, K7
	MOVL         iq2ksThrGrid_mid(R8)(R12*4), CX

thrEval:
	THR_EVAL
	DECL         CX
	JNZ          thrEval
	THR_EVAL
	KORW         K1, K7, K7
	VMOVUPS      Z8, (R11)
	ADDQ         $64, R11
	INCQ         R12
	CMPQ         R12, $3
	JLT          thrPair
	ADDQ         $64, AX
	INCQ         BX
	CMPQ         BX, $2
	JLT          thrHalf
	KORTESTW     K7, K7
	JNZ          fail

	// x and w in both halves; the chunks of x signed for d (y = -sign(maxv)·x)
	// and for -d (y = sign(maxv)·x).
	VBROADCASTF64X4 0(SI), Z0
	VBROADCASTF64X4 32(SI), Z1
	VBROADCASTF64X4 64(SI), Z2
	VBROADCASTF64X4 96(SI), Z3
	VBROADCASTF64X4 0(DI), Z4
	VBROADCASTF64X4 32(DI), Z5
	VBROADCASTF64X4 64(DI), Z6
	VBROADCASTF64X4 96(DI), Z7
	MOVL         $0x80000000, R10
	VPBROADCASTD R10, Z31
	VPANDD       Z31, Z30, Z16
	VPXORD       Z31, Z16, Z16
	VPXORD       Z16, Z0, Z8
	VPXORD       Z16, Z1, Z9
	VPXORD       Z16, Z2, Z10
	VPXORD       Z16, Z3, Z11
	VPXORD       Z31, Z8, Z12
	VPXORD       Z31, Z9, Z13
	VPXORD       Z31, Z10, Z14
	VPXORD       Z31, Z11, Z15
	VBROADCASTSS iq2ksThrGrid_q(R8), Z16
	VBROADCASTSS (iq2ksThrGrid_q+4)(R8), Z17
	VBROADCASTSS (iq2ksThrGrid_q+8)(R8), Z18
	VBROADCASTSS (iq2ksThrGrid_q+12)(R8), Z19
	// Z23 picks the pair's scales from the 16 of its half: 2p&15 in the
	// low 8 lanes, 2p+1&15 in the high 8.
	MOVL         $1, R10
	VPBROADCASTD R10, Y28
	VPXORD       Z23, Z23, Z23
	VINSERTI64X4 $1, Y28, Z23, Z23
	MOVL         $2, R10
	VPBROADCASTD R10, Z30
	MOVL         $15, R10
	VPBROADCASTD R10, Z31
	XORQ         BX, BX

pairs:
	MOVQ         BX, R9
	SHRQ         $3, R9
	IMUL3Q       $192, R9, R9
	LEAQ         0(SP)(R9*1), R9
	VPERMPS      0(R9), Z23, Z20
	VPERMPS      64(R9), Z23, Z21
	VPERMPS      128(R9), Z23, Z22
	VPXORD       Z24, Z24, Z24
	VPXORD       Z25, Z25, Z25
	VPXORD       Z26, Z26, Z26
	VPXORD       Z27, Z27, Z27
	THR_CHUNK(Z8, Z0, Z4, Z24, Z25)
	THR_CHUNK(Z12, Z0, Z4, Z26, Z27)
	THR_CHUNK(Z9, Z1, Z5, Z24, Z25)
	THR_CHUNK(Z13, Z1, Z5, Z26, Z27)
	THR_CHUNK(Z10, Z2, Z6, Z24, Z25)
	THR_CHUNK(Z14, Z2, Z6, Z26, Z27)
	THR_CHUNK(Z11, Z3, Z7, Z24, Z25)
	THR_CHUNK(Z15, Z3, Z7, Z26, Z27)
	CMPQ         BX, $13
	JEQ          last
	// raw[i] gets the low halves, raw[i+1] the high halves.
	VSHUFF64X2   $0x44, Z25, Z24, Z20
	VSHUFF64X2   $0xEE, Z25, Z24, Z21
	VSHUFF64X2   $0x44, Z27, Z26, Z22
	VSHUFF64X2   $0xEE, Z27, Z26, Z28
	VMOVUPS      Z20, 0(DX)
	VMOVUPS      Z22, 64(DX)
	VMOVUPS      Z21, 128(DX)
	VMOVUPS      Z28, 192(DX)
	ADDQ         $256, DX
	VPADDD       Z30, Z23, Z23
	VPANDD       Z31, Z23, Z23
	INCQ         BX
	JMP          pairs

last:
	// The 27th scale; the high halves are den[27]'s padding.
	VMOVUPS      Y24, 0(DX)
	VMOVUPS      Y25, 32(DX)
	VMOVUPS      Y26, 64(DX)
	VMOVUPS      Y27, 96(DX)
	MOVB         $1, ok+48(FP)
	VZEROUPPER
	RET

fail:
	MOVB         $0, ok+48(FP)
	VZEROUPPER
	RET
