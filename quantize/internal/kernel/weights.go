package kernel

// ImatrixWeights stores qw[i]·sqrt(x[i]² + sigma2) in w[i] for each i of x:
// the weights the K-quants and the IQK types give their values with an
// importance vector. The sum is fused (GCC contracts the reference's
// expression), the square root and the product are rounded. asm selects the
// AVX2 form, eight weights per step, where the CPU has it and len(x) is a
// multiple of 8 (the callers pass their package's switch, which their tests
// clear to check the portable loop).
func ImatrixWeights(w, x, qw []float32, sigma2 float32, asm bool) {
	w = w[:len(x)]
	qw = qw[:len(x)]
	if asm && hasAVX2 && len(x) > 0 && len(x)%8 == 0 {
		imatrixWeightsAVX2(&w[0], &x[0], &qw[0], len(x), sigma2)
		return
	}
	for i, v := range x {
		w[i] = qw[i] * Sqrt32(FMA32(v, v, sigma2))
	}
}

// SigmaWeights sets w[i] = x[i]·x[i] + c with one rounding (fused), as
// FMA32: the weights of a kernel without importance data that the
// reference contracts (iq2_ks). With asm the loop runs eight at a time in
// AVX2 when the length allows.
func SigmaWeights(w, x []float32, c float32, asm bool) {
	w = w[:len(x)]
	if asm && hasAVX2 && len(x) > 0 && len(x)%8 == 0 {
		sigmaWeightsAVX2(&w[0], &x[0], len(x), c)
		return
	}
	for i, v := range x {
		w[i] = FMA32(v, v, c)
	}
}
