package iquant

import (
	"errors"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestGoldenAsmLevels runs the golden kernel and stress cases of this
// package's types at each assembly level between the portable Go and the
// highest level this CPU runs: the highest runs in the quantize package's
// TestGoldenKernels and TestGoldenStress, the portable Go there with -tags
// purego. On an AVX-512 machine this holds the AVX2 kernels, which other
// machines run, to the reference's bytes too.
func TestGoldenAsmLevels(t *testing.T) {
	defer setAsm(true)
	testrows.CheckGoldenLevels(t, Kernels(kernel.Options{}), asmLevels, setAsmLevel, isFallback)
}

// isFallback accepts a fallback substitution: it still writes the bytes
// the reference's files hold for those rows.
func isFallback(err error) bool {
	var fb *FallbackError
	return errors.As(err, &fb)
}
