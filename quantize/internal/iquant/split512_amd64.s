//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 split searches of iq1_s and iq1_m (see splitTop512 in
// split512.go for the argument). One pass computes, sixteen i2 per vector,
// the reference's sumqx and sumq2 of every split and shift, rounded as the
// portable splitScore / iq1mSplitSums round them, and an approximate score
// a = sumqx*sumqx * rcp14(sumq2) (relative error below 2^-14 + 2^-23) for
// the positions with sumq2 > 0 (0 elsewhere); a second pass lists the
// vectors with any a >= T = max(a) * (1 - 2^-12): every position whose
// exact score is within 1.4e-5 of the maximum is among them. The caller
// recomputes those few positions exactly and walks them.
//
// It returns -1 (not safe) when max(a) is outside [1e-30, 1e30), a valid
// sumq2 is >= 2^100 (rcp14 near the bottom of the range), a valid square
// sumqx*sumqx lies in (0, 2^-100), or more than splitTop512Max vectors
// have candidates.

DATA top512Consts<>+0(SB)/4, $0x0d800000 // 2^-100
DATA top512Consts<>+4(SB)/4, $1e-30
DATA top512Consts<>+8(SB)/4, $1e30
DATA top512Consts<>+12(SB)/4, $0.999755859375 // 1 - 2^-12
DATA top512Consts<>+16(SB)/4, $0x71800000 // 2^100
DATA top512Consts<>+20(SB)/4, $1
GLOBL top512Consts<>(SB), RODATA|NOPTR, $24

// TOP512_INIT clears the accumulators: Z26 = max a, Z27 = max valid sumq2,
// Z29 = min over valid positions of bits(sumqx^2) - 1 (unsigned), Z28 = 1s,
// Z30 = 0.
#define TOP512_INIT \
	VPXORD       Z30, Z30, Z30 \
	VPXORD       Z26, Z26, Z26 \
	VPXORD       Z27, Z27, Z27 \
	VPTERNLOGD   $0xff, Z29, Z29, Z29 \
	VPBROADCASTD top512Consts<>+20(SB), Z28

// TOP512_SCORE scores one vector of positions: QX = sumqx, Q2 = sumq2, K1 the
// lanes in range; stores a at (R10) and advances R10. Uses Z14, Z15, K2.
#define TOP512_SCORE(QX, Q2) \
	VCMPPS     $0x1e, Z30, Q2, K1, K2 \
	VMULPS     QX, QX, Z14 \
	VRCP14PS   Q2, Z15 \
	VMULPS.Z   Z15, Z14, K2, Z15 \
	VMAXPS     Z26, Z15, Z26 \
	VMOVUPS    Z15, (R10) \
	ADDQ       $64, R10 \
	VMAXPS     Z27, Q2, K2, Z27 \
	VPSUBD     Z28, Z14, Z14 \
	VPMINUD    Z29, Z14, K2, Z29

// TOP512_CHECK reduces the accumulators and jumps to unsafe unless the
// maximum a is in [1e-30, 1e30), every valid sumq2 below 2^100 and no valid
// square in (0, 2^-100); then it leaves T broadcast in Z14. Uses Z0-Z2.
#define TOP512_CHECK \
	VEXTRACTF32X8 $1, Z27, Y0 \
	VMAXPS        Y27, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VMAXPS        X1, X0, X0 \
	VPERMILPS     $0x4e, X0, X1 \
	VMAXPS        X1, X0, X0 \
	VPERMILPS     $0xb1, X0, X1 \
	VMAXPS        X1, X0, X0 \
	VUCOMISS      top512Consts<>+16(SB), X0 \
	JCC           unsafe \
	VEXTRACTI32X8 $1, Z29, Y0 \
	VPMINUD       Y29, Y0, Y0 \
	VEXTRACTI128  $1, Y0, X1 \
	VPMINUD       X1, X0, X0 \
	VPSHUFD       $0x4e, X0, X1 \
	VPMINUD       X1, X0, X0 \
	VPSHUFD       $0xb1, X0, X1 \
	VPMINUD       X1, X0, X0 \
	VMOVD         X0, AX \
	CMPL          AX, $(0x0d800000-1) \
	JCS           unsafe \
	VEXTRACTF32X8 $1, Z26, Y0 \
	VMAXPS        Y26, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VMAXPS        X1, X0, X0 \
	VPERMILPS     $0x4e, X0, X1 \
	VMAXPS        X1, X0, X0 \
	VPERMILPS     $0xb1, X0, X1 \
	VMAXPS        X1, X0, X0 \
	VUCOMISS      top512Consts<>+4(SB), X0 \
	JCS           unsafe \
	VUCOMISS      top512Consts<>+8(SB), X0 \
	JCC           unsafe \
	VMULSS        top512Consts<>+12(SB), X0, X0 \
	VBROADCASTSS  X0, Z14

// IQ1S_SHIFT512 computes one shift's sums for the chunk (Z8 = sx[i2]-sx[i1],
// Z9 = sx[n]-sx[i2], Z10/Z11 the same of sw) as splitScore does: levels V0,
// V1, V2 (broadcast), AQX = (sx[i1]-sx[0])*v0 and AQ2 = ((sw[i1]-sw[0])*v0)*v0
// broadcast; LAST ends sumq2 from mid (Z13) and last (Z12 in, Z13 out).
#define IQ1S_SHIFT512(V1, V2, AQX, AQ2, LAST) \
	VMULPS      V1, Z8, Z12 \
	VADDPS      Z12, AQX, Z12 \
	VFMADD231PS V2, Z9, Z12 \
	VMULPS      V1, Z10, Z13 \
	VMULPS      V1, Z13, Z13 \
	VADDPS      Z13, AQ2, Z13 \
	VMULPS      V2, Z11, Z31 \
	LAST \
	TOP512_SCORE(Z12, Z13)

#define IQ1S_LAST_ROUNDED512 \
	VMULPS Z18, Z31, Z31 \
	VADDPS Z31, Z13, Z13

#define IQ1S_LAST_FUSED512 \
	VFMADD231PS Z21, Z31, Z13

// func iq1sSplitTop512(sumx, sumw *float32, vals *[6]float32, scores *float32, cand *[2 * splitTop512Max]uint64) int
// n = 32; sumx, sumw readable to index 47. Chunk k (i1, then c = i1, i1+16,
// ... <= 32, lanes i2 = c+lane <= 32) stores the plus shift's a[16], then
// the minus shift's; cand receives (chunk, mask) pairs, mask bit 16*shift +
// lane.
TEXT ·iq1sSplitTop512(SB), NOSPLIT, $0-48
	MOVQ         sumx+0(FP), SI
	MOVQ         sumw+8(FP), DI
	MOVQ         vals+16(FP), R9
	MOVQ         scores+24(FP), R10
	TOP512_INIT
	VBROADCASTSS 128(SI), Z4 // sx[32]
	VBROADCASTSS 128(DI), Z5 // sw[32]
	VBROADCASTSS 4(R9), Z17
	VBROADCASTSS 8(R9), Z18
	VBROADCASTSS 16(R9), Z20
	VBROADCASTSS 20(R9), Z21
	XORQ         BX, BX

s512Row:
	VMOVSS       (SI)(BX*4), X0
	VSUBSS       (SI), X0, X2 // sx[i1] - sx[0]
	VMOVSS       (DI)(BX*4), X1
	VSUBSS       (DI), X1, X3 // sw[i1] - sw[0]
	VMULSS       0(R9), X2, X6
	VMULSS       12(R9), X2, X7
	VMULSS       0(R9), X3, X2
	VMULSS       0(R9), X2, X2
	VMULSS       12(R9), X3, X3
	VMULSS       12(R9), X3, X3
	VBROADCASTSS X6, Z22
	VBROADCASTSS X7, Z23
	VBROADCASTSS X2, Z24
	VBROADCASTSS X3, Z25
	VBROADCASTSS X0, Z0
	VBROADCASTSS X1, Z1
	MOVQ         BX, R12

s512Chunk:
	MOVL        $33, CX
	SUBL        R12, CX
	CMPL        CX, $16
	JLE         s512Mask
	MOVL        $16, CX

s512Mask:
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS     (SI)(R12*4), Z6
	VMOVUPS     (DI)(R12*4), Z7
	VSUBPS      Z0, Z6, Z8
	VSUBPS      Z6, Z4, Z9
	VSUBPS      Z1, Z7, Z10
	VSUBPS      Z7, Z5, Z11
	IQ1S_SHIFT512(Z17, Z18, Z22, Z24, IQ1S_LAST_ROUNDED512)
	IQ1S_SHIFT512(Z20, Z21, Z23, Z25, IQ1S_LAST_FUSED512)
	ADDQ        $16, R12
	CMPQ        R12, $32
	JLE         s512Chunk
	INCQ        BX
	CMPQ        BX, $32
	JLE         s512Row

	TOP512_CHECK
	MOVQ scores+24(FP), R10
	MOVQ cand+32(FP), R8
	XORQ R13, R13 // entries
	XORQ SI, SI   // chunk

s512List:
	VCMPPS    $0x12, (R10), Z14, K1 // T <= a
	VCMPPS    $0x12, 64(R10), Z14, K2
	KORTESTW  K1, K2
	JZ        s512Next
	CMPQ      R13, $(2*8) // splitTop512Max entries
	JGE       unsafe
	KMOVW     K1, AX
	KMOVW     K2, CX
	SHLQ      $16, CX
	ORQ       CX, AX
	MOVQ      SI, (R8)(R13*8)
	MOVQ      AX, 8(R8)(R13*8)
	ADDQ      $2, R13

s512Next:
	ADDQ $128, R10
	INCQ SI
	CMPQ SI, $51
	JLT  s512List
	SHRQ $1, R13
	MOVQ R13, ret+40(FP)
	VZEROUPPER
	RET

unsafe:
	MOVQ $-1, ret+40(FP)
	VZEROUPPER
	RET

// IQ1M_GATHER512 loads the prefix sums at P (tables LO = s[0..15], HI =
// s[16..31]) of the vector's i1 and i2 (dword indices at 0(R11) and 64(R11))
// and leaves A = s[i1] - s[0], B = s[i2] - s[i1], C = s[16] - s[i2].
#define IQ1M_GATHER512(P, LO, HI, A, B, C) \
	VMOVDQU32    0(R11), A \
	VPERMI2PS    HI, LO, A \
	VMOVDQU32    64(R11), B \
	VPERMI2PS    HI, LO, B \
	VBROADCASTSS 64(P), C \
	VSUBPS       B, C, C \
	VSUBPS       A, B, B \
	VSUBPS.BCST  (P), A, A

// func iq1mSplitTop512(sx1, sx2, sw1, sw2 *float32, vals *[6]float32, idx *[iq1mTop512Vecs][32]int32, scores *float32, cand *[2 * splitTop512Max]uint64) int
// n = 16, each half's prefix sums readable to index 31. Vector v holds the
// positions 16v .. 16v+15 (of 153) of the reference's (i1, i2) order, their
// i1 at idx[v][0:16] and i2 at idx[v][16:32]; it stores a[16] of the shift
// combinations ++, +-, -+, -- (iq1mSplitSums' arithmetic). cand receives
// (vector, mask) pairs, mask bit 16*combination + lane.
TEXT ·iq1mSplitTop512(SB), NOSPLIT, $0-72
	MOVQ      sx1+0(FP), SI
	MOVQ      sx2+8(FP), DI
	MOVQ      sw1+16(FP), R8
	MOVQ      sw2+24(FP), R12
	MOVQ      vals+32(FP), R9
	MOVQ      idx+40(FP), R11
	MOVQ      scores+48(FP), R10
	TOP512_INIT
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VMOVUPS   (DI), Z2
	VMOVUPS   64(DI), Z3
	VMOVUPS   (R8), Z4
	VMOVUPS   64(R8), Z5
	VMOVUPS   (R12), Z6
	VMOVUPS   64(R12), Z7
	MOVQ      $153, BX // positions left

m512Vec:
	MOVL  BX, CX
	CMPL  CX, $16
	JLE   m512Mask
	MOVL  $16, CX

m512Mask:
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

	// First half, x: Z11 = fma(c1, u2, a1*u0 + b1*u1) for u = plus, Z12
	// for minus.
	IQ1M_GATHER512(SI, Z0, Z1, Z8, Z9, Z10)
	VMULPS.BCST       0(R9), Z8, Z11
	VMULPS.BCST       4(R9), Z9, Z13
	VADDPS            Z13, Z11, Z11
	VFMADD231PS.BCST  8(R9), Z10, Z11
	VMULPS.BCST       12(R9), Z8, Z12
	VMULPS.BCST       16(R9), Z9, Z13
	VADDPS            Z13, Z12, Z12
	VFMADD231PS.BCST  20(R9), Z10, Z12

	// First half, w: Z13 = fma(c1*u2, u2, (a1*u0)*u0 + (b1*u1)*u1) for
	// plus, Z23 for minus.
	IQ1M_GATHER512(R8, Z4, Z5, Z8, Z9, Z10)
	VMULPS.BCST       0(R9), Z8, Z13
	VMULPS.BCST       0(R9), Z13, Z13
	VMULPS.BCST       4(R9), Z9, Z22
	VMULPS.BCST       4(R9), Z22, Z22
	VADDPS            Z22, Z13, Z13
	VMULPS.BCST       8(R9), Z10, Z22
	VFMADD231PS.BCST  8(R9), Z22, Z13
	VMULPS.BCST       12(R9), Z8, Z23
	VMULPS.BCST       12(R9), Z23, Z23
	VMULPS.BCST       16(R9), Z9, Z22
	VMULPS.BCST       16(R9), Z22, Z22
	VADDPS            Z22, Z23, Z23
	VMULPS.BCST       20(R9), Z10, Z22
	VFMADD231PS.BCST  20(R9), Z22, Z23

	// Second half, w: the terms (a2*v0)*v0, (b2*v1)*v1, c2*v2 of plus in
	// Z24, Z25, Z22, of minus in Z8, Z9, Z10; then sumq2 of ++ (Z13), +-
	// (Z16), -+ (Z23), -- (Z17).
	IQ1M_GATHER512(R12, Z6, Z7, Z8, Z9, Z10)
	VMULPS.BCST       0(R9), Z8, Z24
	VMULPS.BCST       0(R9), Z24, Z24
	VMULPS.BCST       12(R9), Z8, Z8
	VMULPS.BCST       12(R9), Z8, Z8
	VMULPS.BCST       4(R9), Z9, Z25
	VMULPS.BCST       4(R9), Z25, Z25
	VMULPS.BCST       16(R9), Z9, Z9
	VMULPS.BCST       16(R9), Z9, Z9
	VMULPS.BCST       8(R9), Z10, Z22
	VMULPS.BCST       20(R9), Z10, Z10
	VADDPS            Z8, Z13, Z16
	VADDPS            Z9, Z16, Z16
	VFMADD231PS.BCST  20(R9), Z10, Z16
	VADDPS            Z24, Z13, Z13
	VADDPS            Z25, Z13, Z13
	VFMADD231PS.BCST  8(R9), Z22, Z13
	VADDPS            Z8, Z23, Z17
	VADDPS            Z9, Z17, Z17
	VFMADD231PS.BCST  20(R9), Z10, Z17
	VADDPS            Z24, Z23, Z23
	VADDPS            Z25, Z23, Z23
	VFMADD231PS.BCST  8(R9), Z22, Z23

	// Second half, x: a2*v0 and b2*v1 of plus in Z24, Z25, of minus in
	// Z8, Z9; then sumqx of ++ (Z18), +- (Z19), -+ (Z20), -- (Z21).
	IQ1M_GATHER512(DI, Z2, Z3, Z8, Z9, Z10)
	VMULPS.BCST       0(R9), Z8, Z24
	VMULPS.BCST       12(R9), Z8, Z8
	VMULPS.BCST       4(R9), Z9, Z25
	VMULPS.BCST       16(R9), Z9, Z9
	VADDPS            Z24, Z11, Z18
	VADDPS            Z25, Z18, Z18
	VFMADD231PS.BCST  8(R9), Z10, Z18
	VADDPS            Z8, Z11, Z19
	VADDPS            Z9, Z19, Z19
	VFMADD231PS.BCST  20(R9), Z10, Z19
	VADDPS            Z24, Z12, Z20
	VADDPS            Z25, Z20, Z20
	VFMADD231PS.BCST  8(R9), Z10, Z20
	VADDPS            Z8, Z12, Z21
	VADDPS            Z9, Z21, Z21
	VFMADD231PS.BCST  20(R9), Z10, Z21

	TOP512_SCORE(Z18, Z13)
	TOP512_SCORE(Z19, Z16)
	TOP512_SCORE(Z20, Z23)
	TOP512_SCORE(Z21, Z17)
	ADDQ $128, R11
	SUBQ $16, BX
	JG   m512Vec

	TOP512_CHECK
	MOVQ scores+48(FP), R10
	MOVQ cand+56(FP), R8
	XORQ R13, R13 // entries
	XORQ SI, SI   // vector

m512List:
	VCMPPS   $0x12, (R10), Z14, K1 // T <= a
	VCMPPS   $0x12, 64(R10), Z14, K2
	VCMPPS   $0x12, 128(R10), Z14, K3
	VCMPPS   $0x12, 192(R10), Z14, K4
	KORW     K1, K2, K5
	KORW     K3, K4, K6
	KORTESTW K5, K6
	JZ       m512Next
	CMPQ     R13, $(2*8) // splitTop512Max entries
	JGE      unsafe
	KMOVW    K1, AX
	KMOVW    K2, CX
	SHLQ     $16, CX
	ORQ      CX, AX
	KMOVW    K3, CX
	SHLQ     $32, CX
	ORQ      CX, AX
	KMOVW    K4, CX
	SHLQ     $48, CX
	ORQ      CX, AX
	MOVQ     SI, (R8)(R13*8)
	MOVQ     AX, 8(R8)(R13*8)
	ADDQ     $2, R13

m512Next:
	ADDQ $256, R10
	INCQ SI
	CMPQ SI, $10
	JLT  m512List
	SHRQ $1, R13
	MOVQ R13, ret+64(FP)
	VZEROUPPER
	RET

unsafe:
	MOVQ $-1, ret+64(FP)
	VZEROUPPER
	RET
