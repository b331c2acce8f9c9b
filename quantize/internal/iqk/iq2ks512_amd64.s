//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// COUNT_CHUNK512 is COUNT_CHUNK (iq2ks_amd64.s) on two scales at once: the
// low 256 bits of each register belong to scale i, the high 256 bits to
// scale i+1, and every operation is per lane, so each half computes what
// COUNT_CHUNK computes for its scale, operation for operation. XC and WC
// hold the chunk of x and of w in both halves; Z0-Z3 the scaled grid
// points; Z28 the grid's perm in both halves (the counted indices 0, -1,
// -2, -3 read lanes 0, 15, 14, 13, which hold v0, v1, v2, v3 in both
// halves); Z31 is all ones (-1). The compare masks become the -1/0 count
// as VPCMPGTD's vector result does in COUNT_CHUNK.
#define COUNT_CHUNK512(OP, XC, WC, ACCX, ACCQ) \
	OP          Z0, XC, Z11           \
	VMULPS      Z11, Z11, Z11         \
	OP          Z1, XC, Z12           \
	VMULPS      Z12, Z12, Z12         \
	VPCMPGTD    Z12, Z11, K1          \
	VPMOVM2D    K1, Z13               \
	OP          Z2, XC, Z11           \
	VMULPS      Z11, Z11, Z11         \
	VPCMPGTD    Z11, Z12, K1          \
	VPADDD      Z31, Z13, K1, Z13     \
	OP          Z3, XC, Z12           \
	VMULPS      Z12, Z12, Z12         \
	VPCMPGTD    Z12, Z11, K1          \
	VPADDD      Z31, Z13, K1, Z13     \
	VPERMPS     Z28, Z13, Z14         \
	VMULPS      WC, Z14, Z15          \
	VFMADD231PS XC, Z15, ACCX         \
	VFMADD231PS Z14, Z15, ACCQ

// FITS512 is the body of one step of iq2ksFitsCount512: the scales d =
// maxv/den from the denominators in Z15 (one per half), the scaled grid,
// and the fits for d and -d of the 32 values into Z8, Z9 (d) and Z4, Z5
// (-d), as iq2ksFitsCountAVX2 does per scale.
#define FITS512 \
	VDIVPS      Z15, Z7, Z15                   \
	VMULPS      Z16, Z15, Z0                   \
	VMULPS      Z17, Z15, Z1                   \
	VMULPS      Z18, Z15, Z2                   \
	VMULPS      Z19, Z15, Z3                   \
	VPXORD      Z8, Z8, Z8                     \
	VPXORD      Z9, Z9, Z9                     \
	VPXORD      Z4, Z4, Z4                     \
	VPXORD      Z5, Z5, Z5                     \
	COUNT_CHUNK512(VSUBPS, Z20, Z24, Z8, Z9)   \
	COUNT_CHUNK512(VADDPS, Z20, Z24, Z4, Z5)   \
	COUNT_CHUNK512(VSUBPS, Z21, Z25, Z8, Z9)   \
	COUNT_CHUNK512(VADDPS, Z21, Z25, Z4, Z5)   \
	COUNT_CHUNK512(VSUBPS, Z22, Z26, Z8, Z9)   \
	COUNT_CHUNK512(VADDPS, Z22, Z26, Z4, Z5)   \
	COUNT_CHUNK512(VSUBPS, Z23, Z27, Z8, Z9)   \
	COUNT_CHUNK512(VADDPS, Z23, Z27, Z4, Z5)

// func iq2ksFitsCount512(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32)
// iq2ksFitsCountAVX2 with the scales taken two at a time in 512-bit
// registers; the same raw sums, bit for bit. An odd last scale runs in
// both halves and only the low half is stored.
TEXT ·iq2ksFitsCount512(SB), NOSPLIT, $0-56
	MOVQ             x+0(FP), SI
	MOVQ             w+8(FP), DI
	VBROADCASTSS     maxv+16(FP), Z7
	MOVQ             den+24(FP), AX
	MOVQ             n+32(FP), CX
	MOVQ             grid+40(FP), R8
	MOVQ             raw+48(FP), DX
	VBROADCASTF64X4  iq2ksGrid_vb(R8), Z16
	VBROADCASTF64X4  (iq2ksGrid_vb+32)(R8), Z17
	VBROADCASTF64X4  (iq2ksGrid_vb+64)(R8), Z18
	VBROADCASTF64X4  (iq2ksGrid_vb+96)(R8), Z19
	VBROADCASTF64X4  iq2ksGrid_perm(R8), Z28
	VBROADCASTF64X4  0(SI), Z20
	VBROADCASTF64X4  32(SI), Z21
	VBROADCASTF64X4  64(SI), Z22
	VBROADCASTF64X4  96(SI), Z23
	VBROADCASTF64X4  0(DI), Z24
	VBROADCASTF64X4  32(DI), Z25
	VBROADCASTF64X4  64(DI), Z26
	VBROADCASTF64X4  96(DI), Z27
	VPTERNLOGD       $0xff, Z31, Z31, Z31
	SUBQ             $2, CX
	JLT              tail

pairs:
	VBROADCASTSS     (AX), Y15
	VBROADCASTSS     4(AX), Y14
	VINSERTF64X4     $1, Y14, Z15, Z15
	FITS512
	// raw[i] gets the low halves, raw[i+1] the high halves.
	VSHUFF64X2       $0x44, Z9, Z8, Z10
	VSHUFF64X2       $0xEE, Z9, Z8, Z11
	VSHUFF64X2       $0x44, Z5, Z4, Z12
	VSHUFF64X2       $0xEE, Z5, Z4, Z13
	VMOVUPS          Z10, 0(DX)
	VMOVUPS          Z12, 64(DX)
	VMOVUPS          Z11, 128(DX)
	VMOVUPS          Z13, 192(DX)
	ADDQ             $8, AX
	ADDQ             $256, DX
	SUBQ             $2, CX
	JGE              pairs

tail:
	CMPQ             CX, $-1
	JNE              done
	VBROADCASTSS     (AX), Z15
	FITS512
	VMOVUPS          Y8, 0(DX)
	VMOVUPS          Y9, 32(DX)
	VMOVUPS          Y4, 64(DX)
	VMOVUPS          Y5, 96(DX)

done:
	VZEROUPPER
	RET
