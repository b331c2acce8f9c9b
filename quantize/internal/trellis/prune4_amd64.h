// The frame and the shared steps of the pruned searches of groups of 4
// (searchPruned4AVX512 in prune512_amd64.s, searchPruned4AVX2 in
// prune4_amd64.s; see prune4.go). Include after search_amd64.h.
//
// Frame: 0 vx (32 float32), 128 the bins (32 int32), P4_POS the lanes'
// positions (16 int32), P4_IDADDR the winners' id addresses (8 pointers),
// P4_Q the winners' values (8 x 4 int32), P4_S the scores of each group's
// pair of U (8 x 16 float32, lanes of copies included);
// per group g (R14 = 48*g) at S_PAIRS+R14 its cluster's pairs, S_IDS their
// ids, S_NP its number of pairs, S_PTR its boxes and then the pair of the
// smallest bound, S_N the length of its list, S_ODD the pair whose lanes
// 8-15 are copies (-1 if none); at P4_BOUNDS+512*g its bounds
// (prune4MaxPairs float32) and at P4_LISTS+576*g its list
// (prune4MaxPairs+16 int32).
#define P4_POS 256
#define P4_IDADDR 320
#define S_PAIRS 384
#define S_IDS 392
#define S_NP 400
#define S_PTR 408
#define S_N 416
#define S_ODD 424
#define P4_BOUNDS 768
#define P4_LISTS 4864
#define P4_Q 9472
#define P4_S 9600
// The frame is 10112 bytes (written out in the TEXT lines, for go vet).

// P4_BOUNDS_BASE sets DX to group DI's bounds, P4_LIST_BASE AX to its list.
#define P4_BOUNDS_BASE \
	MOVQ DI, DX \
	SHLQ $9, DX \
	LEAQ P4_BOUNDS(SP)(DX*1), DX
#define P4_LIST_BASE \
	IMUL3Q $576, DI, AX \
	LEAQ P4_LISTS(SP)(AX*1), AX

// P4_SETUP(fail) is step 0 for each group: its cluster (BIN_CLUSTER), the
// state of its cluster from the spans at R9 (jumping to fail for a cluster
// with no pairs), and a fetch of its first boxes.
#define P4_SETUP(fail) \
	XORQ DI, DI \
	XORQ R12, R12 \
setup4: \
	IMUL3Q $48, DI, R14 \
	BIN_CLUSTER \
	SHLQ $4, AX \
	MOVL 0(R9)(AX*1), R8 \
	MOVL 4(R9)(AX*1), CX \
	MOVL 8(R9)(AX*1), SI \
	TESTL CX, CX \
	JEQ fail \
	MOVQ CX, S_NP(SP)(R14*1) \
	MOVQ $-1, BX \
	LEAQ -1(CX), DX \
	CMPL 12(R9)(AX*1), $0 \
	CMOVQNE DX, BX \
	MOVQ BX, S_ODD(SP)(R14*1) \
	MOVQ R8, BX \
	SHLQ $6, BX \
	ADDQ ids+16(FP), BX \
	MOVQ BX, S_IDS(SP)(R14*1) \
	SHLQ $6, R8 \
	ADDQ pairs+0(FP), R8 \
	MOVQ R8, S_PAIRS(SP)(R14*1) \
	SHLQ $8, SI \
	ADDQ boxes+8(FP), SI \
	MOVQ SI, S_PTR(SP)(R14*1) \
	PREFETCHT0 0(SI) \
	PREFETCHT0 64(SI) \
	PREFETCHT0 128(SI) \
	PREFETCHT0 192(SI) \
	ADDQ $16, R12 \
	INCQ DI \
	CMPQ DI, $8 \
	JNE setup4

// P4_NEXT(loop) goes on to the next group (label loop), if any.
#define P4_NEXT(loop) \
	ADDQ $16, R12 \
	INCQ DI \
	CMPQ DI, $8 \
	JNE loop

// P4_ARGMIN(loop) keeps and fetches the pair of group DI's cluster with the
// smallest bound: the one in lane BX of the lanes' argmin pairs at P4_POS,
// where a copy of the last pair stands for the last pair. It sets its bound
// to +Inf so that step 2 does not list it (step 2 scores it, and step 3
// starts from its scores), and goes on to the next group. AX, DX scratch.
#define P4_ARGMIN(loop) \
	MOVL P4_POS(SP)(BX*4), SI \
	MOVQ S_NP(SP)(R14*1), AX \
	DECQ AX \
	CMPQ SI, AX \
	CMOVQGT AX, SI \
	P4_BOUNDS_BASE \
	MOVL $0x7f800000, (DX)(SI*4) \
	SHLQ $6, SI \
	ADDQ S_PAIRS(SP)(R14*1), SI \
	MOVQ SI, S_PTR(SP)(R14*1) \
	PREFETCHT0 0(SI) \
	P4_NEXT(loop)

// P4_WINNER(loop) keeps the values of the candidate at position BX of
// group DI's cluster (bytes 16k+lane of its pair, which was just scored and
// so is in L1) as int32 at P4_Q+R12, and the address of its id (fetched
// with its pair in step 2), and goes on to the next group (label loop).
// AX, CX scratch.
#define P4_WINNER(loop) \
	MOVQ BX, AX \
	SHRQ $4, AX \
	SHLQ $6, AX \
	ADDQ S_PAIRS(SP)(R14*1), AX \
	MOVQ BX, CX \
	ANDQ $15, CX \
	ADDQ CX, AX \
	MOVBLSX 0(AX), CX \
	MOVL CX, (P4_Q+0)(SP)(R12*1) \
	MOVBLSX 16(AX), CX \
	MOVL CX, (P4_Q+4)(SP)(R12*1) \
	MOVBLSX 32(AX), CX \
	MOVL CX, (P4_Q+8)(SP)(R12*1) \
	MOVBLSX 48(AX), CX \
	MOVL CX, (P4_Q+12)(SP)(R12*1) \
	MOVQ S_IDS(SP)(R14*1), AX \
	LEAQ (AX)(BX*4), BX \
	MOVQ BX, P4_IDADDR(SP)(DI*8) \
	P4_NEXT(loop)

// P4_END(fail) stores the sums where sums is not nil (SUMSQ), reads the
// winners' ids into idx (R11), and returns 0, or 1 from label fail.
#define P4_END(fail) \
	MOVQ sums+64(FP), CX \
	TESTQ CX, CX \
	JEQ ids4_0 \
	MOVQ x+40(FP), DX \
	SUMSQ(P4_Q) \
ids4_0: \
	XORQ DI, DI \
ids4: \
	MOVQ P4_IDADDR(SP)(DI*8), BX \
	MOVL (BX), BX \
	MOVL BX, 0(R11)(DI*4) \
	INCQ DI \
	CMPQ DI, $8 \
	JNE ids4 \
ok4: \
	MOVQ $0, ret+72(FP) \
	VZEROUPPER \
	RET \
fail: \
	MOVQ $1, ret+72(FP) \
	VZEROUPPER \
	RET
