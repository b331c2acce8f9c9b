//go:build amd64 && !purego

#include "textflag.h"

// func bestNeighbourFMA(levels *uint8, dim int, cands *uint16, n int, diffs, wdiffs *[64]float32) int
TEXT ·bestNeighbourFMA(SB), NOSPLIT, $0-56
	MOVQ levels+0(FP), SI
	MOVQ dim+8(FP), DX
	MOVQ cands+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ diffs+32(FP), R8
	MOVQ wdiffs+40(FP), R9
	MOVQ $-1, AX
	MOVL $0x7f7fffff, R13
	MOVL R13, X1
	XORQ BX, BX
	CMPQ CX, $0
	JLE  done

cand:
	MOVWQZX (DI)(BX*2), R10
	IMULQ   DX, R10
	ADDQ    SI, R10
	VXORPS  X0, X0, X0
	XORQ    R11, R11
	XORQ    R12, R12

coord:
	MOVBQZX     (R10)(R11*1), R13
	ANDQ        $7, R13
	ADDQ        R12, R13
	VMOVSS      (R9)(R13*4), X2
	VFMADD231SS (R8)(R13*4), X2, X0
	INCQ        R11
	ADDQ        $8, R12
	CMPQ        R11, DX
	JLT         coord

	// best > d2, ordered (a NaN sum never wins): strictly smaller wins.
	VUCOMISS X0, X1
	JLS      next
	VMOVAPS  X0, X1
	MOVQ     BX, AX

next:
	INCQ BX
	CMPQ BX, CX
	JLT  cand

done:
	MOVQ AX, ret+48(FP)
	RET
