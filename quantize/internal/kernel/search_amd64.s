//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// 1.5*2^23: adding it to a float32 in (-2^22, 2^22) rounds to an integer,
// ties to even (the reference's nearest_int); with the product fused into
// the addition the exact product is rounded.
DATA qxMagic<>+0(SB)/4, $0x4b400000
GLOBL qxMagic<>(SB), RODATA|NOPTR, $4

// FIRST_ABSMAX leaves in X0 the first of the CX values at SI of largest
// magnitude (the portable loops' ax > amax, scalar, in index order) and in
// X1 that magnitude. Uses X2-X4, X9, R10.
#define FIRST_ABSMAX \
	VMOVSS    qkx2Abs<>(SB), X9; \
	VXORPS    X0, X0, X0; \
	VXORPS    X1, X1, X1; \
	XORQ      R10, R10; \
absmax: \
	VMOVSS    (SI)(R10*4), X2; \
	VANDPS    X9, X2, X3; \
	VCMPSS    $0x1e, X1, X3, X4; \
	VBLENDVPS X4, X3, X1, X1; \
	VBLENDVPS X4, X2, X0, X0; \
	INCQ      R10; \
	CMPQ      R10, CX; \
	JLT       absmax

// QX_PASS sets AX to the mask of the eight lanes whose sums (LX = Σwx·l,
// L2 = Σ(w·l)·l) pass make_qx_quants' test against best (Y14): L2 > 0
// and float32(LX·LX) > float32(best·L2). Uses Y6-Y8.
#define QX_PASS(LX, L2) \
	VMULPS    LX, LX, Y6 \
	VMULPS    L2, Y14, Y7 \
	VCMPPS    $0x1e, Y7, Y6, Y6 \
	VXORPS    Y8, Y8, Y8 \
	VCMPPS    $0x1e, Y8, L2, Y7 \
	VANDPS    Y7, Y6, Y6 \
	VMOVMSKPS Y6, AX

// func qxTrialSumsAVX2(nums *[48]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[48]float32) uint64
// Lanes hold trials, 16 at a time (Y0, Y12); the loop runs over the values
// in order, so each lane's sums are the sequential sums of its trial. R12
// collects the mask, 16 bits per group, rotated into place.
TEXT ·qxTrialSumsAVX2(SB), NOSPLIT, $0-96
	MOVQ         nums+0(FP), AX
	MOVQ         x+16(FP), SI
	MOVQ         w+24(FP), DI
	MOVQ         wx+32(FP), DX
	MOVQ         n+40(FP), CX
	VBROADCASTSS lo+48(FP), Y2
	VBROADCASTSS hi+52(FP), Y3
	VBROADCASTSS qxMagic<>(SB), Y1
	VBROADCASTSS max+8(FP), Y13
	VBROADCASTSS best+56(FP), Y14
	MOVQ         scales+64(FP), R11
	MOVQ         sumlx+72(FP), R8
	MOVQ         suml2+80(FP), R9
	XORQ         BX, BX
	XORQ         R12, R12

group:
	MOVQ    nums+0(FP), AX    // (QX_PASS uses AX)
	VMOVUPS (AX)(BX*1), Y0
	VMOVUPS 32(AX)(BX*1), Y12
	VDIVPS  Y13, Y0, Y0       // scale = num/max
	VDIVPS  Y13, Y12, Y12
	VMOVUPS Y0, (R11)(BX*1)
	VMOVUPS Y12, 32(R11)(BX*1)
	VXORPS  Y4, Y4, Y4
	VXORPS  Y5, Y5, Y5
	VXORPS  Y10, Y10, Y10
	VXORPS  Y11, Y11, Y11
	XORQ    R10, R10

value:
	VBROADCASTSS (SI)(R10*4), Y6
	VBROADCASTSS (SI)(R10*4), Y7
	VFMADD213PS  Y1, Y0, Y6   // scale*x + magic, rounded once
	VFMADD213PS  Y1, Y12, Y7
	VSUBPS       Y1, Y6, Y6   // the rounded product
	VSUBPS       Y1, Y7, Y7
	VMAXPS       Y2, Y6, Y6
	VMAXPS       Y2, Y7, Y7
	VMINPS       Y3, Y6, Y6   // l
	VMINPS       Y3, Y7, Y7
	VBROADCASTSS (DX)(R10*4), Y8
	VMULPS       Y6, Y8, Y9   // wx*l
	VMULPS       Y7, Y8, Y8
	VADDPS       Y9, Y4, Y4
	VADDPS       Y8, Y10, Y10
	VBROADCASTSS (DI)(R10*4), Y8
	VMULPS       Y6, Y8, Y9   // w*l
	VMULPS       Y7, Y8, Y8
	VMULPS       Y6, Y9, Y9   // (w*l)*l
	VMULPS       Y7, Y8, Y8
	VADDPS       Y9, Y5, Y5
	VADDPS       Y8, Y11, Y11
	INCQ         R10
	CMPQ         R10, CX
	JLT          value

	VMOVUPS Y4, (R8)(BX*1)
	VMOVUPS Y10, 32(R8)(BX*1)
	VMOVUPS Y5, (R9)(BX*1)
	VMOVUPS Y11, 32(R9)(BX*1)
	QX_PASS(Y4, Y5)
	MOVL    AX, R13
	QX_PASS(Y10, Y11)
	SHLL    $8, AX
	ORL     R13, AX
	ORQ     AX, R12
	RORQ    $16, R12
	ADDQ    $64, BX
	CMPQ    BX, $(const_qxLanes*4)
	JLT     group
	RORQ    $16, R12
	MOVQ    R12, ret+88(FP)
	VZEROUPPER
	RET

// QX_PASS512 sets AX to the mask of the sixteen lanes whose sums (LX, L2)
// pass make_qx_quants' test against best (Z14), as QX_PASS does (Z22 = 0).
// Uses Z6, Z7, K1, K2.
#define QX_PASS512(LX, L2) \
	VMULPS    LX, LX, Z6 \
	VMULPS    L2, Z14, Z7 \
	VCMPPS    $0x1e, Z7, Z6, K1 \
	VCMPPS    $0x1e, Z22, L2, K2 \
	KANDW     K1, K2, K1 \
	KMOVW     K1, AX

// func qxTrialSums512(nums *[48]float32, max float32, x, w, wx *float32, n int, lo, hi, best float32, scales, sumlx, suml2 *[48]float32) uint64
// qxTrialSumsAVX2 with all 48 trials in three 512-bit registers (Z0, Z12,
// Z16) and one pass over the values: each lane's operations are the same,
// so its sums are the same, bit for bit.
TEXT ·qxTrialSums512(SB), NOSPLIT, $0-96
	MOVQ         nums+0(FP), AX
	MOVQ         x+16(FP), SI
	MOVQ         w+24(FP), DI
	MOVQ         wx+32(FP), DX
	MOVQ         n+40(FP), CX
	VBROADCASTSS lo+48(FP), Z2
	VBROADCASTSS hi+52(FP), Z3
	VBROADCASTSS qxMagic<>(SB), Z1
	VBROADCASTSS max+8(FP), Z13
	VBROADCASTSS best+56(FP), Z14
	MOVQ         scales+64(FP), R11
	MOVQ         sumlx+72(FP), R8
	MOVQ         suml2+80(FP), R9
	VMOVUPS      (AX), Z0
	VMOVUPS      64(AX), Z12
	VMOVUPS      128(AX), Z16
	VDIVPS       Z13, Z0, Z0      // scale = num/max
	VDIVPS       Z13, Z12, Z12
	VDIVPS       Z13, Z16, Z16
	VMOVUPS      Z0, (R11)
	VMOVUPS      Z12, 64(R11)
	VMOVUPS      Z16, 128(R11)
	VPXORD       Z4, Z4, Z4
	VPXORD       Z5, Z5, Z5
	VPXORD       Z10, Z10, Z10
	VPXORD       Z11, Z11, Z11
	VPXORD       Z20, Z20, Z20
	VPXORD       Z21, Z21, Z21
	XORQ         R10, R10

value512:
	VBROADCASTSS (SI)(R10*4), Z17
	VMOVAPS      Z17, Z6
	VMOVAPS      Z17, Z7
	VFMADD213PS  Z1, Z0, Z6       // scale*x + magic, rounded once
	VFMADD213PS  Z1, Z12, Z7
	VFMADD213PS  Z1, Z16, Z17
	VSUBPS       Z1, Z6, Z6       // the rounded product
	VSUBPS       Z1, Z7, Z7
	VSUBPS       Z1, Z17, Z17
	VMAXPS       Z2, Z6, Z6
	VMAXPS       Z2, Z7, Z7
	VMAXPS       Z2, Z17, Z17
	VMINPS       Z3, Z6, Z6       // l
	VMINPS       Z3, Z7, Z7
	VMINPS       Z3, Z17, Z17
	VBROADCASTSS (DX)(R10*4), Z8
	VMULPS       Z6, Z8, Z9       // wx*l
	VADDPS       Z9, Z4, Z4
	VMULPS       Z7, Z8, Z9
	VADDPS       Z9, Z10, Z10
	VMULPS       Z17, Z8, Z9
	VADDPS       Z9, Z20, Z20
	VBROADCASTSS (DI)(R10*4), Z8
	VMULPS       Z6, Z8, Z9       // w*l
	VMULPS       Z6, Z9, Z9       // (w*l)*l
	VADDPS       Z9, Z5, Z5
	VMULPS       Z7, Z8, Z9
	VMULPS       Z7, Z9, Z9
	VADDPS       Z9, Z11, Z11
	VMULPS       Z17, Z8, Z9
	VMULPS       Z17, Z9, Z9
	VADDPS       Z9, Z21, Z21
	INCQ         R10
	CMPQ         R10, CX
	JLT          value512

	VMOVUPS    Z4, (R8)
	VMOVUPS    Z10, 64(R8)
	VMOVUPS    Z20, 128(R8)
	VMOVUPS    Z5, (R9)
	VMOVUPS    Z11, 64(R9)
	VMOVUPS    Z21, 128(R9)
	VPXORD     Z22, Z22, Z22
	QX_PASS512(Z4, Z5)
	MOVQ       AX, R12
	QX_PASS512(Z10, Z11)
	SHLQ       $16, AX
	ORQ        AX, R12
	QX_PASS512(Z20, Z21)
	SHLQ       $32, AX
	ORQ        AX, R12
	MOVQ       R12, ret+88(FP)
	VZEROUPPER
	RET

// func qxFirstAVX2(x, w *float32, n int, nmax float32, squares bool, wx *float32, L *int8, out *qxFirst)
// The first passes of MakeQxQuants (scalar, in index order): the value of
// largest magnitude (the first one, as the portable loop's ax > amax) and
// that magnitude, iscale = -nmax/max, then (with squares, w[i] = x[i]·x[i]
// rounded first) wx[i] = w[i]·x[i] rounded, L[i] = l + nmax with l =
// clamp(nearest(iscale·x[i]), -nmax, nmax-1), and the fused sums Σwx·l and
// Σ(w·l)·l. With a largest magnitude of 0 or one that is not finite the
// second pass computes garbage, which the caller discards.
TEXT ·qxFirstAVX2(SB), NOSPLIT, $0-56
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   wx+32(FP), DX
	MOVQ   L+40(FP), BX
	MOVQ   out+48(FP), R8
	FIRST_ABSMAX                   // max in X0, amax in X1

	VMOVSS    X0, qxFirst_max(R8)
	VMOVSS    X1, qxFirst_amax(R8)
	VMOVSS    nmax+24(FP), X10     // nmax
	VXORPS    X11, X11, X11
	VSUBSS    X10, X11, X11        // lo = -nmax
	VDIVSS    X0, X11, X2          // iscale = -nmax/max
	VMOVSS    X2, qxFirst_iscale(R8)
	VMOVSS    qkx2One<>(SB), X12
	VSUBSS    X12, X10, X12        // hi = nmax-1
	VCVTTSS2SI X10, R9             // nmax as an integer
	VMOVSS    qxMagic<>(SB), X13
	VXORPS    X14, X14, X14        // Σwx·l
	VXORPS    X15, X15, X15        // Σ(w·l)·l
	XORQ      R10, R10
	CMPB      squares+28(FP), $0
	JEQ       firstloop

squareloop:
	VMOVSS (SI)(R10*4), X3
	VMULSS X3, X3, X3
	VMOVSS X3, (DI)(R10*4)
	INCQ   R10
	CMPQ   R10, CX
	JLT    squareloop
	XORQ   R10, R10

firstloop:
	VMOVSS      (SI)(R10*4), X3    // v
	VMOVSS      (DI)(R10*4), X5    // w
	VMULSS      X3, X5, X6         // wx, rounded
	VMOVSS      X6, (DX)(R10*4)
	VFMADD213SS X13, X2, X3        // iscale*v + magic, rounded once
	VSUBSS      X13, X3, X3
	VMAXSS      X11, X3, X3
	VMINSS      X12, X3, X3        // l
	VCVTTSS2SI  X3, AX
	ADDL        R9, AX
	MOVB        AX, (BX)(R10*1)
	VFMADD231SS X3, X6, X14        // Σwx·l, fused
	VMULSS      X3, X5, X7         // w·l, rounded
	VFMADD231SS X3, X7, X15        // Σ(w·l)·l, fused
	INCQ        R10
	CMPQ        R10, CX
	JLT         firstloop

	VMOVSS X14, qxFirst_sumlx(R8)
	VMOVSS X15, qxFirst_suml2(R8)
	RET

DATA qkx2One<>+0(SB)/4, $0x3f800000
GLOBL qkx2One<>(SB), RODATA|NOPTR, $4

// QKX3_FIT evaluates the fit of four trials from their sums A (Σw·l),
// B (Σw·l²), C (Σw·l·x) with Y14 = sumW, Y15 = sumX, Y7 = sumX2, and stores D, scale,
// min and the error in the lanes of qkx3Lanes at R8, from byte OFF. The
// operations are those of MakeQkx3Quants and quadraticError, fused where
// they use math.FMA. Where no lane's min is positive (almost every call:
// the min starts at min(x) <= 0) the division for the clamped scale,
// Σw·l·x / Σw·l², is skipped, jumping to the label pos (q2_K +5 % on the
// Intel Xeon, whose divisions are slow).
#define QKX3_FIT(A, B, C, OFF, pos) \
	VMULPD       A, A, Y0 \
	VFMSUB231PD  B, Y14, Y0 \
	VMULPD       C, Y14, Y1 \
	VFNMADD231PD A, Y15, Y1 \
	VDIVPD       Y0, Y1, Y1 \
	VMULPD       C, A, Y2 \
	VFMSUB231PD  Y15, B, Y2 \
	VDIVPD       Y0, Y2, Y2 \
	VXORPD       Y3, Y3, Y3 \
	VCMPPD       $0x1e, Y3, Y2, Y4 \
	VTESTPD      Y4, Y4 \
	JZ           pos \
	VDIVPD       B, C, Y5 \
	VBLENDVPD    Y4, Y5, Y1, Y1 \
	VANDNPD      Y2, Y4, Y2 \
pos: \
	VADDPD       Y1, Y1, Y3 \
	VMOVAPD      Y7, Y5 \
	VFNMADD231PD C, Y3, Y5 \
	VADDPD       Y2, Y2, Y6 \
	VFNMADD231PD Y15, Y6, Y5 \
	VMULPD       Y2, Y3, Y6 \
	VFMADD231PD  A, Y6, Y5 \
	VMULPD       Y1, Y1, Y6 \
	VFMADD231PD  B, Y6, Y5 \
	VMULPD       Y2, Y2, Y6 \
	VFMADD231PD  Y14, Y6, Y5 \
	VMOVUPD      Y0, (qkx3Lanes_D+OFF)(R8) \
	VMOVUPD      Y1, (qkx3Lanes_scale+OFF)(R8) \
	VMOVUPD      Y2, (qkx3Lanes_min+OFF)(R8) \
	VMOVUPD      Y5, (qkx3Lanes_mad+OFF)(R8)

// QKX3_CAND sets AX to the mask of the four lanes just fitted (D in Y0,
// error in Y5) with D > 0 and error < bestMAD (in R9). Uses Y8-Y10.
#define QKX3_CAND \
	VMOVQ        R9, X8 \
	VBROADCASTSD X8, Y8 \
	VXORPD       Y9, Y9, Y9 \
	VCMPPD       $0x1e, Y9, Y0, Y10 \
	VCMPPD       $0x11, Y8, Y5, Y9 \
	VANDPD       Y9, Y10, Y10 \
	VMOVMSKPD    Y10, AX

// QKX3_DIFFS stores the differences xm = max(x - min, 0) (float32, as
// setDiffs32) of the CX values at SI as float64 in out.xm (out at R8), four
// at a time and then one at a time (X14 = min). Uses X3, X15, BX, R10.
#define QKX3_DIFFS \
	VXORPS       Y15, Y15, Y15 \
	XORQ         R10, R10 \
	LEAQ         -4(CX), BX \
diffs4: \
	CMPQ      R10, BX \
	JGT       diffs1 \
	VMOVUPS   (SI)(R10*4), X3 \
	VSUBPS    X14, X3, X3 \
	VMAXPS    X15, X3, X3 \
	VCVTPS2PD X3, Y3 \
	VMOVUPD   Y3, qkx3Lanes_xm(R8)(R10*8) \
	ADDQ      $4, R10 \
	JMP       diffs4 \
diffs1: \
	CMPQ      R10, CX \
	JGE       diffsdone \
	VMOVSS    (SI)(R10*4), X3 \
	VSUBSS    X14, X3, X3 \
	VMAXSS    X15, X3, X3 \
	VCVTSS2SD X3, X3, X3 \
	VMOVSD    X3, qkx3Lanes_xm(R8)(R10*8) \
	INCQ      R10 \
	JMP       diffs1 \
diffsdone:

// QKX3_SUMS(label, i0, i1, mag, nmax, l0, l1, t, p0, p1, a0, b0, c0, a1,
// b1, c1) is the trial loop of qkx3Trials8AVX2 (Y registers, four trials
// per set) and qkx3Trials16AVX512 (Z registers, eight): over the CX values
// in order, l = min(nearest(iscale·xm), nmax) for the two sets of trials
// (iscales i0, i1 as float64, mag = 1.5*2^52) and their sums Σw·l (a0, a1),
// Σw·l² (b0, b1) and Σw·l·x (c0, c1), zeroed first (xm in out at R8, w at
// DX, x at R11). l0, l1, t, p0 and p1 are scratch; R10 counts.
#define QKX3_SUMS(label, i0, i1, mag, nmax, l0, l1, t, p0, p1, a0, b0, c0, a1, b1, c1) \
	VXORPD       a0, a0, a0 \
	VXORPD       b0, b0, b0 \
	VXORPD       c0, c0, c0 \
	VXORPD       a1, a1, a1 \
	VXORPD       b1, b1, b1 \
	VXORPD       c1, c1, c1 \
	XORQ         R10, R10 \
label: \
	VBROADCASTSD qkx3Lanes_xm(R8)(R10*8), l0 \
	VMOVAPD      l0, l1 \
	VFMADD213PD  mag, i0, l0 \
	VFMADD213PD  mag, i1, l1 \
	VSUBPD       mag, l0, l0 \
	VSUBPD       mag, l1, l1 \
	VMINPD       nmax, l0, l0 \
	VMINPD       nmax, l1, l1 \
	VBROADCASTSD (DX)(R10*8), t \
	VMULPD       l0, t, p0 \
	VMULPD       l1, t, p1 \
	VADDPD       p0, a0, a0 \
	VADDPD       p1, a1, a1 \
	VFMADD231PD  l0, p0, b0 \
	VFMADD231PD  l1, p1, b1 \
	VBROADCASTSD (R11)(R10*8), t \
	VFMADD231PD  t, p0, c0 \
	VFMADD231PD  t, p1, c1 \
	INCQ         R10 \
	CMPQ         R10, CX \
	JLT          label

// QKX3_ARGS loads the arguments of qkx3Trials8AVX2 and qkx3Trials16AVX512
// (same frame): den broadcast into DEN, the numerators into NUMS (eight or
// sixteen by the registers' width), min into Y14, the pointers into AX, SI,
// DX, R11, R8 and n into CX.
#define QKX3_ARGS(DEN, NUMS) \
	MOVQ         nums+0(FP), AX \
	VBROADCASTSS den+8(FP), DEN \
	MOVQ         x+16(FP), SI \
	VBROADCASTSS min+24(FP), Y14 \
	MOVQ         wd+32(FP), DX \
	MOVQ         xd+40(FP), R11 \
	MOVQ         n+48(FP), CX \
	MOVQ         out+96(FP), R8 \
	VMOVUPS      (AX), NUMS

// QKX3_CONSTS broadcasts 1.5*2^52 into MAG and nmax, as float64, into NMAX.
#define QKX3_CONSTS(MAG, NMAX) \
	VBROADCASTSD qkx3Magic52<>(SB), MAG \
	VBROADCASTSS nmax+56(FP), X15 \
	VCVTSS2SD    X15, X15, X15 \
	VBROADCASTSD X15, NMAX

// func qkx3Trials8AVX2(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32
// Eight trials in two groups of four float64 lanes: Y8-Y10 hold the sums of
// trials 0-3, Y11-Y13 those of trials 4-7. A first pass stores the
// differences xm = max(x - min, 0) (float32, as setDiffs32) as float64 in
// out.xm; the quants are then rounded in float64: the product of the
// float32 iscale and xm is exact there and below 2^22, so adding 1.5*2^52
// rounds it to the same integer as the float32 rounding does. The products
// w·l, w·l·l and w·l·x are exact in float64 (nmax <= 31), so fusing the
// last two into their sums changes nothing.
TEXT ·qkx3Trials8AVX2(SB), NOSPLIT, $0-108
	QKX3_ARGS(Y1, Y0)
	VDIVPS       Y1, Y0, Y0        // iscale = num/den
	VMOVUPS      Y0, qkx3Lanes_iscale(R8)
	QKX3_DIFFS
	VEXTRACTF128 $1, Y0, X1
	VCVTPS2PD    X0, Y0            // iscales of trials 0-3
	VCVTPS2PD    X1, Y1            // and 4-7, as float64
	QKX3_CONSTS(Y2, Y15)
	QKX3_SUMS(trial8, Y0, Y1, Y2, Y15, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13)

	VBROADCASTSD sumW+64(FP), Y14
	VBROADCASTSD sumX+72(FP), Y15
	VBROADCASTSD sumX2+80(FP), Y7
	MOVQ         bestMAD+88(FP), R9
	QKX3_FIT(Y8, Y9, Y10, 0, fitlo8)
	QKX3_CAND
	MOVL         AX, DI
	QKX3_FIT(Y11, Y12, Y13, 32, fithi8)
	QKX3_CAND
	SHLL         $4, AX
	ORL          DI, AX
	MOVL         AX, ret+104(FP)
	VZEROUPPER
	RET

// QKX3_FIT512 is QKX3_FIT (with QKX3_CAND) on eight trials in 512-bit
// registers, Z7 = sumX2, Z21 = bestMAD, Z22 = 0: the same operations per
// lane, the blends as masked moves, the clamped scale's division skipped as
// there. It leaves the candidates' mask in K2. Uses Z0-Z6, K1, K3.
#define QKX3_FIT512(A, B, C, OFF, pos) \
	VMULPD       A, A, Z0 \
	VFMSUB231PD  B, Z14, Z0 \
	VMULPD       C, Z14, Z1 \
	VFNMADD231PD A, Z15, Z1 \
	VDIVPD       Z0, Z1, Z1 \
	VMULPD       C, A, Z2 \
	VFMSUB231PD  Z15, B, Z2 \
	VDIVPD       Z0, Z2, Z2 \
	VCMPPD       $0x1e, Z22, Z2, K1 \
	KORTESTW     K1, K1 \
	JZ           pos \
	VDIVPD       B, C, Z5 \
	VMOVAPD      Z5, K1, Z1 \
	VMOVAPD      Z22, K1, Z2 \
pos: \
	VADDPD       Z1, Z1, Z3 \
	VMOVAPD      Z7, Z5 \
	VFNMADD231PD C, Z3, Z5 \
	VADDPD       Z2, Z2, Z6 \
	VFNMADD231PD Z15, Z6, Z5 \
	VMULPD       Z2, Z3, Z6 \
	VFMADD231PD  A, Z6, Z5 \
	VMULPD       Z1, Z1, Z6 \
	VFMADD231PD  B, Z6, Z5 \
	VMULPD       Z2, Z2, Z6 \
	VFMADD231PD  Z14, Z6, Z5 \
	VMOVUPD      Z0, (qkx3Lanes_D+OFF)(R8) \
	VMOVUPD      Z1, (qkx3Lanes_scale+OFF)(R8) \
	VMOVUPD      Z2, (qkx3Lanes_min+OFF)(R8) \
	VMOVUPD      Z5, (qkx3Lanes_mad+OFF)(R8) \
	VCMPPD       $0x1e, Z22, Z0, K2 \
	VCMPPD       $0x11, Z21, Z5, K3 \
	KANDW        K2, K3, K2

// func qkx3Trials16AVX512(nums *float32, den float32, x *float32, min float32, wd *float64, xd *[64]float64, n int, nmax float32, sumW, sumX, sumX2, bestMAD float64, out *qkx3Lanes) uint32
// qkx3Trials8AVX2 for sixteen trials, in two groups of eight float64 lanes:
// Z8-Z10 hold the sums of trials 0-7, Z11-Z13 those of trials 8-15. The
// sums are chains of dependent additions, so the AVX2 loop's time per value
// is their latency; here the same chains carry twice the trials. Every
// operation is that of qkx3Trials8AVX2 on the same lane: the same results,
// bit for bit. The mask has trial k in bit k.
TEXT ·qkx3Trials16AVX512(SB), NOSPLIT, $0-108
	QKX3_ARGS(Z1, Z0)
	VDIVPS       Z1, Z0, Z0        // iscale = num/den
	VMOVUPS      Z0, qkx3Lanes_iscale(R8)
	QKX3_DIFFS
	VEXTRACTF64X4 $1, Z0, Y1
	VCVTPS2PD    Y0, Z16           // iscales of trials 0-7
	VCVTPS2PD    Y1, Z17           // and 8-15, as float64
	QKX3_CONSTS(Z18, Z19)
	QKX3_SUMS(trial16, Z16, Z17, Z18, Z19, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13)

	VBROADCASTSD sumW+64(FP), Z14
	VBROADCASTSD sumX+72(FP), Z15
	VBROADCASTSD sumX2+80(FP), Z7
	VBROADCASTSD bestMAD+88(FP), Z21
	VPXORQ       Z22, Z22, Z22
	QKX3_FIT512(Z8, Z9, Z10, 0, fitlo16)
	KMOVW        K2, DI
	QKX3_FIT512(Z11, Z12, Z13, 64, fithi16)
	KMOVW        K2, AX
	SHLL         $8, AX
	ORL          DI, AX
	MOVL         AX, ret+104(FP)
	VZEROUPPER
	RET

// 1.5*2^52: adding it to a float64 in (-2^51, 2^51) rounds to an integer,
// ties to even.
DATA qkx3Magic52<>+0(SB)/8, $0x4338000000000000
GLOBL qkx3Magic52<>(SB), RODATA|NOPTR, $8

// |x| mask for eight float32 lanes.
DATA qkx2Abs<>+0(SB)/8, $0x7fffffff7fffffff
DATA qkx2Abs<>+8(SB)/8, $0x7fffffff7fffffff
DATA qkx2Abs<>+16(SB)/8, $0x7fffffff7fffffff
DATA qkx2Abs<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL qkx2Abs<>(SB), RODATA|NOPTR, $32

// QKX2_FIT evaluates the fit of eight trials from their float32 sums A
// (Σw·l), B (Σw·l²), C (Σw·l·x) with Y14 = sumW, Y15 = sumX, and stores D,
// scale and min in the lanes of qkx2Lanes at R8, from byte OFF. The operations
// are those of MakeQkx2Quants, fused where it uses FMA32. Uses Y0, Y1,
// Y10-Y13.
#define QKX2_FIT(A, B, C, OFF) \
	VMULPS       A, A, Y10 \
	VFMSUB231PS  B, Y14, Y10 \
	VMULPS       C, Y14, Y11 \
	VFNMADD231PS A, Y15, Y11 \
	VDIVPS       Y10, Y11, Y11 \
	VMULPS       C, A, Y12 \
	VFMSUB231PS  Y15, B, Y12 \
	VDIVPS       Y10, Y12, Y12 \
	VXORPS       Y13, Y13, Y13 \
	VCMPPS       $0x1e, Y13, Y12, Y0 \
	VDIVPS       B, C, Y1 \
	VBLENDVPS    Y0, Y1, Y11, Y11 \
	VANDNPS      Y12, Y0, Y12 \
	VMOVUPS      Y10, (qkx2Lanes_D+OFF)(R8) \
	VMOVUPS      Y11, (qkx2Lanes_scale+OFF)(R8) \
	VMOVUPS      Y12, (qkx2Lanes_min+OFF)(R8)

// QKX2_XM broadcasts xm = max(x[R10] - min, 0) (float32, as setDiffs32)
// into Y10.
#define QKX2_XM \
	VMOVSS       (DI)(R10*4), X10 \
	VSUBSS       min+40(FP), X10, X10 \
	VMAXSS       qkx2Zero<>(SB), X10, X10 \
	VBROADCASTSS X10, Y10

// QKX2_CAND sets AX to the mask of the eight lanes with D > 0 (qkx2Lanes'
// D at R8, from byte OFF) and an error (in E) below bestMAD (Y14). Uses
// Y12, Y13.
#define QKX2_CAND(E, OFF) \
	VXORPS       Y13, Y13, Y13 \
	VMOVUPS      (qkx2Lanes_D+OFF)(R8), Y12 \
	VCMPPS       $0x1e, Y13, Y12, Y12 \
	VCMPPS       $0x11, Y14, E, Y13 \
	VANDPS       Y13, Y12, Y12 \
	VMOVMSKPS    Y12, AX

// The two losses of MakeQkx2Quants' error, applied in place to the
// differences in R: the rounded square, or the magnitude (Y15 / X9 hold the
// |·| mask).
#define SQUARE_PS(R) VMULPS R, R, R
#define ABS_PS(R) VANDPS Y15, R, R
#define SQUARE_SS(R) VMULSS R, R, R
#define ABS_SS(R) VANDPS X9, R, R

// QKX2_ERR16 is the error pass of qkx2Trials16AVX2 under LOSS (SQUARE_PS
// or ABS_PS), a loop starting at label loop: for each value the quants l of
// both groups (64 bytes at R9), diff = scale·l + min - x (fused) and
// error += w·LOSS(diff), fused, into Y8 and Y9.
#define QKX2_ERR16(LOSS, loop) \
loop: \
	VMOVUPS      (R9), Y10; \
	VMOVUPS      32(R9), Y11; \
	VBROADCASTSS (DI)(R10*4), Y12; \
	VFMADD213PS  Y6, Y4, Y10; \
	VFMADD213PS  Y7, Y5, Y11; \
	VSUBPS       Y12, Y10, Y10; \
	VSUBPS       Y12, Y11, Y11; \
	LOSS(Y10); \
	LOSS(Y11); \
	VBROADCASTSS (DX)(R10*4), Y13; \
	VFMADD231PS  Y10, Y13, Y8; \
	VFMADD231PS  Y11, Y13, Y9; \
	ADDQ         $64, R9; \
	INCQ         R10; \
	CMPQ         R10, CX; \
	JLT          loop

// QKX2_ERR8 is QKX2_ERR16 for the first group only (qkx2Trials8AVX2).
#define QKX2_ERR8(LOSS, loop) \
loop: \
	VMOVUPS      (R9), Y10; \
	VBROADCASTSS (DI)(R10*4), Y12; \
	VFMADD213PS  Y6, Y4, Y10; \
	VSUBPS       Y12, Y10, Y10; \
	LOSS(Y10); \
	VBROADCASTSS (DX)(R10*4), Y13; \
	VFMADD231PS  Y10, Y13, Y8; \
	ADDQ         $64, R9; \
	INCQ         R10; \
	CMPQ         R10, CX; \
	JLT          loop

DATA qkx2Zero<>+0(SB)/4, $0
GLOBL qkx2Zero<>(SB), RODATA|NOPTR, $4

// func qkx2Trials16AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32
// Sixteen trials in two groups of eight float32 lanes (Y2 and Y3 hold their
// iscales); each lane's sums and error are sequential in index order. The
// sums pass keeps every lane's quants in the frame for the error pass.
TEXT ·qkx2Trials16AVX2(SB), 0, $4096-76
	MOVQ         nums+0(FP), AX
	VBROADCASTSS den+8(FP), Y1
	MOVQ         x+16(FP), DI
	MOVQ         w+24(FP), DX
	MOVQ         n+32(FP), CX
	MOVQ         out+64(FP), R8
	VMOVUPS      (AX), Y2
	VMOVUPS      32(AX), Y3
	VDIVPS       Y1, Y2, Y2        // iscale = num/den
	VDIVPS       Y1, Y3, Y3
	VMOVUPS      Y2, qkx2Lanes_iscale(R8)
	VMOVUPS      Y3, (qkx2Lanes_iscale+32)(R8)
	VBROADCASTSS nmax+44(FP), Y1
	VBROADCASTSS qxMagic<>(SB), Y0
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	VXORPS       Y7, Y7, Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	LEAQ         0(SP), R9         // the quants, 64 bytes per value
	XORQ         R10, R10

sums16:
	QKX2_XM
	VMOVAPS      Y10, Y11
	VFMADD213PS  Y0, Y2, Y10       // iscale*xm + magic, rounded once
	VFMADD213PS  Y0, Y3, Y11
	VSUBPS       Y0, Y10, Y10
	VSUBPS       Y0, Y11, Y11
	VMINPS       Y1, Y10, Y10      // l
	VMINPS       Y1, Y11, Y11
	VMOVUPS      Y10, (R9)
	VMOVUPS      Y11, 32(R9)
	VBROADCASTSS (DX)(R10*4), Y12  // w
	VMULPS       Y10, Y12, Y13     // w*l, rounded
	VMULPS       Y11, Y12, Y14
	VADDPS       Y13, Y4, Y4       // Σw·l
	VADDPS       Y14, Y7, Y7
	VFMADD231PS  Y10, Y13, Y5      // Σw·l·l
	VFMADD231PS  Y11, Y14, Y8
	VBROADCASTSS (DI)(R10*4), Y15  // x
	VFMADD231PS  Y15, Y13, Y6      // Σw·l·x
	VFMADD231PS  Y15, Y14, Y9
	ADDQ         $64, R9
	INCQ         R10
	CMPQ         R10, CX
	JLT          sums16

	VBROADCASTSS sumW+48(FP), Y14
	VBROADCASTSS sumX+52(FP), Y15
	QKX2_FIT(Y4, Y5, Y6, 0)
	QKX2_FIT(Y7, Y8, Y9, 32)
	VMOVUPS      qkx2Lanes_scale(R8), Y4       // scales
	VMOVUPS      (qkx2Lanes_scale+32)(R8), Y5
	VMOVUPS      qkx2Lanes_min(R8), Y6       // mins
	VMOVUPS      (qkx2Lanes_min+32)(R8), Y7
	VMOVUPS      qkx2Abs<>(SB), Y15
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	LEAQ         0(SP), R9
	XORQ         R10, R10
	CMPB         useMAD+56(FP), $0
	JNE          mad16
	QKX2_ERR16(SQUARE_PS, squares16)
	JMP          done16
	QKX2_ERR16(ABS_PS, mad16)

done16:
	VMOVUPS      Y8, qkx2Lanes_mad(R8)
	VMOVUPS      Y9, (qkx2Lanes_mad+32)(R8)
	VBROADCASTSS bestMAD+60(FP), Y14
	QKX2_CAND(Y8, 0)
	MOVL         AX, BX
	QKX2_CAND(Y9, 32)
	SHLL         $8, AX
	ORL          BX, AX
	MOVL         AX, ret+72(FP)
	VZEROUPPER
	RET

// func qkx2Trials8AVX2(nums *float32, den float32, x, w *float32, n int, min, nmax, sumW, sumX float32, useMAD bool, bestMAD float32, out *qkx2Lanes) uint32
// qkx2Trials16AVX2 for the first eight lanes only.
TEXT ·qkx2Trials8AVX2(SB), 0, $4096-76
	MOVQ         nums+0(FP), AX
	VBROADCASTSS den+8(FP), Y1
	MOVQ         x+16(FP), DI
	MOVQ         w+24(FP), DX
	MOVQ         n+32(FP), CX
	MOVQ         out+64(FP), R8
	VMOVUPS      (AX), Y2
	VDIVPS       Y1, Y2, Y2        // iscale = num/den
	VMOVUPS      Y2, qkx2Lanes_iscale(R8)
	VBROADCASTSS nmax+44(FP), Y1
	VBROADCASTSS qxMagic<>(SB), Y0
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	LEAQ         0(SP), R9         // the quants, 64 bytes per value
	XORQ         R10, R10

sums8:
	QKX2_XM
	VFMADD213PS  Y0, Y2, Y10       // iscale*xm + magic, rounded once
	VSUBPS       Y0, Y10, Y10
	VMINPS       Y1, Y10, Y10      // l
	VMOVUPS      Y10, (R9)
	VBROADCASTSS (DX)(R10*4), Y12  // w
	VMULPS       Y10, Y12, Y13     // w*l, rounded
	VADDPS       Y13, Y4, Y4       // Σw·l
	VFMADD231PS  Y10, Y13, Y5      // Σw·l·l
	VBROADCASTSS (DI)(R10*4), Y15  // x
	VFMADD231PS  Y15, Y13, Y6      // Σw·l·x
	ADDQ         $64, R9
	INCQ         R10
	CMPQ         R10, CX
	JLT          sums8

	VBROADCASTSS sumW+48(FP), Y14
	VBROADCASTSS sumX+52(FP), Y15
	QKX2_FIT(Y4, Y5, Y6, 0)
	VMOVUPS      qkx2Lanes_scale(R8), Y4       // scales
	VMOVUPS      qkx2Lanes_min(R8), Y6       // mins
	VMOVUPS      qkx2Abs<>(SB), Y15
	VXORPS       Y8, Y8, Y8
	LEAQ         0(SP), R9
	XORQ         R10, R10
	CMPB         useMAD+56(FP), $0
	JNE          mad8
	QKX2_ERR8(SQUARE_PS, squares8)
	JMP          done8
	QKX2_ERR8(ABS_PS, mad8)

done8:
	VMOVUPS      Y8, qkx2Lanes_mad(R8)
	VBROADCASTSS bestMAD+60(FP), Y14
	QKX2_CAND(Y8, 0)
	MOVL         AX, ret+72(FP)
	VZEROUPPER
	RET

DATA qkx2NegZero<>+0(SB)/4, $0x80000000
GLOBL qkx2NegZero<>(SB), RODATA|NOPTR, $4

// QKX2_SUMS is the loop of qkx2SumsAVX2, starting at label loop: min (X0),
// max (X1), Σw (X2) and Σw·x (X3), the last by WX_SUM (WX_FUSED or
// WX_ROUNDED) of x in X5 and w in X6.
#define WX_FUSED VFMADD231SS X5, X6, X3
#define WX_ROUNDED VMULSS X5, X6, X6; VADDSS X6, X3, X3
#define QKX2_SUMS(WX_SUM, loop) \
loop: \
	VMOVSS (SI)(R10*4), X5; \
	VMINSS X0, X5, X0; \
	VMAXSS X1, X5, X1; \
	VMOVSS (DI)(R10*4), X6; \
	VADDSS X6, X2, X2; \
	WX_SUM; \
	INCQ   R10; \
	CMPQ   R10, CX; \
	JLT    loop

// func qkx2SumsAVX2(x, w *float32, n int, fused bool, out *qkx2Sums)
// The first pass of MakeQkx2Quants (scalar, in index order). The sums start
// at -0, which leaves the first term as it is, as the portable loop starts
// from the first term.
TEXT ·qkx2SumsAVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), DI
	MOVQ   n+16(FP), CX
	MOVQ   out+32(FP), R8
	VMOVSS (SI), X0                // min
	VMOVAPS X0, X1                 // max
	VMOVSS qkx2NegZero<>(SB), X2   // Σw
	VMOVAPS X2, X3                 // Σw·x
	XORQ   R10, R10
	CMPB   fused+24(FP), $0
	JEQ    rounded
	QKX2_SUMS(WX_FUSED, fusedloop)
	JMP    sumsdone
	QKX2_SUMS(WX_ROUNDED, rounded)

sumsdone:
	VMOVSS X0, qkx2Sums_min(R8)
	VMOVSS X1, qkx2Sums_max(R8)
	VMOVSS X2, qkx2Sums_sumW(R8)
	VMOVSS X3, qkx2Sums_sumX(R8)
	RET

// QKX2_FIRST is the loop of qkx2FirstErrorAVX2 under LOSS (SQUARE_SS or
// ABS_SS), starting at label loop: l = min(nearest(iscale·(x - min)), nmax)
// stored to L, diff = scale·l + min - x (fused) and error += w·LOSS(diff),
// fused, into X8.
#define QKX2_FIRST(LOSS, loop) \
loop: \
	VMOVSS      (DI)(R10*4), X11; \
	VSUBSS      X6, X11, X10; \
	VFMADD213SS X0, X2, X10; \
	VSUBSS      X0, X10, X10; \
	VMINSS      X1, X10, X10; \
	VCVTTSS2SI  X10, R11; \
	MOVB        R11, (BX)(R10*1); \
	VFMADD213SS X6, X4, X10; \
	VSUBSS      X11, X10, X10; \
	LOSS(X10); \
	VFMADD231SS (DX)(R10*4), X10, X8; \
	INCQ        R10; \
	CMPQ        R10, CX; \
	JLT         loop

// func qkx2FirstErrorAVX2(x, w *float32, n int, nmax, iscale, scale, min float32, useMAD bool, L *uint8) float32
// The first quantization of MakeQkx2Quants: L[i] = min(nearest(iscale·(x[i]
// - min)), nmax) and the weighted error of scale·L + min, in index order,
// scalar. Every x[i] must be at least min.
TEXT ·qkx2FirstErrorAVX2(SB), NOSPLIT, $0-60
	MOVQ   x+0(FP), DI
	MOVQ   w+8(FP), DX
	MOVQ   n+16(FP), CX
	VMOVSS nmax+24(FP), X1
	VMOVSS iscale+28(FP), X2
	VMOVSS scale+32(FP), X4
	VMOVSS min+36(FP), X6
	MOVQ   L+48(FP), BX
	VMOVSS qxMagic<>(SB), X0
	VMOVSS qkx2Abs<>(SB), X9
	VXORPS X8, X8, X8
	XORQ   R10, R10
	CMPB   useMAD+40(FP), $0
	JNE    firstmad
	QKX2_FIRST(SQUARE_SS, firstsq)
	VMOVSS X8, ret+56(FP)
	RET
	QKX2_FIRST(ABS_SS, firstmad)
	VMOVSS X8, ret+56(FP)
	RET

// ALLOWED_STEP keeps in Y1 the magnitude of the step g (in Y1) where it is
// allowed for the quant l (in Y0), else 0: (g > 0 and l < HI) or (g < 0 and
// l > LO). Y12 = 0, Y11 = |·| mask; uses Y2-Y5.
#define ALLOWED_STEP(HI, LO) \
	VCMPPS $0x1e, Y12, Y1, Y2; \
	VCMPPS $0x11, HI, Y0, Y3; \
	VANDPS Y3, Y2, Y2; \
	VCMPPS $0x11, Y12, Y1, Y4; \
	VCMPPS $0x1e, LO, Y0, Y5; \
	VANDPS Y5, Y4, Y4; \
	VORPS  Y4, Y2, Y2; \
	VANDPS Y11, Y1, Y1; \
	VANDPS Y2, Y1, Y1

// QKX3_GRAD computes, for the eight values at R10, the magnitude of the
// refinement step of MakeQkx3Quants where the step is allowed, else 0:
// g = fma(-scale, L, x) - min, |g| where (g > 0 and L < nmax) or (g < 0 and
// L > 0). Y15 = -scale, Y14 = min, Y13 = nmax, Y12 = 0, Y11 = |·| mask;
// result in Y1, uses Y0-Y5.
#define QKX3_GRAD \
	VPMOVZXBD   (BX)(R10*1), Y0 \
	VCVTDQ2PS   Y0, Y0 \
	VMOVUPS     (SI)(R10*4), Y1 \
	VFMADD231PS Y15, Y0, Y1 \
	VSUBPS      Y14, Y1, Y1 \
	ALLOWED_STEP(Y13, Y12)

// LARGEST_STEP sets AX to the first index of the largest step GRAD
// (QKX3_GRAD or QX_GRAD) gives over the CX values (a multiple of 8), or to
// -1 when it gives none: a first pass finds the largest magnitude (Y10
// starts at 0), a second the first value that has it. Uses Y7, R10 and
// GRAD's registers.
#define LARGEST_STEP(GRAD) \
	XORQ         R10, R10; \
stepmax: \
	GRAD; \
	VMAXPS       Y1, Y10, Y10; \
	ADDQ         $8, R10; \
	CMPQ         R10, CX; \
	JLT          stepmax; \
	VEXTRACTF128 $1, Y10, X0; \
	VMAXPS       X0, X10, X0; \
	VPERMILPS    $0x4e, X0, X1; \
	VMAXPS       X1, X0, X0; \
	VPERMILPS    $0xb1, X0, X1; \
	VMAXPS       X1, X0, X0; \
	VMOVD        X0, AX; \
	TESTL        AX, AX; \
	JZ           nostep; \
	VBROADCASTSS X0, Y7; \
	XORQ         R10, R10; \
stepfirst: \
	GRAD; \
	VCMPPS       $0x00, Y7, Y1, Y1; \
	VMOVMSKPS    Y1, AX; \
	TESTL        AX, AX; \
	JNZ          found; \
	ADDQ         $8, R10; \
	CMPQ         R10, CX; \
	JLT          stepfirst; \
nostep: \
	MOVQ         $-1, AX; \
	JMP          stepdone; \
found: \
	BSFL         AX, AX; \
	ADDQ         R10, AX; \
stepdone:

// func qkx3RefineScanAVX2(x *float32, L *uint8, n int, negScale, min, nmax float32) int
// The first index of the largest allowed step (see QKX3_GRAD), or -1 when
// no step is allowed; n is a multiple of 8. A first pass finds the largest
// magnitude, a second the first value that has it.
TEXT ·qkx3RefineScanAVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), SI
	MOVQ         L+8(FP), BX
	MOVQ         n+16(FP), CX
	VBROADCASTSS negScale+24(FP), Y15
	VBROADCASTSS min+28(FP), Y14
	VBROADCASTSS nmax+32(FP), Y13
	VXORPS       Y12, Y12, Y12
	VMOVUPS      qkx2Abs<>(SB), Y11
	VXORPS       Y10, Y10, Y10
	LARGEST_STEP(QKX3_GRAD)
	MOVQ         AX, ret+40(FP)
	VZEROUPPER
	RET

// QX_GRAD computes, for the eight values at R10, the magnitude of the
// refinement step of MakeQxQuants where the step is allowed, else 0:
// g = (scale·w)·fma(-scale, l, x), |g| where (g > 0 and l < nmax-1) or
// (g < 0 and l > -nmax), l = L - nmax. Y15 = -scale, Y14 = scale,
// Y13 = nmax, Y12 = 0, Y11 = |·| mask, Y9 = nmax-1, Y8 = -nmax; result in
// Y1, uses Y0-Y5.
#define QX_GRAD \
	VPMOVZXBD   (BX)(R10*1), Y0 \
	VCVTDQ2PS   Y0, Y0 \
	VSUBPS      Y13, Y0, Y0 \
	VMOVUPS     (SI)(R10*4), Y1 \
	VFMADD231PS Y15, Y0, Y1 \
	VMULPS      (DI)(R10*4), Y14, Y2 \
	VMULPS      Y1, Y2, Y1 \
	ALLOWED_STEP(Y9, Y8)

// func qxRefineScanAVX2(x, w *float32, L *int8, n int, scale, negScale, nmax float32) int
// The first index of the largest allowed step (see QX_GRAD), or -1 when
// none is allowed; n is a multiple of 8. As qkx3RefineScanAVX2.
TEXT ·qxRefineScanAVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         w+8(FP), DI
	MOVQ         L+16(FP), BX
	MOVQ         n+24(FP), CX
	VBROADCASTSS scale+32(FP), Y14
	VBROADCASTSS negScale+36(FP), Y15
	VBROADCASTSS nmax+40(FP), Y13
	VXORPS       Y12, Y12, Y12
	VMOVUPS      qkx2Abs<>(SB), Y11
	VXORPS       Y10, Y10, Y10
	VSUBPS       Y13, Y12, Y8      // -nmax
	VCMPPS       $0x00, Y12, Y12, Y9
	VPSRLD       $31, Y9, Y9       // 1 in every lane
	VCVTDQ2PS    Y9, Y9
	VSUBPS       Y9, Y13, Y9       // nmax-1
	LARGEST_STEP(QX_GRAD)
	MOVQ         AX, ret+48(FP)
	VZEROUPPER
	RET

// The reference's nearest_int reads the integer from the low 23 bits of
// fval = v + 1.5*2^23: (bits & 0x7fffff) - 0x400000.
DATA qpMantMask<>+0(SB)/4, $0x007fffff
GLOBL qpMantMask<>(SB), RODATA|NOPTR, $4
DATA qpMantBias<>+0(SB)/4, $0x00400000
GLOBL qpMantBias<>(SB), RODATA|NOPTR, $4
DATA qpOne<>+0(SB)/4, $0x3f800000
GLOBL qpOne<>(SB), RODATA|NOPTR, $4

// func qpTrialsAVX2(nums *[8]float32, max float32, x, w *float32, n int, nmax int32, mse *[8]float32, fused bool)
// One trial per lane; each lane's error is the in-order sum of its rounded
// products, as the portable loop.
TEXT ·qpTrialsAVX2(SB), NOSPLIT, $0-57
	MOVQ         nums+0(FP), AX
	VBROADCASTSS max+8(FP), Y1
	MOVQ         x+16(FP), SI
	MOVQ         w+24(FP), DI
	MOVQ         n+32(FP), CX
	MOVL         nmax+40(FP), R9
	VMOVD        R9, X8
	VPBROADCASTD X8, Y8
	MOVQ         mse+48(FP), R8
	VMOVUPS      (AX), Y0
	VDIVPS       Y1, Y0, Y0        // iscale = num/max
	VBROADCASTSS qpOne<>(SB), Y1
	VDIVPS       Y0, Y1, Y2        // scale = 1/iscale
	VBROADCASTSS qxMagic<>(SB), Y3
	VPBROADCASTD qpMantMask<>(SB), Y9
	VPBROADCASTD qpMantBias<>(SB), Y10
	VXORPS       Y4, Y4, Y4
	XORQ         R10, R10
	MOVBLZX      fused+56(FP), R11

qptrial:
	VBROADCASTSS (SI)(R10*4), Y5   // x
	VMOVAPS      Y3, Y6
	VFMADD231PS  Y5, Y0, Y6        // iscale*x + magic, rounded once
	VPAND        Y9, Y6, Y6
	VPSUBD       Y10, Y6, Y6       // nearest_int
	VPMINSD      Y8, Y6, Y6        // min(nmax, ·)
	VCVTDQ2PS    Y6, Y6            // l
	VFNMADD231PS Y6, Y2, Y5        // x - scale*l, rounded once
	VBROADCASTSS (DI)(R10*4), Y7   // w
	VMULPS       Y5, Y7, Y7        // w*d, rounded
	TESTQ        R11, R11
	JZ           qprounded
	VFMADD231PS  Y5, Y7, Y4        // sum += (w*d)*d, rounded once
	JMP          qpnext

qprounded:
	VMULPS Y5, Y7, Y7 // (w*d)*d, rounded
	VADDPS Y7, Y4, Y4

qpnext:
	INCQ         R10
	CMPQ         R10, CX
	JLT          qptrial

	VMOVUPS Y4, (R8)
	VZEROUPPER
	RET

DATA qkx3NegZero<>+0(SB)/8, $0x8000000000000000
GLOBL qkx3NegZero<>(SB), RODATA|NOPTR, $8

// QKX3_FIRST_SUMS is the loop of qkx3SumsAVX2, starting at label loop, with X2SUM
// adding (w·x)·x (X7·X5) to Σw·x² (X4): X2_FUSED or X2_ROUNDED.
#define QKX3_FIRST_SUMS(X2SUM, loop) \
loop: \
	VMOVSS      (SI)(R10*4), X5; \
	VMINSS      X0, X5, X0; \
	VMAXSS      X1, X5, X1; \
	VCVTSS2SD   X5, X5, X5; \
	VMOVSD      X5, (R11)(R10*8); \
	VMOVSS      (DI)(R10*4), X6; \
	VCVTSS2SD   X6, X6, X6; \
	VMOVSD      X6, (DX)(R10*8); \
	VADDSD      X6, X2, X2; \
	VMULSD      X5, X6, X7; \
	VADDSD      X7, X3, X3; \
	X2SUM; \
	INCQ        R10; \
	CMPQ        R10, CX; \
	JLT         loop

// X2_FUSED adds (w·x)·x rounded once, as quantize_row_q2_K_impl (with
// make_qkx3_quants inlined) does; X2_ROUNDED rounds the product before it
// adds it, as the out-of-line make_qkx3_quants does.
#define X2_FUSED VFMADD231SD X5, X7, X4
#define X2_ROUNDED VMULSD X5, X7, X8; VADDSD X8, X4, X4

// func qkx3SumsAVX2(x, w *float32, n int, fused bool, wd, xd *[64]float64, out *qkx3Sums)
// The sums start at -0, which leaves the first term as it is (also a zero's
// sign), as the portable loop starts from the first term: fma(a, b, -0) is
// a*b rounded, so the first term of Σw·x² is rounded in both forms, as in
// the reference. v < min and v > max as the portable loop's comparisons
// (VMINSS/VMAXSS return the second operand unless the first is smaller or
// larger).
TEXT ·qkx3SumsAVX2(SB), NOSPLIT, $0-56
	MOVQ      x+0(FP), SI
	MOVQ      w+8(FP), DI
	MOVQ      n+16(FP), CX
	MOVQ      wd+32(FP), DX
	MOVQ      xd+40(FP), R11
	MOVQ      out+48(FP), R8
	VMOVSS    (SI), X0            // min
	VMOVAPS   X0, X1              // max
	VMOVSD    qkx3NegZero<>(SB), X2 // Σw
	VMOVAPD   X2, X3              // Σw·x
	VMOVAPD   X2, X4              // Σw·x²
	XORQ      R10, R10
	CMPB      fused+24(FP), $0
	JEQ       sumsrounded
	QKX3_FIRST_SUMS(X2_FUSED, sumsfused)
	JMP       sumsdone
	QKX3_FIRST_SUMS(X2_ROUNDED, sumsrounded)

sumsdone:
	VMOVSS X0, qkx3Sums_min(R8)
	VMOVSS X1, qkx3Sums_max(R8)
	VMOVSD X2, qkx3Sums_sumW(R8)
	VMOVSD X3, qkx3Sums_sumX(R8)
	VMOVSD X4, qkx3Sums_sumX2(R8)
	RET

// func qkx3FirstErrorAVX2(x *float32, wd *float64, n int, iscale, min, scale, nmax float32, L *uint8) float64
TEXT ·qkx3FirstErrorAVX2(SB), NOSPLIT, $0-56
	MOVQ      x+0(FP), SI
	MOVQ      wd+8(FP), DX
	MOVQ      n+16(FP), CX
	VMOVSS    iscale+24(FP), X1
	VMOVSS    min+28(FP), X2
	VMOVSS    scale+32(FP), X4
	VMOVSS    nmax+36(FP), X3
	MOVQ      L+40(FP), BX
	VMOVSS    qxMagic<>(SB), X0
	VCVTSS2SD X4, X4, X4          // scale as float64
	VCVTSS2SD X2, X5, X5          // min as float64
	VXORPD    X8, X8, X8
	XORQ      R10, R10

firsterr:
	VMOVSS      (SI)(R10*4), X6   // x
	VSUBSS      X2, X6, X7        // x - min
	VFMADD213SS X0, X1, X7        // iscale*(x-min) + magic, rounded once
	VSUBSS      X0, X7, X7
	VMINSS      X3, X7, X7        // l
	VCVTTSS2SI  X7, R11
	MOVB        R11, (BX)(R10*1)
	VCVTSS2SD   X7, X7, X7
	VFMADD213SD X5, X4, X7        // scale*l + min, fused
	VCVTSS2SD   X6, X6, X6
	VSUBSD      X6, X7, X7        // d
	VMULSD      X7, X7, X7        // d², rounded
	VFMADD231SD (DX)(R10*8), X7, X8
	INCQ        R10
	CMPQ        R10, CX
	JLT         firsterr

	VMOVSD X8, ret+48(FP)
	RET

// Q3_ELEMENT(skip) is one step of make_q3_quants' coordinate descent for
// value R10: with slx = Σw·x·l and sl2 = Σw·l² (X14, X13) less its own term,
// the value's nearest quant at v·sl2/slx, clamped to [lo, hi] (R8, R9); if
// that differs from L[R10] and improves slx²/sl2, L[R10] and the sums take
// it and R11 counts a change, else it jumps to skip. X5 = 0, X15 = magic.
// Uses X0-X10, AX, DX.
#define Q3_ELEMENT(skip) \
	VMOVSS       (SI)(R10*4), X0; \
	VMULSS       X0, X0, X1; \
	VMULSS       X0, X1, X2; \
	MOVBQSX      (BX)(R10*1), AX; \
	VCVTSI2SSQ   AX, X3, X3; \
	VMOVAPS      X14, X4; \
	VFNMADD231SS X3, X2, X4; \
	VUCOMISS     X5, X4; \
	JLS          skip; \
	VMULSS       X3, X1, X6; \
	VMOVAPS      X13, X7; \
	VFNMADD231SS X3, X6, X7; \
	VMULSS       X7, X0, X8; \
	VDIVSS       X4, X8, X8; \
	VADDSS       X15, X8, X8; \
	VMOVD        X8, DX; \
	ANDL         $0x7fffff, DX; \
	SUBL         $0x400000, DX; \
	MOVLQSX      DX, DX; \
	CMPQ         DX, R8; \
	CMOVQLT      R8, DX; \
	CMPQ         DX, R9; \
	CMOVQGT      R9, DX; \
	CMPQ         DX, AX; \
	JEQ          skip; \
	VCVTSI2SSQ   DX, X9, X9; \
	VFMADD231SS  X9, X2, X4; \
	VMULSS       X9, X1, X10; \
	VFMADD231SS  X9, X10, X7; \
	VUCOMISS     X5, X7; \
	JLS          skip; \
	VMULSS       X4, X4, X10; \
	VMULSS       X13, X10, X10; \
	VMULSS       X14, X14, X6; \
	VMULSS       X7, X6, X6; \
	VUCOMISS     X6, X10; \
	JLS          skip; \
	MOVB         DX, (BX)(R10*1); \
	VMOVAPS      X4, X14; \
	VMOVAPS      X7, X13; \
	INCQ         R11

// Q3_CANDIDATES8(off) sets AX to the 8-bit mask of values off/4 .. off/4+7
// that Q3_ELEMENT would not skip at its first two tests (slx > 0 and a new
// quant that differs), computed with the current sums for all eight at
// once, lane by lane with the scalar step's operations in its order (so
// bit for bit its values). Quants in [-4, 3] (nmax 4). Y5 = 0; uses
// Y0-Y4, Y6-Y10.
#define Q3_CANDIDATES8(off) \
	VBROADCASTSS X14, Y8; \
	VBROADCASTSS X13, Y9; \
	VMOVUPS      off(SI), Y0; \
	VMULPS       Y0, Y0, Y1; \
	VMULPS       Y0, Y1, Y2; \
	VPMOVSXBD    (off/4)(BX), Y3; \
	VCVTDQ2PS    Y3, Y4; \
	VFNMADD231PS Y4, Y2, Y8; \
	VMULPS       Y4, Y1, Y6; \
	VFNMADD231PS Y4, Y6, Y9; \
	VMULPS       Y9, Y0, Y7; \
	VDIVPS       Y8, Y7, Y7; \
	VBROADCASTSS qxMagic<>(SB), Y10; \
	VADDPS       Y10, Y7, Y7; \
	VPAND        q3Low23<>(SB), Y7, Y7; \
	VPSUBD       q3Half22<>(SB), Y7, Y7; \
	VPMAXSD      q3Lo4<>(SB), Y7, Y7; \
	VPMINSD      q3Hi4<>(SB), Y7, Y7; \
	VPCMPEQD     Y3, Y7, Y7; \
	VCMPPS       $1, Y8, Y5, Y8; \
	VPANDN       Y8, Y7, Y7; \
	VMOVMSKPS    Y7, AX

DATA q3Low23<>+0(SB)/8, $0x007fffff007fffff
DATA q3Low23<>+8(SB)/8, $0x007fffff007fffff
DATA q3Low23<>+16(SB)/8, $0x007fffff007fffff
DATA q3Low23<>+24(SB)/8, $0x007fffff007fffff
GLOBL q3Low23<>(SB), RODATA|NOPTR, $32

DATA q3Half22<>+0(SB)/8, $0x0040000000400000
DATA q3Half22<>+8(SB)/8, $0x0040000000400000
DATA q3Half22<>+16(SB)/8, $0x0040000000400000
DATA q3Half22<>+24(SB)/8, $0x0040000000400000
GLOBL q3Half22<>(SB), RODATA|NOPTR, $32

DATA q3Lo4<>+0(SB)/8, $0xfffffffcfffffffc
DATA q3Lo4<>+8(SB)/8, $0xfffffffcfffffffc
DATA q3Lo4<>+16(SB)/8, $0xfffffffcfffffffc
DATA q3Lo4<>+24(SB)/8, $0xfffffffcfffffffc
GLOBL q3Lo4<>(SB), RODATA|NOPTR, $32

DATA q3Hi4<>+0(SB)/8, $0x0000000300000003
DATA q3Hi4<>+8(SB)/8, $0x0000000300000003
DATA q3Hi4<>+16(SB)/8, $0x0000000300000003
DATA q3Hi4<>+24(SB)/8, $0x0000000300000003
GLOBL q3Hi4<>(SB), RODATA|NOPTR, $32

// q3After<>[i] keeps the bits of a 16-bit mask above bit i.
DATA q3After<>+0(SB)/8, $0xfffe
DATA q3After<>+8(SB)/8, $0xfffc
DATA q3After<>+16(SB)/8, $0xfff8
DATA q3After<>+24(SB)/8, $0xfff0
DATA q3After<>+32(SB)/8, $0xffe0
DATA q3After<>+40(SB)/8, $0xffc0
DATA q3After<>+48(SB)/8, $0xff80
DATA q3After<>+56(SB)/8, $0xff00
DATA q3After<>+64(SB)/8, $0xfe00
DATA q3After<>+72(SB)/8, $0xfc00
DATA q3After<>+80(SB)/8, $0xf800
DATA q3After<>+88(SB)/8, $0xf000
DATA q3After<>+96(SB)/8, $0xe000
DATA q3After<>+104(SB)/8, $0xc000
DATA q3After<>+112(SB)/8, $0x8000
DATA q3After<>+120(SB)/8, $0x0000
GLOBL q3After<>(SB), RODATA|NOPTR, $128

// func q3QuantsAVX2(x *float32, n int, nmax int, eps float32, L *int8) (scale float32, zero bool)
// MakeQ3Quants with doRMSE, scalar, in the portable code's order and with
// its fused operations: the value of largest magnitude (zero when its
// magnitude is below eps: then nothing is written), the first quantization
// at -nmax/max with its sums, up to five coordinate-descent passes, L
// offset by nmax and the scale Σw·x·l / Σw·l².
//
// For q3_K's 16 values with nmax 4 a pass visits only the values whose step
// can change anything: the first two tests of every value are made for all
// 16 at once with the current sums (Q3_CANDIDATES8), and the scan jumps to
// the next value that passes them. A value that then fails the last test
// changes nothing, so the others' results stand; a change makes the scan
// test the values after it again with the new sums. Most values of most
// passes keep their quant, so most of the divisions and unpredictable
// branches of the scalar loop go.
TEXT ·q3QuantsAVX2(SB), NOSPLIT, $0-45
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	MOVQ   L+32(FP), BX
	FIRST_ABSMAX                   // max in X0, amax in X1

	VMOVSS   eps+24(FP), X2
	VUCOMISS X2, X1
	JCC      q3nonzero             // amax >= eps (never NaN)
	MOVB     $1, zero+44(FP)
	RET

q3nonzero:
	MOVQ       nmax+16(FP), R9
	MOVQ       R9, R8
	NEGQ       R8                  // lo = -nmax
	DECQ       R9                  // hi = nmax-1
	VCVTSI2SSQ R8, X12, X12        // lo as float32
	VCVTSI2SSQ R9, X11, X11        // hi as float32
	VDIVSS     X0, X12, X2         // iscale = -nmax/max
	VMOVSS     qxMagic<>(SB), X15
	VXORPS     X14, X14, X14       // Σw·x·l
	VXORPS     X13, X13, X13       // Σw·l²
	XORQ       R10, R10

q3first:
	VMOVSS      (SI)(R10*4), X0    // v
	VMOVAPS     X0, X3
	VFMADD213SS X15, X2, X3        // iscale*v + magic, rounded once
	VSUBSS      X15, X3, X3
	VMAXSS      X12, X3, X3
	VMINSS      X11, X3, X3        // l
	VCVTTSS2SI  X3, AX
	MOVB        AX, (BX)(R10*1)
	VMULSS      X0, X0, X1         // w = v·v
	VMULSS      X0, X1, X4         // w·v
	VFMADD231SS X3, X4, X14
	VMULSS      X3, X1, X5         // w·l
	VFMADD231SS X3, X5, X13
	INCQ        R10
	CMPQ        R10, CX
	JLT         q3first

	VXORPS Y5, Y5, Y5              // 0
	MOVQ   $5, R12                 // passes left
	CMPQ   CX, $16
	JNE    q3pass
	CMPQ   R8, $-4
	JEQ    q3vpass

q3pass:
	XORQ R11, R11                  // changed
	XORQ R10, R10

q3value:
	Q3_ELEMENT(q3next)

q3next:
	INCQ R10
	CMPQ R10, CX
	JLT  q3value
	TESTQ R11, R11
	JEQ  q3done
	DECQ R12
	JNE  q3pass
	JMP  q3done

q3vpass:
	XORQ R11, R11                  // changed
	MOVQ $0xffff, DI               // values the scan may still visit

q3vtest:
	Q3_CANDIDATES8(0)
	MOVQ AX, R13
	Q3_CANDIDATES8(32)
	SHLQ $8, AX
	ORQ  AX, R13
	ANDQ DI, R13

q3vscan:
	TESTQ R13, R13
	JEQ   q3vend
	BSFQ  R13, R10
	BTRQ  R10, R13
	Q3_ELEMENT(q3vscan)
	LEAQ  q3After<>(SB), DX
	MOVQ  (DX)(R10*8), DI
	JMP   q3vtest

q3vend:
	TESTQ R11, R11
	JEQ   q3done
	DECQ  R12
	JNE   q3vpass

q3done:
	VZEROUPPER
	MOVQ nmax+16(FP), R9
	XORQ R10, R10

q3offset:
	ADDB R9, (BX)(R10*1)
	INCQ R10
	CMPQ R10, CX
	JLT  q3offset

	VDIVSS X13, X14, X0
	VMOVSS X0, scale+40(FP)
	MOVB   $0, zero+44(FP)
	RET

// func qkx2QuantsAVX2(x *float32, n int, iscale, min, nmax float32, L *uint8)
// L[i] = min(nearest(iscale·max(x[i] - min, 0)), nmax), at least 0, eight
// values per step; n is a multiple of 8 and |iscale·(x - min)| < 2^22.
TEXT ·qkx2QuantsAVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         L+32(FP), DI
	VBROADCASTSS iscale+16(FP), Y1
	VBROADCASTSS min+20(FP), Y2
	VBROADCASTSS nmax+24(FP), Y3
	VBROADCASTSS qxMagic<>(SB), Y4
	VXORPS       Y5, Y5, Y5
	XORQ         R10, R10

qkx2quants:
	VMOVUPS      (SI)(R10*4), Y0
	VSUBPS       Y2, Y0, Y0        // x - min
	VMAXPS       Y5, Y0, Y0        // not below 0
	VFMADD213PS  Y4, Y1, Y0        // iscale*xm + magic, rounded once
	VSUBPS       Y4, Y0, Y0
	VMINPS       Y3, Y0, Y0
	VCVTTPS2DQ   Y0, Y0
	VEXTRACTI128 $1, Y0, X6
	VPACKSSDW    X6, X0, X0
	VPACKUSWB    X0, X0, X0        // negative quants (negative iscale) to 0
	VMOVQ        X0, (DI)(R10*1)
	ADDQ         $8, R10
	CMPQ         R10, CX
	JLT          qkx2quants
	VZEROUPPER
	RET
