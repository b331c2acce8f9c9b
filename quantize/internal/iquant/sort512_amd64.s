//go:build amd64 && !purego

#include "textflag.h"

// RANK_DIAG adds to the ranks R of the values X (lanes i = B..B+15) the
// contribution of x[j] (BX = j, B <= j < B+16): +1 where x[i] > x[j], and
// where x[i] == x[j] and i > j. Uses AX, CX, K1-K3.
#define RANK_DIAG(X, R, B) \
	VCMPPS.BCST $0x1e, (SI)(BX*4), X, K1 \
	VPADDD      Z31, R, K1, R \
	LEAQ        (1-B)(BX), CX \
	MOVQ        $0xffff, AX \
	SHLQ        CX, AX \
	KMOVW       AX, K2 \
	VCMPPS.BCST $0x00, (SI)(BX*4), X, K2, K3 \
	VPADDD      Z31, R, K3, R

// func sortRanks512(x *float32, n int, idx *int)
// idx[rank(i)] = i with rank(i) = #{j: x[j] < x[i]} + #{j < i: x[j] == x[i]}
// (the stable sorted order) for n = 16 or 32 finite values.
TEXT ·sortRanks512(SB), NOSPLIT, $128-24
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), DX
	MOVQ         idx+16(FP), DI
	VPTERNLOGD   $0xff, Z31, Z31, Z31
	VPSRLD       $31, Z31, Z31 // 1s
	VMOVUPS      (SI), Z0
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	XORQ         BX, BX
	CMPQ         DX, $32
	JEQ          rank32

rank16:
	RANK_DIAG(Z0, Z2, 0)
	INCQ BX
	CMPQ BX, $16
	JLT  rank16
	VMOVDQU32 Z2, (SP)
	JMP       invert

rank32:
	VMOVUPS 64(SI), Z1

rank32Lo: // j = 0..15: lanes 16..31 are all above j
	RANK_DIAG(Z0, Z2, 0)
	VCMPPS.BCST $0x1d, (SI)(BX*4), Z1, K1
	VPADDD      Z31, Z3, K1, Z3
	INCQ        BX
	CMPQ        BX, $16
	JLT         rank32Lo

rank32Hi: // j = 16..31: lanes 0..15 are all below j
	VCMPPS.BCST $0x1e, (SI)(BX*4), Z0, K1
	VPADDD      Z31, Z2, K1, Z2
	RANK_DIAG(Z1, Z3, 16)
	INCQ        BX
	CMPQ        BX, $32
	JLT         rank32Hi
	VMOVDQU32   Z2, (SP)
	VMOVDQU32   Z3, 64(SP)

invert:
	XORQ BX, BX

invLoop:
	MOVL (SP)(BX*4), AX
	MOVQ BX, (DI)(AX*8)
	INCQ BX
	CMPQ BX, DX
	JLT  invLoop
	VZEROUPPER
	RET

// func prefixFMA(x, w *float32, idx *int, n int, sumx, sumw *float32)
// sumx[0] = sumw[0] = 0, then for j < n with i = idx[j]:
// sumx[j+1] = fma(w[i], x[i], sumx[j]), sumw[j+1] = sumw[j] + w[i].
TEXT ·prefixFMA(SB), NOSPLIT, $0-48
	MOVQ   x+0(FP), SI
	MOVQ   w+8(FP), DI
	MOVQ   idx+16(FP), DX
	MOVQ   n+24(FP), CX
	MOVQ   sumx+32(FP), R8
	MOVQ   sumw+40(FP), R9
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VMOVSS X0, (R8)
	VMOVSS X1, (R9)
	XORQ   BX, BX

pfLoop:
	MOVQ        (DX)(BX*8), AX
	VMOVSS      (DI)(AX*4), X2
	VFMADD231SS (SI)(AX*4), X2, X0
	VADDSS      X2, X1, X1
	VMOVSS      X0, 4(R8)(BX*4)
	VMOVSS      X1, 4(R9)(BX*4)
	INCQ        BX
	CMPQ        BX, CX
	JLT         pfLoop
	RET
