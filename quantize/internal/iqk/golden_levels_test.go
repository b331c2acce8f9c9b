package iqk

import (
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
	setLevel, restore := levelSetter()
	defer restore()
	testrows.CheckGoldenLevels(t, Kernels(kernel.Options{}), assemblyModes(), setLevel, nil)
}

// levelSetter returns the setLevel the testrows checks take, which undoes
// each level before the next (setAssembly returns its undo), and restore,
// which undoes the last one.
func levelSetter() (setLevel func(int), restore func()) {
	var undo func()
	restore = func() {
		if undo != nil {
			undo()
			undo = nil
		}
	}
	setLevel = func(level int) {
		restore()
		undo = setAssembly(level)
	}
	return setLevel, restore
}
