//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE8X8 takes the dwords of Y0-Y7 (row k in Yk) to 64-bit
// interleaves in place: per 128-bit lane, Y0 holds word 0 (lane 1: word 4)
// of rows 0-3, Y1 word 1|5, Y2 word 2|6, Y3 word 3|7, and Y4-Y7 the same
// for rows 4-7. VPERM2I128 then joins the lanes of Yc and Yc+4.
#define TRANSPOSE8X8 \
	VPUNPCKLDQ  Y1, Y0, Y8; \
	VPUNPCKHDQ  Y1, Y0, Y9; \
	VPUNPCKLDQ  Y3, Y2, Y10; \
	VPUNPCKHDQ  Y3, Y2, Y11; \
	VPUNPCKLDQ  Y5, Y4, Y12; \
	VPUNPCKHDQ  Y5, Y4, Y13; \
	VPUNPCKLDQ  Y7, Y6, Y14; \
	VPUNPCKHDQ  Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7

// func interleaveRows8AVX2(dst, src *byte, rowBytes, nb, hdr, words int)
// The interleave of chunkInterleaver for 8 rows: for each of nb blocks
// (block ib of row k at src + k*rowBytes + ib*(hdr+4*words)) it stores the
// 8 headers (hdr 1 or 2 bytes, or none) in row order, then the quant bytes as dword
// c of row k at 4*(8c+k), for words 4 or 8: the 8 rows' quants are one 8x8
// (or 8x4) matrix of dwords, transposed in registers and stored in order.
TEXT ·interleaveRows8AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rowBytes+16(FP), R9
	MOVQ nb+24(FP), CX
	MOVQ hdr+32(FP), R11
	MOVQ words+40(FP), R12
	MOVQ R12, R10
	SHLQ $2, R10
	ADDQ R11, R10          // block bytes
	TESTQ CX, CX
	JZ   done

block:
	// Headers and quants of the 8 rows; R8 walks the rows.
	MOVQ SI, R8
	XORQ DX, DX            // k
	TESTQ R11, R11
	JZ   quants
headers:
	CMPQ R11, $1
	JNE  hdr2
	MOVB (R8), AX
	MOVB AX, (DI)(DX*1)
	JMP  hdrnext
hdr2:
	MOVW (R8), AX
	MOVW AX, (DI)(DX*2)
hdrnext:
	ADDQ R9, R8
	INCQ DX
	CMPQ DX, $8
	JLT  headers

quants:
	// R13 = the first quant byte of row 0, R14 = 3*rowBytes.
	LEAQ (SI)(R11*1), R13
	LEAQ (R9)(R9*2), R14
	// DI + 8*hdr is where the quants go.
	LEAQ (DI)(R11*8), BX
	CMPQ R12, $8
	JNE  four

	VMOVDQU (R13), Y0
	VMOVDQU (R13)(R9*1), Y1
	VMOVDQU (R13)(R9*2), Y2
	VMOVDQU (R13)(R14*1), Y3
	LEAQ    (R13)(R9*4), R15
	VMOVDQU (R15), Y4
	VMOVDQU (R15)(R9*1), Y5
	VMOVDQU (R15)(R9*2), Y6
	VMOVDQU (R15)(R14*1), Y7
	TRANSPOSE8X8
	VPERM2I128 $0x20, Y4, Y0, Y8
	VPERM2I128 $0x20, Y5, Y1, Y9
	VPERM2I128 $0x20, Y6, Y2, Y10
	VPERM2I128 $0x20, Y7, Y3, Y11
	VPERM2I128 $0x31, Y4, Y0, Y12
	VPERM2I128 $0x31, Y5, Y1, Y13
	VPERM2I128 $0x31, Y6, Y2, Y14
	VPERM2I128 $0x31, Y7, Y3, Y15
	VMOVDQU Y8, (BX)
	VMOVDQU Y9, 32(BX)
	VMOVDQU Y10, 64(BX)
	VMOVDQU Y11, 96(BX)
	VMOVDQU Y12, 128(BX)
	VMOVDQU Y13, 160(BX)
	VMOVDQU Y14, 192(BX)
	VMOVDQU Y15, 224(BX)
	JMP     next

four:
	// 16 quant bytes per row: loaded into the low lanes (the high lanes
	// zero), so only the low-lane halves of the result are stored.
	VMOVDQU (R13), X0
	VMOVDQU (R13)(R9*1), X1
	VMOVDQU (R13)(R9*2), X2
	VMOVDQU (R13)(R14*1), X3
	LEAQ    (R13)(R9*4), R15
	VMOVDQU (R15), X4
	VMOVDQU (R15)(R9*1), X5
	VMOVDQU (R15)(R9*2), X6
	VMOVDQU (R15)(R14*1), X7
	TRANSPOSE8X8
	VPERM2I128 $0x20, Y4, Y0, Y8
	VPERM2I128 $0x20, Y5, Y1, Y9
	VPERM2I128 $0x20, Y6, Y2, Y10
	VPERM2I128 $0x20, Y7, Y3, Y11
	VMOVDQU Y8, (BX)
	VMOVDQU Y9, 32(BX)
	VMOVDQU Y10, 64(BX)
	VMOVDQU Y11, 96(BX)

next:
	ADDQ R10, SI
	LEAQ (DI)(R10*8), DI
	DECQ CX
	JNZ  block

done:
	VZEROUPPER
	RET
