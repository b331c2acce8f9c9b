package tables

// Non-linear grids of the IQK types (ik_llama.cpp ggml-common.h). Each table
// holds the plain grid followed by its "shifted" variant, which a block
// selects with an extra bit; dequantizers and quantizers share these.

// IQ2NLValues is the 2-bit grid of iq2_k / iq2_ks: 4 plain values, then 4 shifted.
var IQ2NLValues = [8]int8{
	-31, -13, 1, 17,
	-26, -8, 6, 22,
}

// IQ2KLValues is the iq2_kl pair grid: each entry packs two int8 values
// (low byte first) for two consecutive weights.
var IQ2KLValues = [32]uint16{
	0xe9c1, 0x0dc1, 0xc1d8, 0xf6d8, 0x0dd8, 0x2fd8, 0xd8e9, 0xe9e9, 0x01e9, 0x0de9, 0x1ce9, 0xc1f6, 0x01f6, 0x0df6, 0x2ff6, 0xe901,
	0xf601, 0x0101, 0x0d01, 0x1c01, 0xd80d, 0xe90d, 0xf60d, 0x010d, 0x0d0d, 0xc11c, 0xe91c, 0x011c, 0x1c1c, 0x2f1c, 0xe92f, 0x0d2f,
}

// IQ3NLValues is the 3-bit grid of iq3_k / iq3_ks: 8 plain values, then 8 shifted.
var IQ3NLValues = [16]int8{
	-63, -40, -23, -10, 1, 13, 28, 47,
	-59, -36, -19, -6, 5, 17, 32, 51,
}

// IQ4KValues is the 4-bit grid of iq4_k / iq4_ks / iq4_kss: 16 plain, then 16 shifted.
var IQ4KValues = [32]int8{
	-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
	-123, -100, -79, -61, -45, -31, -18, -6, 5, 17, 29, 42, 57, 73, 93, 117,
}

// IQ5NLValues is the 5-bit grid of iq5_k / iq5_ks: 32 plain, then 32 shifted.
var IQ5NLValues = [64]int8{
	-126, -114, -103, -92, -83, -74, -65, -57, -50, -43, -36, -30, -24, -18, -12, -6, -1, 5, 11, 17, 23, 29, 36, 43, 51, 59, 68, 77, 87, 97, 109, 121,
	-124, -112, -101, -90, -81, -72, -63, -55, -48, -41, -34, -28, -22, -16, -10, -4, 1, 7, 13, 19, 25, 31, 38, 45, 53, 61, 70, 79, 89, 99, 111, 123,
}

// IQ6NLValues is the 6-bit grid of iq6_k: 64 plain, then 64 shifted. The
// iq6_k dequantizer evaluates the cubic IQ6KValue instead; these are its
// rounded values the quantizer searches.
var IQ6NLValues = [128]int8{
	-127, -121, -115, -109, -104, -98, -93, -88, -84, -79, -74, -70, -66, -62, -58, -54,
	-51, -47, -44, -40, -37, -34, -31, -28, -25, -22, -19, -16, -13, -11, -8, -5,
	-2, 0, 3, 6, 9, 12, 14, 17, 20, 23, 27, 30, 33, 36, 40, 44,
	47, 51, 55, 59, 63, 68, 72, 77, 82, 87, 92, 98, 103, 109, 115, 121,
	-126, -120, -114, -108, -103, -97, -92, -87, -83, -78, -73, -69, -65, -61, -57, -53,
	-50, -46, -43, -39, -36, -33, -30, -27, -24, -21, -18, -15, -12, -10, -7, -4,
	-1, 1, 4, 7, 10, 13, 15, 18, 21, 24, 28, 31, 34, 37, 41, 45,
	48, 52, 56, 60, 64, 69, 73, 78, 83, 88, 93, 99, 104, 110, 116, 122,
}
