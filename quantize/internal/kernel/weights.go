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
