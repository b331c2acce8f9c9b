//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

DATA nbFirstPos<>+0(SB)/4, $0
DATA nbFirstPos<>+4(SB)/4, $1
DATA nbFirstPos<>+8(SB)/4, $2
DATA nbFirstPos<>+12(SB)/4, $3
DATA nbFirstPos<>+16(SB)/4, $4
DATA nbFirstPos<>+20(SB)/4, $5
DATA nbFirstPos<>+24(SB)/4, $6
DATA nbFirstPos<>+28(SB)/4, $7
GLOBL nbFirstPos<>(SB), RODATA|NOPTR, $32

DATA nbStep<>+0(SB)/8, $0x0000000800000008
DATA nbStep<>+8(SB)/8, $0x0000000800000008
DATA nbStep<>+16(SB)/8, $0x0000000800000008
DATA nbStep<>+24(SB)/8, $0x0000000800000008
GLOBL nbStep<>(SB), RODATA|NOPTR, $32

DATA nbMaxFloat<>+0(SB)/4, $0x7f7fffff
GLOBL nbMaxFloat<>(SB), RODATA|NOPTR, $4

// NB_TABLES builds table register P (diffs in DP, weighted diffs in WP) from
// Y8 = x, Y9 = w, Y10 = scale, level values at R12; expand row P at R9.
#define NB_TABLES(P, DP, WP) \
	VMOVDQU     (32*P)(R9), Y12 \
	VPERMPS     Y8, Y12, DP \
	VPERMPS     Y9, Y12, WP \
	VFMSUB231PS (R12), Y10, DP \
	VMULPS      DP, WP, WP

// NB_TABLES4 is NB_TABLES for dim 4 (x and w at group offset AX):
// coordinate c's register holds fma(scale, q[l], -x[c]) in lane l.
#define NB_TABLES4(OFF, DP, WP) \
	VBROADCASTSS OFF(SI)(AX*4), DP \
	VBROADCASTSS OFF(DI)(AX*4), WP \
	VFMSUB231PS  (R12), Y10, DP \
	VMULPS       DP, WP, WP

// NB_COORD adds one coordinate of eight candidates to Y9: the level fields
// of Y8 shifted by SHIFT select lanes of the tables DP and WP.
#define NB_COORD(SHIFT, DP, WP) \
	VPSRLD      $SHIFT, Y8, Y12 \
	VPERMPS     DP, Y12, Y10 \
	VPERMPS     WP, Y12, Y11 \
	VFMADD231PS Y10, Y11, Y9

// NB_KEEP keeps, per lane, the first strictly smaller sum and its position,
// then advances to the next chunk.
#define NB_KEEP \
	VCMPPS    $0x11, Y13, Y9, Y10 \
	VBLENDVPS Y10, Y9, Y13, Y13 \
	VBLENDVPS Y10, Y15, Y14, Y14 \
	VPADDD    nbStep<>(SB), Y15, Y15 \
	ADDQ      $32, R13

// NB_REDUCE leaves in AX the position of the smallest of the lane minima
// (Y13, positions in Y14), the lowest position among equal ones: the first
// minimum over all candidates. Lanes never updated hold MaxFloat32 and -1, so
// with no update at all the result is -1.
#define NB_REDUCE \
	VEXTRACTF128 $1, Y13, X9 \
	VMINPS       X13, X9, X9 \
	VPERMILPS    $0x4e, X9, X10 \
	VMINPS       X10, X9, X9 \
	VPERMILPS    $0xb1, X9, X10 \
	VMINPS       X10, X9, X9 \
	VINSERTF128  $1, X9, Y9, Y9 \
	VCMPPS       $0x00, Y9, Y13, Y10 \
	VPCMPEQD     Y11, Y11, Y11 \
	VPSRLD       $1, Y11, Y11 \
	VBLENDVPS    Y10, Y14, Y11, Y11 \
	VEXTRACTI128 $1, Y11, X12 \
	VPMINSD      X12, X11, X11 \
	VPSHUFD      $0x4e, X11, X12 \
	VPMINSD      X12, X11, X11 \
	VPSHUFD      $0xb1, X11, X12 \
	VPMINSD      X12, X11, X11 \
	VMOVD        X11, AX

// func neighbourJobsAVX2(x, w *float32, q *[8]float32, expand *[4][8]int32, lanes *uint32, jobs *nbJob, njobs, dim int)
// jobs is an array of njobs nbJobs (offsets from go_asm.h).
TEXT ·neighbourJobsAVX2(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ expand+24(FP), R9
	MOVQ lanes+32(FP), R10
	MOVQ jobs+40(FP), R8
	MOVQ njobs+48(FP), R11
	MOVQ dim+56(FP), DX
	MOVQ q+16(FP), R12
	TESTQ R11, R11
	JLE  end

job:
	MOVLQSX nbJob_group(R8), AX
	IMULQ   DX, AX
	VBROADCASTSS nbJob_scale(R8), Y10
	CMPQ    DX, $8
	JEQ     load8

	// dim 4: table register c is coordinate c, lane l its level.
	NB_TABLES4(0, Y0, Y4)
	NB_TABLES4(4, Y1, Y5)
	NB_TABLES4(8, Y2, Y6)
	NB_TABLES4(12, Y3, Y7)
	MOVLQSX nbJob_chunks(R8), CX
	CMPQ    CX, $1
	JNE     tablesDone

	// One chunk, as most dim-4 jobs have: no running minimum needed.
	MOVLQSX      nbJob_laneOff(R8), BX
	VMOVDQU      (R10)(BX*4), Y8
	VXORPS       Y9, Y9, Y9
	VPERMPS      Y0, Y8, Y10
	VPERMPS      Y4, Y8, Y11
	VFMADD231PS  Y10, Y11, Y9
	NB_COORD(3, Y1, Y5)
	NB_COORD(6, Y2, Y6)
	NB_COORD(9, Y3, Y7)

oneReduce:
	VBROADCASTSS nbMaxFloat<>(SB), Y13
	VCMPPS       $0x11, Y13, Y9, Y10 // below MaxFloat32 (false for NaN)
	VBLENDVPS    Y10, Y9, Y13, Y9
	VEXTRACTF128 $1, Y9, X11
	VMINPS       X9, X11, X11
	VPERMILPS    $0x4e, X11, X12
	VMINPS       X12, X11, X11
	VPERMILPS    $0xb1, X11, X12
	VMINPS       X12, X11, X11
	VUCOMISS     X13, X11
	JCC          noneOne
	VINSERTF128  $1, X11, Y11, Y11
	VCMPPS       $0x00, Y11, Y9, Y12
	VMOVMSKPS    Y12, AX
	BSFL         AX, AX // the first lane with the minimum
	MOVL         AX, nbJob_pos(R8)
	JMP          next

noneOne:
	MOVL $-1, nbJob_pos(R8)
	JMP  next

load8:
	VMOVUPS (SI)(AX*4), Y8
	VMOVUPS (DI)(AX*4), Y9
	NB_TABLES(0, Y0, Y4)
	NB_TABLES(1, Y1, Y5)
	NB_TABLES(2, Y2, Y6)
	NB_TABLES(3, Y3, Y7)
	MOVLQSX nbJob_chunks(R8), CX
	CMPQ    CX, $1
	JNE     tablesDone

	// One chunk (padded with copies of the last candidate, so the first
	// lane with the minimum is the first candidate with it).
	MOVLQSX     nbJob_laneOff(R8), BX
	VMOVDQU     (R10)(BX*4), Y8
	VXORPS      Y9, Y9, Y9
	VPERMPS     Y0, Y8, Y10
	VPERMPS     Y4, Y8, Y11
	VFMADD231PS Y10, Y11, Y9
	NB_COORD(3, Y0, Y4)
	NB_COORD(6, Y1, Y5)
	NB_COORD(9, Y1, Y5)
	NB_COORD(12, Y2, Y6)
	NB_COORD(15, Y2, Y6)
	NB_COORD(18, Y3, Y7)
	NB_COORD(21, Y3, Y7)
	JMP         oneReduce

tablesDone:
	VBROADCASTSS nbMaxFloat<>(SB), Y13
	VPCMPEQD     Y14, Y14, Y14
	VMOVDQU      nbFirstPos<>(SB), Y15
	MOVLQSX      nbJob_laneOff(R8), BX
	LEAQ         (R10)(BX*4), R13
	MOVLQSX      nbJob_chunks(R8), CX
	TESTQ        CX, CX
	JLE          reduce
	CMPQ         DX, $8
	JEQ          loop8

loop4:
	VMOVDQU     (R13), Y8
	VXORPS      Y9, Y9, Y9
	VPERMPS     Y0, Y8, Y10
	VPERMPS     Y4, Y8, Y11
	VFMADD231PS Y10, Y11, Y9
	NB_COORD(3, Y1, Y5)
	NB_COORD(6, Y2, Y6)
	NB_COORD(9, Y3, Y7)
	NB_KEEP
	DECQ        CX
	JNZ         loop4
	JMP         reduce

loop8:
	VMOVDQU     (R13), Y8
	VXORPS      Y9, Y9, Y9
	VPERMPS     Y0, Y8, Y10
	VPERMPS     Y4, Y8, Y11
	VFMADD231PS Y10, Y11, Y9
	NB_COORD(3, Y0, Y4)
	NB_COORD(6, Y1, Y5)
	NB_COORD(9, Y1, Y5)
	NB_COORD(12, Y2, Y6)
	NB_COORD(15, Y2, Y6)
	NB_COORD(18, Y3, Y7)
	NB_COORD(21, Y3, Y7)
	NB_KEEP
	DECQ        CX
	JNZ         loop8

reduce:
	NB_REDUCE
	MOVL AX, nbJob_pos(R8)

next:
	ADDQ $nbJob__size, R8
	DECQ R11
	JNZ  job

end:
	VZEROUPPER
	RET
