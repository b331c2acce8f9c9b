// The lookup of nearestTable.best shared by the assembly files of this
// package (include after go_asm.h, which gives the nearestTable offsets).

// NEAREST_CLAMP clamps the table slot in AX to [-1, LIMIT]; MINUS1 is a
// register or memory operand holding -1 (CMOV takes no immediate).
#define NEAREST_CLAMP(MINUS1, LIMIT) \
	CMPQ    AX, $-1; \
	CMOVQLT MINUS1, AX; \
	CMPQ    AX, LIMIT; \
	CMOVQGT LIMIT, AX

// NEAREST_PICK leaves in BX the index of the grid point nearest the float32
// in XIN from the clamped slot in AX: the slot's first candidate, or the
// next one when XIN is at least as close to its upper neighbour (compare the
// two distances in T0 and T1). Clobbers AX, DX, T0, T1.
#define NEAREST_PICK(XIN, T0, T1) \
	INCQ     AX; \
	MOVBQZX  nearestTable_idx(R11)(AX*1), BX; \
	VSUBSS   nearestTable_lo(R11)(AX*4), XIN, T0; \
	VMOVSS   nearestTable_hi(R11)(AX*4), T1; \
	VSUBSS   XIN, T1, T1; \
	XORL     DX, DX; \
	VUCOMISS T1, T0; \
	SETCC    DX; \
	ADDQ     DX, BX

// NEAREST_INDEX is nearestTable.best for the table at R11: truncate XIN,
// subtract BASE, clamp (see NEAREST_CLAMP) and pick (see NEAREST_PICK); the
// index goes to BX. Clobbers AX, DX, T0, T1.
#define NEAREST_INDEX(XIN, BASE, MINUS1, LIMIT, T0, T1) \
	VCVTTSS2SI XIN, AX; \
	MOVLQSX    AX, AX; \
	SUBQ       BASE, AX; \
	NEAREST_CLAMP(MINUS1, LIMIT); \
	NEAREST_PICK(XIN, T0, T1)
