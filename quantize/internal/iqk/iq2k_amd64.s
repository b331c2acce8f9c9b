//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// RUPDATE recomputes what depends on r alone: the rows r, G_k = r*dq_k and
// e = e2 + slack*(sx + r*sq). Clobbers Y8..Y11.
#define RUPDATE \
	VBROADCASTSD splitTab_r(R8), Y8            \
	VMOVUPD      Y8, splitTab_rrow(R8)         \
	VMULPD       splitConsts_dq(R11), Y8, Y9      \
	VPERMPD      $0x00, Y9, Y10         \
	VMOVUPD      Y10, splitTab_g(R8)           \
	VPERMPD      $0x55, Y9, Y10         \
	VMOVUPD      Y10, splitTab_g+32(R8)        \
	VPERMPD      $0xAA, Y9, Y10         \
	VMOVUPD      Y10, splitTab_g+64(R8)        \
	VPERMPD      $0xFF, Y9, Y10         \
	VMOVUPD      Y10, splitTab_g+96(R8)        \
	VMULSD       splitTab_sq(R8), X8, X11      \
	VADDSD       splitTab_sx(R8), X11, X11     \
	VMULSD       splitConsts_slack(R11), X11, X11 \
	VADDSD       splitTab_e2(R8), X11, X11     \
	VBROADCASTSD X11, Y11               \
	VMOVUPD      Y11, splitTab_e(R8)

// func splitSearchAVX2(sumx, sumw *float32, n, maxI1 int, k *splitConsts, t *splitTab)
//
// Registers: SI sumx, DI sumw, R11 k, R8 t, DX n, R12 maxI1, R9 i1,
// R10 i2, CX first i3 of the current group of four, R13 the group's lanes
// still to test (bit j: i3 = CX+j). In the group loop Y0..Y3 hold
// A_k = cx^2 + e - r*cq and Y4..Y7 B_k = 2*cx*dx of variant k broadcast;
// C_k = dx^2 and G_k = r*dq are read from memory.
TEXT ·splitSearchAVX2(SB), NOSPLIT, $0-48
	MOVQ sumx+0(FP), SI
	MOVQ sumw+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ maxI1+24(FP), R12
	MOVQ k+32(FP), R11
	MOVQ t+40(FP), R8
	RUPDATE

	// The i2 parts of cx and cq, per i2 < n.
	XORQ AX, AX
	XORQ BX, BX

qtab:
	VBROADCASTSD splitTab_xs(R8)(AX*8), Y8
	VMULPD       splitConsts_dv12(R11), Y8, Y8
	VMOVUPD      Y8, splitTab_qxt(R8)(BX*1)
	VBROADCASTSD splitTab_ws(R8)(AX*8), Y8
	VMULPD       splitConsts_dq12(R11), Y8, Y8
	VMOVUPD      Y8, splitTab_qqt(R8)(BX*1)
	ADDQ         $32, BX
	INCQ         AX
	CMPQ         AX, DX
	JLT          qtab

	XORQ R9, R9
	CMPQ R9, R12
	JGE  done

i1loop:
	// The i1 parts of cx and cq (with the xN, wN terms).
	VBROADCASTSD splitTab_xs(R8)(R9*8), Y8
	VMULPD       splitConsts_dv01(R11), Y8, Y8
	VBROADCASTSD splitTab_xN(R8), Y9
	VMULPD       splitConsts_v3(R11), Y9, Y9
	VADDPD       Y9, Y8, Y8
	VMOVUPD      Y8, splitTab_px(R8)
	VBROADCASTSD splitTab_ws(R8)(R9*8), Y8
	VMULPD       splitConsts_dq01(R11), Y8, Y8
	VBROADCASTSD splitTab_wN(R8), Y9
	VMULPD       splitConsts_vq3(R11), Y9, Y9
	VADDPD       Y9, Y8, Y8
	VMOVUPD      Y8, splitTab_pq(R8)
	MOVQ         R9, R10

pairs:
	// start = max(i2, minI3); nothing to do when start >= n.
	MOVQ    R10, BX
	CMPQ    BX, splitTab_minI3(R8)
	CMOVQLT splitTab_minI3(R8), BX
	CMPQ    BX, DX
	JGE     nextpair
	MOVQ    BX, CX
	ANDQ    $3, CX
	MOVQ    $15, R13
	SHLQ    CX, R13
	ANDQ    $15, R13
	MOVQ    BX, CX
	ANDQ    $-4, CX

setup:
	// cx in Y12, cq in Y13 (lanes = variants), B = 2*dx*cx in Y14,
	// A = cx^2 + e - r*cq in Y10, then each variant's broadcast.
	MOVQ         R10, BX
	SHLQ         $5, BX
	VMOVUPD      splitTab_px(R8), Y12
	VADDPD       splitTab_qxt(R8)(BX*1), Y12, Y12
	VMOVUPD      splitTab_pq(R8), Y13
	VADDPD       splitTab_qqt(R8)(BX*1), Y13, Y13
	VMULPD       splitConsts_dx2(R11), Y12, Y14
	VMOVUPD      splitTab_e(R8), Y10
	VFNMADD231PD splitTab_rrow(R8), Y13, Y10
	VFMADD231PD  Y12, Y12, Y10
	VPERMPD      $0x00, Y10, Y0
	VPERMPD      $0x55, Y10, Y1
	VPERMPD      $0xAA, Y10, Y2
	VPERMPD      $0xFF, Y10, Y3
	VPERMPD      $0x00, Y14, Y4
	VPERMPD      $0x55, Y14, Y5
	VPERMPD      $0xAA, Y14, Y6
	VPERMPD      $0xFF, Y14, Y7

group:
	VMOVUPD      splitTab_xs(R8)(CX*8), Y8
	VMOVUPD      splitTab_xq(R8)(CX*8), Y9
	VMOVUPD      splitTab_ws(R8)(CX*8), Y10
	VMOVAPD      Y0, Y11
	VFMADD231PD  Y8, Y4, Y11
	VFMADD231PD  splitConsts_c(R11), Y9, Y11
	VFNMADD231PD splitTab_g(R8), Y10, Y11
	VMOVAPD      Y1, Y12
	VFMADD231PD  Y8, Y5, Y12
	VFMADD231PD  splitConsts_c+32(R11), Y9, Y12
	VFNMADD231PD splitTab_g+32(R8), Y10, Y12
	VMOVAPD      Y2, Y13
	VFMADD231PD  Y8, Y6, Y13
	VFMADD231PD  splitConsts_c+64(R11), Y9, Y13
	VFNMADD231PD splitTab_g+64(R8), Y10, Y13
	VMOVAPD      Y3, Y14
	VFMADD231PD  Y8, Y7, Y14
	VFMADD231PD  splitConsts_c+96(R11), Y9, Y14
	VFNMADD231PD splitTab_g+96(R8), Y10, Y14
	// A lane's sign bit stays set only when all four bounds are negative.
	VANDPD       Y12, Y11, Y11
	VANDPD       Y14, Y13, Y13
	VANDPD       Y13, Y11, Y11
	VMOVMSKPD    Y11, AX
	XORQ         $15, AX
	ANDQ         R13, AX
	JNZ          hit
	MOVQ         $15, R13
	ADDQ         $4, CX
	CMPQ         CX, DX
	JLT          group

nextpair:
	INCQ R10
	CMPQ R10, DX
	JLT  pairs
	INCQ R9
	CMPQ R9, R12
	JLT  i1loop

done:
	VZEROUPPER
	RET

hit:
	// Lowest hit lane j: clear lanes <= j from R13, BX = i3 = CX + j.
	MOVQ AX, BX
	NEGQ BX
	ANDQ AX, BX
	LEAQ -1(BX)(BX*1), AX
	NOTQ AX
	ANDQ AX, R13
	BSFQ BX, BX
	ADDQ CX, BX

	// Exact sums of the first two segments, as splitState.pair.
	VMOVSS       (SI)(R9*4), X8
	VSUBSS       (SI), X8, X8         // a0 = sumx[i1] - sumx[0]
	VMOVSS       (SI)(R10*4), X9
	VSUBSS       (SI)(R9*4), X9, X9   // a1 = sumx[i2] - sumx[i1]
	VMOVSS       (DI)(R9*4), X10
	VSUBSS       (DI), X10, X10       // b0
	VMOVSS       (DI)(R10*4), X11
	VSUBSS       (DI)(R9*4), X11, X11 // b1
	VBROADCASTSS X8, X8
	VBROADCASTSS X9, X9
	VMULPS       splitConsts_vf+16(R11), X9, X14  // a1*v1
	VFMADD231PS  splitConsts_vf(R11), X8, X14     // hx = a0*v0 + that, fused
	VBROADCASTSS X10, X10
	VBROADCASTSS X11, X11
	VMULPS       splitConsts_vf+16(R11), X11, X15 // b1*v1
	VMULPS       splitConsts_vf+16(R11), X15, X15 // (b1*v1)*v1
	VMULPS       splitConsts_vf(R11), X10, X13    // b0*v0
	VFMADD231PS  splitConsts_vf(R11), X13, X15    // hq = (b0*v0)*v0 + that, fused

	// Exact sums of all four variants at i3, as splitState.eval.
	VMOVSS       (SI)(BX*4), X8
	VSUBSS       (SI)(R10*4), X8, X8   // a2 = sumx[i3] - sumx[i2]
	VMOVSS       (SI)(DX*4), X9
	VSUBSS       (SI)(BX*4), X9, X9    // a3 = sumx[n] - sumx[i3]
	VMOVSS       (DI)(BX*4), X10
	VSUBSS       (DI)(R10*4), X10, X10 // b2
	VMOVSS       (DI)(DX*4), X11
	VSUBSS       (DI)(BX*4), X11, X11  // b3
	VBROADCASTSS X8, X8
	VBROADCASTSS X9, X9
	VBROADCASTSS X10, X10
	VBROADCASTSS X11, X11
	VFMADD231PS  splitConsts_vf+32(R11), X8, X14  // a2*v2 + hx
	VFMADD231PS  splitConsts_vf+48(R11), X9, X14  // a3*v3 + that: sumqx
	VMULPS       splitConsts_vf+32(R11), X10, X13 // b2*v2
	VFMADD231PS  splitConsts_vf+32(R11), X13, X15 // (b2*v2)*v2 + hq
	VMULPS       splitConsts_vf+48(R11), X11, X13 // b3*v3
	VFMADD231PS  splitConsts_vf+48(R11), X13, X15 // (b3*v3)*v3 + that: sumq2
	VMULPS       X14, X14, X13
	VMOVUPS      X14, splitTab_qx(R8)
	VMOVUPS      X15, splitTab_q2(R8)
	VMOVUPS      X13, splitTab_qq(R8)

	// The reference's comparisons, variant by variant (BX = k, AX = changed).
	XORQ   AX, AX
	XORQ   BX, BX
	VXORPS X15, X15, X15

variant:
	VMOVSS    splitTab_q2(R8)(BX*4), X9
	VUCOMISS  X15, X9
	JLS       nextvariant             // not sumq2 > 0
	VMULSS    splitTab_best(R8), X9, X10     // best*sumq2
	VMOVSS    splitTab_qq(R8)(BX*4), X11
	VUCOMISS  X10, X11
	JLS       nextvariant             // not sumqx^2 > best*sumq2
	VMOVSS    splitTab_qx(R8)(BX*4), X11
	VDIVSS    X9, X11, X12            // d = sumqx/sumq2
	VMOVSS    X12, splitTab_d(R8)
	VMULSS    X11, X12, X12           // best = d*sumqx
	VMOVSS    X12, splitTab_best(R8)
	VCVTSS2SD X12, X12, X12
	VMULSD    splitConsts_bqScale(R11), X12, X12 // bq
	VDIVSD    splitConsts_rDiv(R11), X12, X12    // bq/(1+1e-4)
	VMAXSD    splitTab_rL(R8), X12, X12       // r = max(that, rL)
	VMOVSD    X12, splitTab_r(R8)
	MOVQ      BX, AX
	ANDQ      $1, AX
	MOVQ      AX, splitTab_shifted(R8)
	MOVQ      $1, AX

nextvariant:
	INCQ  BX
	CMPQ  BX, $4
	JLT   variant
	TESTQ AX, AX
	JZ    group
	RUPDATE
	JMP   setup // new A for this pair

DATA sortLanes<>+0(SB)/4, $0
DATA sortLanes<>+4(SB)/4, $1
DATA sortLanes<>+8(SB)/4, $2
DATA sortLanes<>+12(SB)/4, $3
DATA sortLanes<>+16(SB)/4, $4
DATA sortLanes<>+20(SB)/4, $5
DATA sortLanes<>+24(SB)/4, $6
DATA sortLanes<>+28(SB)/4, $7
DATA sortLanes<>+32(SB)/4, $8
GLOBL sortLanes<>(SB), RODATA|NOPTR, $36

// func sortRanksAVX2(x *float32, n int, idx *int) bool
// sortedOrder for n a positive multiple of 8 without a NaN (it returns false,
// idx untouched, when x holds one): the place of value j is its rank, the
// number of i with x[i] < x[j], or x[i] == x[j] and i < j, counted eight
// lanes at a time (Y4: the lanes' indices i, Y5: j in every lane).
TEXT ·sortRanksAVX2(SB), NOSPLIT, $0-25
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         idx+16(FP), DI
	XORQ         R8, R8
	XORL         R9, R9

sortnan:
	VMOVUPS      (SI)(R8*4), Y1
	VCMPPS       $3, Y1, Y1, Y2    // unordered: NaN
	VMOVMSKPS    Y2, AX
	ORL          AX, R9
	ADDQ         $8, R8
	CMPQ         R8, CX
	JLT          sortnan
	TESTL        R9, R9
	JNE          sortfail

	VPBROADCASTD sortLanes<>+32(SB), Y6 // 8
	XORQ         R10, R10          // j

sortrank:
	VBROADCASTSS (SI)(R10*4), Y0
	VMOVQ        R10, X5
	VPBROADCASTD X5, Y5
	VMOVDQU      sortLanes<>+0(SB), Y4
	XORQ         R8, R8
	XORQ         R11, R11          // rank

sortchunk:
	VMOVUPS      (SI)(R8*4), Y1
	VCMPPS       $1, Y0, Y1, Y2    // x[i] < x[j]
	VCMPPS       $0, Y0, Y1, Y3    // x[i] == x[j]
	VPCMPGTD     Y4, Y5, Y7        // i < j
	VPAND        Y7, Y3, Y3
	VPOR         Y3, Y2, Y2
	VMOVMSKPS    Y2, AX
	POPCNTL      AX, AX
	ADDQ         AX, R11
	VPADDD       Y6, Y4, Y4
	ADDQ         $8, R8
	CMPQ         R8, CX
	JLT          sortchunk

	MOVQ         R10, (DI)(R11*8)
	INCQ         R10
	CMPQ         R10, CX
	JLT          sortrank
	MOVB         $1, ret+24(FP)
	VZEROUPPER
	RET

sortfail:
	MOVB         $0, ret+24(FP)
	VZEROUPPER
	RET
