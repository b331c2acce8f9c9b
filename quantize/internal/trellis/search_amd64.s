//go:build amd64 && !purego

#include "textflag.h"
#include "search_amd64.h"

DATA posInf<>+0(SB)/4, $0x7f800000
GLOBL posInf<>(SB), RODATA|NOPTR, $4

// The block searches compute some differences d = q - x as q*1 - x with a
// fused multiply-subtract: one rounding of the same exact value, so the same
// float32, but on the FMA pipes, which leaves the add pipes (the busier
// ones) less to do. Some compute x - q instead (a shorter encoding with the
// high registers): that is exactly -(q - x), and only d*d is used.
DATA one<>+0(SB)/4, $0x3f800000
GLOBL one<>(SB), RODATA|NOPTR, $4

// The searches keep, per lane, the best score (VMINPS) and the index of the
// codeword that reached it (strictly smaller wins: VCMPPS less-than, then
// VBLENDVPS), exactly as the reference does, without branches: a test that
// could skip part of a run costs more in mispredictions than it saves.

// One lane-layout run of eight codewords of 8 values: coordinate k of all
// eight lanes is the 8 fp16 at 16*k, the eight uint32 codeword indices
// follow at 128. The weighted squares e_k = w_k*(d_k*d_k) (d_k = q_k - x_k)
// are added as ((e0+e4)+(e2+e6)) + ((e1+e5)+(e3+e7)), the order of the
// reference's hsum_float_8x8. The fp16 to float32 conversions are exact.
//
// func nearest8AVX2(lanes *byte, nblock int, vx, w *[8]float32, best *[8]float32, index *[8]int32)
TEXT ·nearest8AVX2(SB), NOSPLIT, $256-48
	MOVQ lanes+0(FP), SI
	MOVQ nblock+8(FP), CX
	MOVQ vx+16(FP), AX
	MOVQ w+24(FP), DX
	VBROADCASTSS 0(AX), Y8
	VBROADCASTSS 4(AX), Y9
	VBROADCASTSS 8(AX), Y10
	VBROADCASTSS 12(AX), Y11
	VBROADCASTSS 16(AX), Y12
	VBROADCASTSS 20(AX), Y13
	VBROADCASTSS 24(AX), Y14
	VBROADCASTSS 28(AX), Y15
	// The weights, broadcast, live in the frame: 0(SP) + 32*k is w_k.
	VBROADCASTSS 0(DX), Y0
	VMOVUPS Y0, 0(SP)
	VBROADCASTSS 4(DX), Y0
	VMOVUPS Y0, 32(SP)
	VBROADCASTSS 8(DX), Y0
	VMOVUPS Y0, 64(SP)
	VBROADCASTSS 12(DX), Y0
	VMOVUPS Y0, 96(SP)
	VBROADCASTSS 16(DX), Y0
	VMOVUPS Y0, 128(SP)
	VBROADCASTSS 20(DX), Y0
	VMOVUPS Y0, 160(SP)
	VBROADCASTSS 24(DX), Y0
	VMOVUPS Y0, 192(SP)
	VBROADCASTSS 28(DX), Y0
	VMOVUPS Y0, 224(SP)
	VBROADCASTSS posInf<>(SB), Y4 // best score per lane: +Inf
	VPCMPEQD Y5, Y5, Y5           // best index per lane: -1
	TESTQ CX, CX
	JEQ done8

loop8:
	VCVTPH2PS 0(SI), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y0, Y0, Y0
	VMULPS 0(SP), Y0, Y0
	VCVTPH2PS 64(SI), Y1
	VSUBPS Y12, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 128(SP), Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 32(SI), Y1
	VSUBPS Y10, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 64(SP), Y1, Y1
	VCVTPH2PS 96(SI), Y2
	VSUBPS Y14, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 192(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 32(SP), Y1, Y1
	VCVTPH2PS 80(SI), Y2
	VSUBPS Y13, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 160(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y11, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 96(SP), Y2, Y2
	VCVTPH2PS 112(SI), Y3
	VSUBPS Y15, Y3, Y3
	VMULPS Y3, Y3, Y3
	VMULPS 224(SP), Y3, Y3
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	// A lane takes the candidate if its score is strictly smaller.
	VCMPPS $0x11, Y4, Y0, Y1 // score < best (ordered, quiet)
	VBLENDVPS Y1, 128(SI), Y5, Y5
	VMINPS Y0, Y4, Y4
	ADDQ $160, SI
	DECQ CX
	JNE loop8

done8:
	MOVQ best+32(FP), AX
	MOVQ index+40(FP), DX
	VMOVUPS Y4, 0(AX)
	VMOVDQU Y5, 0(DX)
	VZEROUPPER
	RET

// Groups of 4: a run has coordinate k of the eight lanes at 16*k bytes, then
// the indices at 64; the score is (e0+e2) + (e1+e3), the order of the
// reference's hsum_float_4x8.
//
// func nearest4AVX2(lanes *byte, nblock int, vx, w *[4]float32, best *[8]float32, index *[8]int32)
TEXT ·nearest4AVX2(SB), NOSPLIT, $0-48
	MOVQ lanes+0(FP), SI
	MOVQ nblock+8(FP), CX
	MOVQ vx+16(FP), AX
	MOVQ w+24(FP), DX
	VBROADCASTSS 0(AX), Y8
	VBROADCASTSS 4(AX), Y9
	VBROADCASTSS 8(AX), Y10
	VBROADCASTSS 12(AX), Y11
	VBROADCASTSS 0(DX), Y12
	VBROADCASTSS 4(DX), Y13
	VBROADCASTSS 8(DX), Y14
	VBROADCASTSS 12(DX), Y15
	VBROADCASTSS posInf<>(SB), Y4
	VPCMPEQD Y5, Y5, Y5
	TESTQ CX, CX
	JEQ done4

loop4:
	VCVTPH2PS 0(SI), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y0, Y0, Y0
	VMULPS Y12, Y0, Y0
	VCVTPH2PS 32(SI), Y1
	VSUBPS Y10, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS Y14, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS Y13, Y1, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y11, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS Y15, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCMPPS $0x11, Y4, Y0, Y1
	VBLENDVPS Y1, 64(SI), Y5, Y5
	VMINPS Y0, Y4, Y4
	ADDQ $96, SI
	DECQ CX
	JNE loop4

done4:
	MOVQ best+32(FP), AX
	MOVQ index+40(FP), DX
	VMOVUPS Y4, 0(AX)
	VMOVDQU Y5, 0(DX)
	VZEROUPPER
	RET

// func scaleSumsAVX2(q, x, w *[32]float32, sums *[16]float32)
TEXT ·scaleSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), AX
	MOVQ x+8(FP), BX
	MOVQ w+16(FP), CX
	MOVQ sums+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VMOVUPS 0(AX), Y2
	VMULPS 0(CX), Y2, Y3
	VFMADD231PS 0(BX), Y3, Y0
	VFMADD231PS Y2, Y3, Y1
	VMOVUPS 32(AX), Y2
	VMULPS 32(CX), Y2, Y3
	VFMADD231PS 32(BX), Y3, Y0
	VFMADD231PS Y2, Y3, Y1
	VMOVUPS 64(AX), Y2
	VMULPS 64(CX), Y2, Y3
	VFMADD231PS 64(BX), Y3, Y0
	VFMADD231PS Y2, Y3, Y1
	VMOVUPS 96(AX), Y2
	VMULPS 96(CX), Y2, Y3
	VFMADD231PS 96(BX), Y3, Y0
	VFMADD231PS Y2, Y3, Y1
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET



// searchBlock4AVX2 is findBestMatch for the eight groups of 4 of a block in
// one call: vx = id*x, each group's cluster by bin5, the nearest4AVX2 scan
// of the cluster's runs, and the lane reduction. It returns 1, without
// finishing, if a cluster is empty or a search finds no codeword.
//
// Frame: 0(SP) vx (32 float32), 128(SP) the bins (32 int32).
//
// With sums not nil it then adds up find_best_scale's lanes for the chosen
// codewords (values: the codebook's float32 values), as scaleSumsAVX2 does.
//
// func searchBlock4AVX2(lanes *byte, spans *uint32, id float32, x, w *[32]float32, idx *[8]int32, values *float32, sums *[16]float32) int
TEXT ·searchBlock4AVX2(SB), NOSPLIT, $256-72
	MOVQ lanes+0(FP), R8
	MOVQ spans+8(FP), R9
	MOVQ x+24(FP), AX
	MOVQ w+32(FP), R10
	MOVQ idx+40(FP), R11
	MOVQ values+48(FP), R13
	VBROADCASTSS id+16(FP), Y0
	BINS4_BLOCK

	VBROADCASTSS posInf<>(SB), Y7
	VBROADCASTSS one<>(SB), Y6
	XORQ DI, DI // group
	XORQ R12, R12 // 16*group

group4:
	BIN_CLUSTER
	MOVL 0(R9)(AX*8), SI
	MOVL 4(R9)(AX*8), CX
	TESTL CX, CX
	JEQ fail4
	ADDQ R8, SI
	VBROADCASTSS 0(SP)(R12*1), Y8
	VBROADCASTSS 4(SP)(R12*1), Y9
	VBROADCASTSS 8(SP)(R12*1), Y10
	VBROADCASTSS 12(SP)(R12*1), Y11
	VBROADCASTSS 0(R10)(R12*1), Y12
	VBROADCASTSS 4(R10)(R12*1), Y13
	VBROADCASTSS 8(R10)(R12*1), Y14
	VBROADCASTSS 12(R10)(R12*1), Y15
	VMOVAPS Y7, Y4
	VPCMPEQD Y5, Y5, Y5
	PCALIGN $64

scan4:
	VCVTPH2PS 0(SI), Y0
	VFMSUB132PS Y6, Y8, Y0
	VMULPS Y0, Y0, Y0
	VMULPS Y0, Y12, Y0
	VCVTPH2PS 32(SI), Y1
	VSUBPS Y1, Y10, Y1
	VMULPS Y1, Y1, Y1
	VMULPS Y1, Y14, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VFMSUB132PS Y6, Y9, Y1
	VMULPS Y1, Y1, Y1
	VMULPS Y1, Y13, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y2, Y11, Y2
	VMULPS Y2, Y2, Y2
	VMULPS Y2, Y15, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCMPPS $0x11, Y4, Y0, Y1
	VBLENDVPS Y1, 64(SI), Y5, Y5
	VMINPS Y0, Y4, Y4
	ADDQ $96, SI
	DECL CX
	JNE scan4

	REDUCE(fail4)
	MOVL BX, 0(R11)(DI*4)
	// Fetch the winner's values for the sums (and the caller) now: the
	// table is too large for the caches, and the next scans hide the wait.
	SHLQ $4, BX
	PREFETCHT0 (R13)(BX*1)
	ADDQ $16, R12
	INCQ DI
	CMPQ DI, $8
	JNE group4

	MOVQ sums+56(FP), CX
	TESTQ CX, CX
	JEQ ok4
	MOVQ values+48(FP), R13
	MOVQ x+24(FP), DX
	SUMS4

ok4:
	MOVQ $0, ret+64(FP)
	VZEROUPPER
	RET

fail4:
	MOVQ $1, ret+64(FP)
	VZEROUPPER
	RET

// searchBlock8AVX2 is searchBlock4AVX2 for the four groups of 8 of a block:
// the cluster's bits are vx > mid, and the scan is nearest8AVX2's.
//
// Frame: 0(SP) the group's weights broadcast (8 x 32 bytes), 256(SP) vx
// (32 float32), 384(SP) the clusters (4 int32).
//
// func searchBlock8AVX2(lanes *byte, spans *uint32, mid *[8]float32, id float32, x, w *[32]float32, idx *[4]int32, values *float32, sums *[16]float32) int
TEXT ·searchBlock8AVX2(SB), NOSPLIT, $400-80
	MOVQ lanes+0(FP), R8
	MOVQ spans+8(FP), R9
	MOVQ mid+16(FP), AX
	VMOVUPS 0(AX), Y6
	MOVQ x+32(FP), AX
	MOVQ w+40(FP), R10
	MOVQ idx+48(FP), R11
	MOVQ values+56(FP), R13
	VBROADCASTSS id+24(FP), Y0

	CLUSTER8(0, 256, 384)
	CLUSTER8(1, 256, 384)
	CLUSTER8(2, 256, 384)
	CLUSTER8(3, 256, 384)

	VBROADCASTSS posInf<>(SB), Y7
	VBROADCASTSS one<>(SB), Y6
	XORQ DI, DI // group
	XORQ R12, R12 // 32*group

group8:
	MOVL 384(SP)(DI*4), AX
	MOVL 0(R9)(AX*8), SI
	MOVL 4(R9)(AX*8), CX
	TESTL CX, CX
	JEQ fail8
	ADDQ R8, SI
	VBROADCASTSS 256(SP)(R12*1), Y8
	VBROADCASTSS 260(SP)(R12*1), Y9
	VBROADCASTSS 264(SP)(R12*1), Y10
	VBROADCASTSS 268(SP)(R12*1), Y11
	VBROADCASTSS 272(SP)(R12*1), Y12
	VBROADCASTSS 276(SP)(R12*1), Y13
	VBROADCASTSS 280(SP)(R12*1), Y14
	VBROADCASTSS 284(SP)(R12*1), Y15
	VBROADCASTSS 0(R10)(R12*1), Y0
	VMOVUPS Y0, 0(SP)
	VBROADCASTSS 4(R10)(R12*1), Y0
	VMOVUPS Y0, 32(SP)
	VBROADCASTSS 8(R10)(R12*1), Y0
	VMOVUPS Y0, 64(SP)
	VBROADCASTSS 12(R10)(R12*1), Y0
	VMOVUPS Y0, 96(SP)
	VBROADCASTSS 16(R10)(R12*1), Y0
	VMOVUPS Y0, 128(SP)
	VBROADCASTSS 20(R10)(R12*1), Y0
	VMOVUPS Y0, 160(SP)
	VBROADCASTSS 24(R10)(R12*1), Y0
	VMOVUPS Y0, 192(SP)
	VBROADCASTSS 28(R10)(R12*1), Y0
	VMOVUPS Y0, 224(SP)
	VMOVAPS Y7, Y4
	VPCMPEQD Y5, Y5, Y5
	PCALIGN $64

scan8:
	VCVTPH2PS 0(SI), Y0
	VFMSUB132PS Y6, Y8, Y0
	VMULPS Y0, Y0, Y0
	VMULPS 0(SP), Y0, Y0
	VCVTPH2PS 64(SI), Y1
	VFMSUB132PS Y6, Y12, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 128(SP), Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 32(SI), Y1
	VFMSUB132PS Y6, Y10, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 64(SP), Y1, Y1
	VCVTPH2PS 96(SI), Y2
	VFMSUB132PS Y6, Y14, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 192(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCVTPH2PS 16(SI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y1, Y1, Y1
	VMULPS 32(SP), Y1, Y1
	VCVTPH2PS 80(SI), Y2
	VSUBPS Y13, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 160(SP), Y2, Y2
	VADDPS Y2, Y1, Y1
	VCVTPH2PS 48(SI), Y2
	VSUBPS Y11, Y2, Y2
	VMULPS Y2, Y2, Y2
	VMULPS 96(SP), Y2, Y2
	VCVTPH2PS 112(SI), Y3
	VSUBPS Y15, Y3, Y3
	VMULPS Y3, Y3, Y3
	VMULPS 224(SP), Y3, Y3
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y1, Y1
	VADDPS Y1, Y0, Y0
	VCMPPS $0x11, Y4, Y0, Y1
	VBLENDVPS Y1, 128(SI), Y5, Y5
	VMINPS Y0, Y4, Y4
	ADDQ $160, SI
	DECL CX
	JNE scan8

	REDUCE(fail8)
	NEXT_GROUP8(group8)

	MOVQ sums+64(FP), CX
	TESTQ CX, CX
	JEQ ok8
	MOVQ values+56(FP), R13
	MOVQ x+32(FP), DX
	SUMS8

ok8:
	MOVQ $0, ret+72(FP)
	VZEROUPPER
	RET

fail8:
	MOVQ $1, ret+72(FP)
	VZEROUPPER
	RET
