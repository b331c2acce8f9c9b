// What the searches share, AVX2 instructions only (search_amd64.s,
// prune_amd64.s, and through search512_amd64.h the AVX-512 searches): the
// bin bounds of groups of 4, the bins and clusters of a block's groups, the
// lane reduction and the scale sums. Each file that includes this has its
// own copy of the constants.

// The bounds of the five bins of a coordinate of a group of 4.
DATA binBounds<>+0(SB)/4, $0xc2400000  // -48
DATA binBounds<>+4(SB)/4, $0xc1800000  // -16
DATA binBounds<>+8(SB)/4, $0x41800000  // 16
DATA binBounds<>+12(SB)/4, $0x42400000 // 48
GLOBL binBounds<>(SB), RODATA|NOPTR, $16

// BINS4(off) stores the scaled inputs (Y0 = id broadcast, inputs at AX+off,
// eight at a time) at off on the stack and each one's bin (the number of
// binBounds it is not below, which Y4..Y7 hold broadcast) at 128+off. Y1..Y3
// scratch.
#define BINS4(off) \
	VMULPS off(AX), Y0, Y1 \
	VMOVUPS Y1, off(SP) \
	VPXOR Y3, Y3, Y3 \
	VCMPPS $0x15, Y4, Y1, Y2 \
	VPSUBD Y2, Y3, Y3 \
	VCMPPS $0x15, Y5, Y1, Y2 \
	VPSUBD Y2, Y3, Y3 \
	VCMPPS $0x15, Y6, Y1, Y2 \
	VPSUBD Y2, Y3, Y3 \
	VCMPPS $0x15, Y7, Y1, Y2 \
	VPSUBD Y2, Y3, Y3 \
	VMOVDQU Y3, 128+off(SP)

// BINS4_BLOCK loads binBounds into Y4..Y7 and runs BINS4 over the 32
// inputs of a block.
#define BINS4_BLOCK \
	VBROADCASTSS binBounds<>+0(SB), Y4 \
	VBROADCASTSS binBounds<>+4(SB), Y5 \
	VBROADCASTSS binBounds<>+8(SB), Y6 \
	VBROADCASTSS binBounds<>+12(SB), Y7 \
	BINS4(0) \
	BINS4(32) \
	BINS4(64) \
	BINS4(96)

// BIN_CLUSTER leaves in AX the cluster of group R12/16 of a block of groups
// of 4, bin5 of each coordinate (BINS4_BLOCK's bins, at 128 on the stack)
// in base 5. BX scratch.
#define BIN_CLUSTER \
	MOVL 128(SP)(R12*1), AX \
	MOVL 132(SP)(R12*1), BX \
	LEAL (BX)(BX*4), BX \
	ADDL BX, AX \
	MOVL 136(SP)(R12*1), BX \
	IMUL3L $25, BX, BX \
	ADDL BX, AX \
	MOVL 140(SP)(R12*1), BX \
	IMUL3L $125, BX, BX \
	ADDL BX, AX

// CLUSTER8(g, vx, c) stores group g's scaled inputs (Y0 = id broadcast,
// inputs at AX) at vx+32*g on the stack and its cluster (the mask of
// vx > mid, mid in Y6) at c+4*g. Y1, Y2 and BX scratch.
#define CLUSTER8(g, vx, c) \
	VMULPS (32*g)(AX), Y0, Y1 \
	VMOVUPS Y1, (vx+32*g)(SP) \
	VCMPPS $0x1E, Y6, Y1, Y2 \
	VMOVMSKPS Y2, BX \
	MOVL BX, (c+4*g)(SP)

// REDUCE picks the winner of the eight lanes (best in Y4, indices in Y5,
// +Inf in Y7) as reduceLanes does: lanes whose best is NaN count as +Inf,
// then the lowest lane whose best equals the smallest, if that is below
// +Inf. It leaves the winner's index in BX, or jumps to fail.
#define REDUCE(fail) \
	VCMPPS $3, Y4, Y4, Y0 \
	VBLENDVPS Y0, Y7, Y4, Y4 \
	VPERM2F128 $1, Y4, Y4, Y0 \
	VMINPS Y0, Y4, Y0 \
	VPERMILPS $0x4E, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VPERMILPS $0xB1, Y0, Y1 \
	VMINPS Y1, Y0, Y0 \
	VCMPPS $0, Y0, Y4, Y1 \
	VCMPPS $0x11, Y7, Y4, Y2 \
	VANDPS Y2, Y1, Y1 \
	VMOVMSKPS Y1, AX \
	TESTL AX, AX \
	JEQ fail \
	BSFL AX, AX \
	VMOVD AX, X2 \
	VPERMD Y5, Y2, Y2 \
	VMOVD X2, BX

// SUMS4 and SUMS8 store at CX scaleSumsAVX2's lanes for a block's chosen
// codewords, whose indices are at R11 (values at R13, inputs at DX,
// weights at R10): eight groups of 4, or four groups of 8. AX, BX, Y0..Y3
// scratch.
#define SUMS4_PAIR(j) \
	MOVL (8*j)(R11), AX \
	SHLQ $4, AX \
	MOVL (8*j+4)(R11), BX \
	SHLQ $4, BX \
	VMOVUPS (R13)(AX*1), X2 \
	VINSERTF128 $1, (R13)(BX*1), Y2, Y2 \
	VMULPS (32*j)(R10), Y2, Y3 \
	VFMADD231PS (32*j)(DX), Y3, Y0 \
	VFMADD231PS Y2, Y3, Y1
#define SUMS4 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	SUMS4_PAIR(0) \
	SUMS4_PAIR(1) \
	SUMS4_PAIR(2) \
	SUMS4_PAIR(3) \
	VMOVUPS Y0, 0(CX) \
	VMOVUPS Y1, 32(CX)
#define SUMS8_GROUP(j) \
	MOVL (4*j)(R11), AX \
	SHLQ $5, AX \
	VMOVUPS (R13)(AX*1), Y2 \
	VMULPS (32*j)(R10), Y2, Y3 \
	VFMADD231PS (32*j)(DX), Y3, Y0 \
	VFMADD231PS Y2, Y3, Y1
#define SUMS8 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	SUMS8_GROUP(0) \
	SUMS8_GROUP(1) \
	SUMS8_GROUP(2) \
	SUMS8_GROUP(3) \
	VMOVUPS Y0, 0(CX) \
	VMOVUPS Y1, 32(CX)

// SUMSQ(q) is SUMS4 or SUMS8 with the chosen codewords' values as int32 at
// q(SP), 32 values in the block's order: the pruned searches copy each
// winner's values from its run or pair, which they have just scored, where
// reading them from the codebook at the end would miss the caches.
#define SUMSQ_PART(q, j) \
	VCVTDQ2PS (q+32*j)(SP), Y2 \
	VMULPS (32*j)(R10), Y2, Y3 \
	VFMADD231PS (32*j)(DX), Y3, Y0 \
	VFMADD231PS Y2, Y3, Y1
#define SUMSQ(q) \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	SUMSQ_PART(q, 0) \
	SUMSQ_PART(q, 1) \
	SUMSQ_PART(q, 2) \
	SUMSQ_PART(q, 3) \
	VMOVUPS Y0, 0(CX) \
	VMOVUPS Y1, 32(CX)

// NEXT_GROUP8(loop) ends a block search's group of 8: it stores the
// group's codeword (BX) at R11, fetches its values (at R13) for the sums
// while the next groups are searched, and goes on to the next of the four
// groups (DI, and R12 = 32*DI) at loop, or falls through after the last.
#define NEXT_GROUP8(loop) \
	MOVL BX, 0(R11)(DI*4) \
	SHLQ $5, BX \
	PREFETCHT0 (R13)(BX*1) \
	ADDQ $32, R12 \
	INCQ DI \
	CMPQ DI, $4 \
	JNE loop

// LEFT_PACK(mask, pos, step, n) appends to the list at AX, without
// branches, the positions (the dword lanes of pos) of the lanes set in mask
// (a compare's result: pruneLeftPack moves them to the front), and adds
// step to pos for the next vector of eight. BX holds pruneLeftPack's
// address; SI, n and Y2 are scratch.
#define LEFT_PACK(mask, pos, step, n) \
	VMOVMSKPS mask, SI \
	POPCNTL SI, n \
	SHLQ $5, SI \
	VMOVDQU (BX)(SI*1), Y2 \
	VPERMD pos, Y2, Y2 \
	VMOVDQU Y2, (AX) \
	LEAQ (AX)(n*4), AX \
	VPADDD step, pos, pos
