package iqk

import (
	"testing"

	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestF32RowsAsmLevels holds this package's kernels to the reference's
// bytes for the float32 rows of ../../testdata/f32rows at each assembly
// level below the highest (the quantize package's TestF32Rows runs that).
func TestF32RowsAsmLevels(t *testing.T) {
	setLevel, restore := levelSetter()
	defer restore()
	testrows.CheckF32Levels(t, Kernels, assemblyModes(), setLevel, nil)
}
