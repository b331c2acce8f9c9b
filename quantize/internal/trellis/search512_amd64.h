// What the AVX-512 searches (search512_amd64.s, prune512_amd64.s,
// filter512_amd64.s) share: their constants (each file that includes this
// has its own copy), the range check of their inputs, the score of a pair
// of runs (from fp16 or int8 codewords), the merge of a pair's two runs, the
// reference's scan of a cluster, the horizontal minimum, the start of the
// two-scale searches, and the pruned layout's scoring step and winner; and,
// through search_amd64.h, what all the searches share.

#include "search_amd64.h"

DATA s4PosInf<>+0(SB)/4, $0x7f800000
GLOBL s4PosInf<>(SB), RODATA|NOPTR, $4
DATA s4Abs<>+0(SB)/4, $0x7fffffff
GLOBL s4Abs<>(SB), RODATA|NOPTR, $4
// Scaled inputs beyond 2^60 in magnitude leave the AVX-512 searches: below
// that, no difference, square or weighted square is NaN.
DATA s4Big<>+0(SB)/4, $0x5d800000
GLOBL s4Big<>(SB), RODATA|NOPTR, $4
DATA s4Two<>+0(SB)/4, $2
GLOBL s4Two<>(SB), RODATA|NOPTR, $4
// The run of each lane in the first pair: 0 below, 1 above.
DATA s4Runs<>+0(SB)/8, $0
DATA s4Runs<>+8(SB)/8, $0
DATA s4Runs<>+16(SB)/8, $0
DATA s4Runs<>+24(SB)/8, $0
DATA s4Runs<>+32(SB)/8, $0x0000000100000001
DATA s4Runs<>+40(SB)/8, $0x0000000100000001
DATA s4Runs<>+48(SB)/8, $0x0000000100000001
DATA s4Runs<>+56(SB)/8, $0x0000000100000001
GLOBL s4Runs<>(SB), RODATA|NOPTR, $64

// RANGE_X(id, k) sets mask k to the lanes of the 32 inputs at AX whose
// product with id (a float32 argument) is at most 2^60 in magnitude (false
// for NaN). Z0..Z3 and K2 scratch.
#define RANGE_X(id, k) \
	VBROADCASTSS id, Z0 \
	VMULPS 0(AX), Z0, Z1 \
	VMULPS 64(AX), Z0, Z2 \
	VBROADCASTSS s4Abs<>(SB), Z3 \
	VANDPS Z3, Z1, Z1 \
	VANDPS Z3, Z2, Z2 \
	VBROADCASTSS s4Big<>(SB), Z3 \
	VCMPPS $0x12, Z3, Z1, k \
	VCMPPS $0x12, Z3, Z2, K2 \
	KANDW K2, k, k

// RANGE_W(fail) keeps in K1 the lanes whose 32 weights at R10 are in
// [0, +Inf) (false for NaN) and jumps to fail unless all are left. Z1..Z3,
// K2 and BX scratch.
#define RANGE_W(fail) \
	VMOVUPS 0(R10), Z1 \
	VMOVUPS 64(R10), Z2 \
	VXORPS Z3, Z3, Z3 \
	VCMPPS $0x1D, Z3, Z1, K2 \
	KANDW K2, K1, K1 \
	VCMPPS $0x1D, Z3, Z2, K2 \
	KANDW K2, K1, K1 \
	VBROADCASTSS s4PosInf<>(SB), Z3 \
	VCMPPS $0x11, Z3, Z1, K2 \
	KANDW K2, K1, K1 \
	VCMPPS $0x11, Z3, Z2, K2 \
	KANDW K2, K1, K1 \
	KMOVW K1, BX \
	CMPL BX, $0xffff \
	JNE fail

// SCORE16_FROM(load) is the score of the 16 candidates of the pair of runs
// at SI in Z0, in searchBlock8AVX2's order of additions, load(k, z) putting
// coordinate k of the 16 candidates in z as float32 (vx broadcast in
// Z8..Z15, the weights in Z16..Z23, Z1..Z3 scratch). SCORE16 reads the
// pairLayout (coordinate k as fp16 at 32*k).
#define SCORE16_FROM(load) \
	load(0, Z0) \
	VSUBPS Z8, Z0, Z0 \
	VMULPS Z0, Z0, Z0 \
	VMULPS Z16, Z0, Z0 \
	load(4, Z1) \
	VSUBPS Z12, Z1, Z1 \
	VMULPS Z1, Z1, Z1 \
	VMULPS Z20, Z1, Z1 \
	VADDPS Z1, Z0, Z0 \
	load(2, Z1) \
	VSUBPS Z10, Z1, Z1 \
	VMULPS Z1, Z1, Z1 \
	VMULPS Z18, Z1, Z1 \
	load(6, Z2) \
	VSUBPS Z14, Z2, Z2 \
	VMULPS Z2, Z2, Z2 \
	VMULPS Z22, Z2, Z2 \
	VADDPS Z2, Z1, Z1 \
	VADDPS Z1, Z0, Z0 \
	load(1, Z1) \
	VSUBPS Z9, Z1, Z1 \
	VMULPS Z1, Z1, Z1 \
	VMULPS Z17, Z1, Z1 \
	load(5, Z2) \
	VSUBPS Z13, Z2, Z2 \
	VMULPS Z2, Z2, Z2 \
	VMULPS Z21, Z2, Z2 \
	VADDPS Z2, Z1, Z1 \
	load(3, Z2) \
	VSUBPS Z11, Z2, Z2 \
	VMULPS Z2, Z2, Z2 \
	VMULPS Z19, Z2, Z2 \
	load(7, Z3) \
	VSUBPS Z15, Z3, Z3 \
	VMULPS Z3, Z3, Z3 \
	VMULPS Z23, Z3, Z3 \
	VADDPS Z3, Z2, Z2 \
	VADDPS Z2, Z1, Z1 \
	VADDPS Z1, Z0, Z0
#define FP16_COORD(k, z) VCVTPH2PS (32*k)(SI), z
#define SCORE16 SCORE16_FROM(FP16_COORD)

// MERGE16(zr, yr) merges the odd runs' lanes (above) into the even runs'
// (below): the best scores Z4, their indices Z5 and their runs zr (yr its
// low half); the odd lane wins with a smaller score, or an equal one
// reached in an earlier run. Y20..Y22, K1..K3 scratch.
#define MERGE16(zr, yr) \
	VEXTRACTF32X8 $1, Z4, Y20 \
	VEXTRACTI32X8 $1, Z5, Y21 \
	VEXTRACTI32X8 $1, zr, Y22 \
	VCMPPS $0x11, Y4, Y20, K1 \
	VCMPPS $0, Y4, Y20, K2 \
	VPCMPD $1, yr, Y22, K3 \
	KANDB K3, K2, K2 \
	KORB K2, K1, K1 \
	VMOVAPS Y20, K1, Y4 \
	VMOVDQA32 Y21, K1, Y5



// SCAN_PAIRS(label, fail) is the reference's scan of the CX > 0 pairs of
// runs at SI (pairLayout, vx and weights as SCORE16 takes them): each lane
// keeps its first strict minimum, its codeword and its run, the two halves
// are merged and the lanes reduced; the winner's codeword in BX, or a jump
// to fail where no score is below +Inf. Z0..Z5, Z7, Z20..Z22, Z24..Z26 and
// K1..K3 scratch.
#define SCAN_PAIRS(label, fail) \
	VBROADCASTSS s4PosInf<>(SB), Z4 \
	VPTERNLOGD $0xff, Z5, Z5, Z5 \
	VMOVDQU32 s4Runs<>(SB), Z24 \
	VPXORD Z25, Z25, Z25 \
	VPBROADCASTD s4Two<>(SB), Z26 \
	PCALIGN $64 \
label: \
	SCORE16 \
	VCMPPS $0x11, Z4, Z0, K1 \
	VMOVDQU32 256(SI), K1, Z5 \
	VMOVDQA32 Z24, K1, Z25 \
	VMINPS Z0, Z4, Z4 \
	VPADDD Z26, Z24, Z24 \
	ADDQ $320, SI \
	DECL CX \
	JNE label \
	MERGE16(Z25, Y25) \
	VBROADCASTSS s4PosInf<>(SB), Y7 \
	REDUCE(fail)

// BCAST8(off, base, z0, ..., z7) broadcasts the eight float32 at
// off(base)(R12*1) (a group's values) into z0..z7.
#define BCAST8(off, base, z0, z1, z2, z3, z4, z5, z6, z7) \
	VBROADCASTSS (off+0)(base)(R12*1), z0 \
	VBROADCASTSS (off+4)(base)(R12*1), z1 \
	VBROADCASTSS (off+8)(base)(R12*1), z2 \
	VBROADCASTSS (off+12)(base)(R12*1), z3 \
	VBROADCASTSS (off+16)(base)(R12*1), z4 \
	VBROADCASTSS (off+20)(base)(R12*1), z5 \
	VBROADCASTSS (off+24)(base)(R12*1), z6 \
	VBROADCASTSS (off+28)(base)(R12*1), z7

// GROUP_VXW(vx) broadcasts group R12/32's scaled inputs (at vx on the
// stack) into Z8..Z15 and its weights (at R10) into Z16..Z23, as SCORE16
// takes them.
#define GROUP_VXW(vx) \
	BCAST8(vx, SP, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15) \
	BCAST8(0, R10, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

// HMIN16 leaves the smallest of the 16 lanes of src in every lane of Z0
// (Z1 is scratch). No lane is NaN here.
#define HMIN16(src) \
	VSHUFF32X4 $0x4E, src, src, Z0 \
	VMINPS src, Z0, Z0 \
	VSHUFF32X4 $0xB1, Z0, Z0, Z1 \
	VMINPS Z1, Z0, Z0 \
	VPERMILPS $0x4E, Z0, Z1 \
	VMINPS Z1, Z0, Z0 \
	VPERMILPS $0xB1, Z0, Z1 \
	VMINPS Z1, Z0, Z0

// CLUSTER8X2(g, other) stores group g's scaled inputs at both scales (Y0 and
// Y7 the inverse scales broadcast, inputs at AX, mid in Y6) at 32*g and
// 128+32*g on the stack and its cluster at 256+4*g, or jumps to other where
// its clusters at the two scales differ. Y1, Y2, BX and CX scratch.
#define CLUSTER8X2(g, other) \
	VMULPS (32*g)(AX), Y0, Y1 \
	VMOVUPS Y1, (32*g)(SP) \
	VCMPPS $0x1E, Y6, Y1, Y2 \
	VMOVMSKPS Y2, BX \
	MOVL BX, (256+4*g)(SP) \
	VMULPS (32*g)(AX), Y7, Y1 \
	VMOVUPS Y1, (128+32*g)(SP) \
	VCMPPS $0x1E, Y6, Y1, Y2 \
	VMOVMSKPS Y2, CX \
	CMPL BX, CX \
	JNE other

// PICK_POS(tie, pos) leaves in BX the position (16*pair+lane) of the
// candidate with the smallest of the lanes' best scores Z4 (their pairs in
// Z5, and in K6 the lanes where another candidate reached the same score)
// if one lane holds it and no other candidate of that lane reached it, and
// otherwise jumps to tie. pos is 64 bytes of scratch on the stack. Z0, Z1,
// AX and BX scratch.
#define PICK_POS(tie, pos) \
	HMIN16(Z4) \
	VCMPPS $0, Z0, Z4, K1 \
	KMOVW K1, AX \
	KMOVW K6, BX \
	TESTL AX, BX \
	JNE tie \
	POPCNTL AX, BX \
	CMPL BX, $1 \
	JNE tie \
	BSFL AX, AX \
	VMOVDQU32 Z5, pos(SP) \
	MOVL pos(SP)(AX*4), BX \
	SHLL $4, BX \
	ADDL AX, BX

// SCORE16I8 is SCORE16 for the pair at SI in the pruned layout (int8,
// coordinate k at 16*k, exact in float32): the same scores.
#define I8_COORD(k, z) \
	VPMOVSXBD (16*k)(SI), z \
	VCVTDQ2PS z, z
#define SCORE16I8 SCORE16_FROM(I8_COORD)

// SCORE_PAIR(pair) scores the pair at SI in the pruned layout (SCORE16I8)
// and updates, per lane, the best score Z4, the pair Z5 that reached it
// (the register pair) and whether another candidate reached the same
// score (K6); a smaller score clears the flag (TRACK_PAIR). K1, K2 scratch.
#define TRACK_PAIR(pair) \
	VCMPPS $0x11, Z4, Z0, K1 \
	VCMPPS $0, Z4, Z0, K2 \
	VPBROADCASTD pair, K1, Z5 \
	KANDNW K6, K1, K6 \
	KORW K2, K6, K6 \
	VMINPS Z0, Z4, Z4
#define SCORE_PAIR(pair) \
	SCORE16I8 \
	TRACK_PAIR(pair)

// SCORE4_16I8 is the score of the 16 candidates of 4 values at SI in a
// prune4Layout (int8, coordinate k at 16*k) in Z0, in searchBlock4AVX2's
// order of additions, (0 + 2) + (1 + 3): vx broadcast in Z8..Z11, the
// weights in Z12..Z15, Z1 and Z2 scratch.
#define SCORE4_16I8 \
	I8_COORD(0, Z0) \
	VSUBPS Z8, Z0, Z0 \
	VMULPS Z0, Z0, Z0 \
	VMULPS Z12, Z0, Z0 \
	I8_COORD(2, Z1) \
	VSUBPS Z10, Z1, Z1 \
	VMULPS Z1, Z1, Z1 \
	VMULPS Z14, Z1, Z1 \
	VADDPS Z1, Z0, Z0 \
	I8_COORD(1, Z1) \
	VSUBPS Z9, Z1, Z1 \
	VMULPS Z1, Z1, Z1 \
	VMULPS Z13, Z1, Z1 \
	I8_COORD(3, Z2) \
	VSUBPS Z11, Z2, Z2 \
	VMULPS Z2, Z2, Z2 \
	VMULPS Z15, Z2, Z2 \
	VADDPS Z2, Z1, Z1 \
	VADDPS Z1, Z0, Z0

// TWO_SCALES(id1, id2, mid, fail, other) begins the two-scale searches: the
// range check at both inverse scales (|id*x| <= 2^60 and 0 <= w < +Inf,
// inputs at AX, weights at R10; else a jump to fail), then each group's
// scaled inputs and cluster (CLUSTER8X2; a jump to other where its clusters
// differ). id1, id2 and mid are the arguments' operands.
#define TWO_SCALES(id1, id2, mid, fail, other) \
	RANGE_X(id1, K1) \
	RANGE_X(id2, K4) \
	KANDW K4, K1, K1 \
	RANGE_W(fail) \
	MOVQ mid, DX \
	VMOVUPS 0(DX), Y6 \
	VBROADCASTSS id1, Y0 \
	VBROADCASTSS id2, Y7 \
	CLUSTER8X2(0, other) \
	CLUSTER8X2(1, other) \
	CLUSTER8X2(2, other) \
	CLUSTER8X2(3, other)

// SUMS_BOTH(values, x, sums1, idx1, sums2, idx2) ends the two-scale
// searches: SUMS8 for the codewords at each scale (the arguments' operands:
// the codebook's values, the inputs, each scale's sums and indices). The
// weights are at R10.
#define SUMS_BOTH(values, x, sums1, idx1, sums2, idx2) \
	MOVQ values, R13 \
	MOVQ x, DX \
	MOVQ sums1, CX \
	MOVQ idx1, R11 \
	SUMS8 \
	MOVQ sums2, CX \
	MOVQ idx2, R11 \
	SUMS8
