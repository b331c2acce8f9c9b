//go:build amd64 && !purego

#include "textflag.h"

DATA splitTopIota<>+0(SB)/8, $0x0000000100000000
DATA splitTopIota<>+8(SB)/8, $0x0000000300000002
DATA splitTopIota<>+16(SB)/8, $0x0000000500000004
DATA splitTopIota<>+24(SB)/8, $0x0000000700000006
GLOBL splitTopIota<>(SB), RODATA|NOPTR, $32

DATA splitTopConsts<>+0(SB)/4, $-1.0
DATA splitTopConsts<>+4(SB)/4, $0x0d800000  // 2^-100
DATA splitTopConsts<>+8(SB)/4, $1e-30
DATA splitTopConsts<>+12(SB)/4, $1e30
DATA splitTopConsts<>+16(SB)/4, $0.999986      // (1-1e-5)*(1-4e-6): lo = M*this
DATA splitTopConsts<>+20(SB)/4, $0.999994      // (1-1e-5)*(1+4e-6): hi = M*this
GLOBL splitTopConsts<>(SB), RODATA|NOPTR, $24

// func splitTopAVX2(out *float32, n, slots int, scores, chunkMax *float32, cand *[2 * splitTopMax]uint32) int
// The candidates of splitScanTop: pass 1 computes every valid position's
// score sumqx*sumqx/sumq2 (-1 where sumq2 > 0 fails or past n) into scores
// (the maximum of each chunk's lanes into chunkMax) and their maximum M;
// pass 2 lists, per chunk with any, the positions with
// a score >= hi (mask bit 8*slot + lane; cand holds chunk index, mask). It
// returns the number of chunks listed, or -1 when the shortcut is not safe:
// a score in (lo, hi), M outside [1e-30, 1e30) (none valid, overflow,
// NaN), a NaN score, a square sumqx*sumqx in (0, 2^-100) (not to full
// precision), or more than splitTopMax chunks.
TEXT ·splitTopAVX2(SB), NOSPLIT, $0-56
	MOVQ         out+0(FP), R8
	MOVQ         n+8(FP), DX
	MOVQ         slots+16(FP), R9
	MOVQ         scores+24(FP), R10
	VXORPS       Y13, Y13, Y13
	VBROADCASTSS splitTopConsts<>+0(SB), Y12 // -1
	VMOVAPS      Y12, Y11                    // running maximum
	VMOVDQU      splitTopIota<>(SB), Y10
	VXORPS       Y9, Y9, Y9                  // unsafe lanes
	VBROADCASTSS splitTopConsts<>+4(SB), Y8
	XORQ         R14, R14                    // chunks
	XORQ         BX, BX
	MOVQ         chunkMax+32(FP), R13

p1I1:
	MOVQ BX, CX

p1Chunk:
	MOVQ         DX, AX
	SUBQ         CX, AX
	INCQ         AX
	VMOVD        AX, X7
	VPBROADCASTD X7, Y7
	VPCMPGTD     Y10, Y7, Y7 // lanes with i2 = c+lane <= n
	VMOVAPS      Y12, Y15    // the chunk's maximum
	MOVQ         R9, R11

p1Slot:
	VMOVUPS   (R8), Y0
	VMOVUPS   32(R8), Y1
	VMULPS    Y0, Y0, Y2         // sumqx*sumqx
	VDIVPS    Y1, Y2, Y3         // score
	VCMPPS    $0x1e, Y13, Y1, Y4 // sumq2 > 0
	VPAND     Y7, Y4, Y4
	VCMPPS    $0x1e, Y13, Y2, Y5 // square > 0
	VCMPPS    $0x11, Y8, Y2, Y6  // square < 2^-100
	VPAND     Y6, Y5, Y5
	VCMPPS    $0x04, Y3, Y3, Y6  // NaN score
	VPOR      Y6, Y5, Y5
	VPAND     Y4, Y5, Y5
	VPOR      Y5, Y9, Y9
	VBLENDVPS Y4, Y3, Y12, Y3
	VMAXPS    Y3, Y15, Y15
	VMOVUPS   Y3, (R10)
	ADDQ      $64, R8
	ADDQ      $32, R10
	DECQ      R11
	JNZ       p1Slot
	VMAXPS    Y15, Y11, Y11
	MOVQ      R14, AX
	SHLQ      $5, AX
	VMOVUPS   Y15, (R13)(AX*1) // chunk maxima after the scores
	INCQ      R14
	ADDQ      $8, CX
	CMPQ      CX, DX
	JLE       p1Chunk
	INCQ      BX
	CMPQ      BX, DX
	JLE       p1I1

	VPTEST       Y9, Y9
	JNZ          unsafe
	VEXTRACTF128 $1, Y11, X0
	VMAXPS       X0, X11, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0 // M
	VMOVSS       splitTopConsts<>+8(SB), X1
	VUCOMISS     X1, X0
	JCS          unsafe     // M < 1e-30 or unordered
	VMOVSS       splitTopConsts<>+12(SB), X1
	VUCOMISS     X1, X0
	JCC          unsafe     // M >= 1e30
	VMULSS       splitTopConsts<>+16(SB), X0, X1
	VMULSS       splitTopConsts<>+20(SB), X0, X2
	VBROADCASTSS X1, Y14 // lo
	VBROADCASTSS X2, Y15 // hi

	MOVQ scores+24(FP), R10
	MOVQ chunkMax+32(FP), R8
	MOVQ cand+40(FP), R12
	XORQ R13, R13 // chunks listed
	XORQ SI, SI   // chunk index
	MOVQ R9, BX
	SHLQ $5, BX   // bytes of scores per chunk

p2Chunk:
	MOVQ    SI, AX
	SHLQ    $5, AX
	VMOVUPS (R8)(AX*1), Y0
	VCMPPS  $0x1e, Y14, Y0, Y1 // any score > lo?
	VPTEST  Y1, Y1
	JZ      p2Next
	LEAQ    -32(R10)(BX*1), R11 // the chunk's last slot
	XORL DI, DI
	MOVQ R9, AX

p2Slot:
	SHLL      $8, DI
	VMOVUPS   (R11), Y0
	VCMPPS    $0x1e, Y14, Y0, Y1 // > lo
	VCMPPS    $0x11, Y15, Y0, Y2 // < hi
	VPAND     Y2, Y1, Y1
	VPTEST    Y1, Y1
	JNZ       unsafe
	VCMPPS    $0x1d, Y15, Y0, Y3 // >= hi
	VMOVMSKPS Y3, CX
	ORL       CX, DI
	SUBQ      $32, R11
	DECQ      AX
	JNZ       p2Slot
	TESTL     DI, DI
	JZ        p2Next
	CMPQ      R13, $32 // splitTopMax
	JGE       unsafe
	MOVL      SI, (R12)(R13*8)
	MOVL      DI, 4(R12)(R13*8)
	INCQ      R13

p2Next:
	ADDQ BX, R10
	INCQ SI
	CMPQ SI, R14
	JLT  p2Chunk
	MOVQ R13, ret+48(FP)
	VZEROUPPER
	RET

unsafe:
	MOVQ $-1, ret+48(FP)
	VZEROUPPER
	RET
