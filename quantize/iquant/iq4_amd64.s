//go:build amd64 && !purego

#include "textflag.h"

// func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32)
TEXT ·iq4SumsFMA(SB), NOSPLIT, $0-40
	MOVQ weight+0(FP), SI
	MOVQ xb+8(FP), DI
	MOVQ L+16(FP), BX
	MOVQ values+24(FP), DX
	VXORPS X0, X0, X0 // sumqx
	VXORPS X1, X1, X1 // sumq2
	XORQ CX, CX

loop:
	MOVBLZX (BX)(CX*1), AX
	ANDL $15, AX
	VMOVSS (DX)(AX*4), X2         // q
	VMULSS (SI)(CX*4), X2, X3     // wq = w*q, rounded
	VFMADD231SS (DI)(CX*4), X3, X0 // sumqx = fma(wq, x, sumqx)
	VFMADD231SS X2, X3, X1         // sumq2 = fma(wq, q, sumq2)
	INCQ CX
	CMPQ CX, $32
	JLT loop

	MOVSS X0, sumqx+32(FP)
	MOVSS X1, sumq2+36(FP)
	RET

// func iq4LevelsAVX2(xb *float32, id float32, out *[32]uint8, tab *iq4VecTables)
// out[j] = bestIndexIQ4NL(id*xb[j]) without gathers: the table index ix =
// clamp(int(x)+127, 0, 240) is compared with the 15 thresholds where the
// base level steps up, the boundary start of that base and both candidate
// values come from 16-entry tables by permutes (two halves, blended on bit
// 3 of the base).
TEXT ·iq4LevelsAVX2(SB), NOSPLIT, $0-32
	MOVQ         xb+0(FP), SI
	VBROADCASTSS id+8(FP), Y15
	MOVQ         out+16(FP), DI
	MOVQ         tab+24(FP), DX
	MOVL         $127, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $240, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	VPXOR        Y13, Y13, Y13
	MOVQ         $4, CX

loop:
	VMULPS     (SI), Y15, Y0 // x = id*v
	VCVTTPS2DQ Y0, Y1        // int(x), truncated
	VPADDD     Y14, Y1, Y1   // - values[0]
	VPMAXSD    Y13, Y1, Y1
	VPMINSD    Y12, Y1, Y1   // ix, clamped to the table
	VPXOR      Y2, Y2, Y2
	VPCMPGTD   0(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   32(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   64(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   96(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   128(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   160(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   192(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   224(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   256(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   288(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   320(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   352(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   384(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   416(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2
	VPCMPGTD   448(DX), Y1, Y3
	VPSUBD     Y3, Y2, Y2    // base
	VPSLLD     $28, Y2, Y3   // bit 3 of base in the sign bit
	VPERMD     480(DX), Y2, Y4
	VPERMD     512(DX), Y2, Y5
	VBLENDVPS  Y3, Y5, Y4, Y4
	VPCMPGTD   Y4, Y1, Y4    // boundary: ix past the base's boundary start
	VPERMPS    544(DX), Y2, Y5
	VPERMPS    576(DX), Y2, Y6
	VBLENDVPS  Y3, Y6, Y5, Y5 // lo = values[base]
	VPERMPS    608(DX), Y2, Y6
	VPERMPS    640(DX), Y2, Y7
	VBLENDVPS  Y3, Y7, Y6, Y6 // hi = values[base+1]
	VSUBPS     Y5, Y0, Y7    // x - lo
	VSUBPS     Y0, Y6, Y8    // hi - x
	VCMPPS     $5, Y8, Y7, Y7 // !(x-lo < hi-x)
	VPAND      Y4, Y7, Y7
	VPSRLD     $31, Y7, Y7
	VPADDD     Y2, Y7, Y7
	VEXTRACTI128 $1, Y7, X8
	VPACKUSDW  X8, X7, X7
	VPACKUSWB  X7, X7, X7
	VMOVQ      X7, (DI)
	ADDQ       $32, SI
	ADDQ       $8, DI
	DECQ       CX
	JNZ        loop
	VZEROUPPER
	RET
