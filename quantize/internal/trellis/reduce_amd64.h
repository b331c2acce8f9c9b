// The lane reduction of the searches that keep eight lanes of best scores
// (search_amd64.s, prune_amd64.s, and after their merge the AVX-512 ones).

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
