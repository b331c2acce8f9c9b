package legacy

import (
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestGoldenAsmLevels runs the golden kernel and stress cases of this
// package's types at each assembly level between the portable Go and the
// highest level this CPU runs: the highest runs in the quantize package's
// TestGoldenKernels and TestGoldenStress, the portable Go there with -tags
// purego. On an AVX-512 machine this holds the AVX2 kernels (bf16_r16's
// among them), which other machines run, to the reference's bytes too.
func TestGoldenAsmLevels(t *testing.T) {
	if len(asmLevels) < 3 {
		t.Skip("no assembly level below the highest here")
	}
	if testing.Short() {
		t.Skip("the golden sets take seconds per level")
	}
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	testrows.CheckGoldenLevels(t, Kernels(kernel.Options{}), asmLevels[1:len(asmLevels)-1], setAsmLevel, nil)
}
