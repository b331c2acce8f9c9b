package kquant

import (
	"testing"

	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestF32RowsPortable holds this package's kernels, with package kernel's
// portable searches, to the reference's bytes for the float32 rows of
// ../../testdata/f32rows (the quantize package's TestF32Rows runs the
// assembly).
func TestF32RowsPortable(t *testing.T) {
	testrows.CheckF32Levels(t, Kernels, []int{0, 1}, func(int) {}, nil)
}
