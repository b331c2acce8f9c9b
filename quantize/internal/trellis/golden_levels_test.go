package trellis

import (
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestGoldenAsmLevels runs the golden kernel and stress cases of this
// package's types at each assembly level between the portable Go and the
// highest level this CPU runs: the highest runs in the quantize package's
// TestGoldenKernels and TestGoldenStress, the portable Go there with -tags
// purego. This holds the paths below the highest (the exhaustive block
// search; the pruned one on AVX-512 machines), which other machines run,
// to the reference's bytes too.
func TestGoldenAsmLevels(t *testing.T) {
	testrows.CheckGoldenLevels(t, Kernels(kernel.Options{}), asmLevels, setAsmLevel, nil)
}
