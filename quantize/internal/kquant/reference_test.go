package kquant

import (
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// family is this package for the comparisons of testrows.
var family = testrows.Family{
	Kernels: Kernels,
	Portable: func() func() {
		saved := useAVX2
		useAVX2 = false
		return func() { useAVX2 = saved }
	},
	HasAssembly: useAVX2 || kernel.HasAssembly(),
}

// TestReferenceSpecialRows compares, row group by row group, the output of
// every kernel of this package for the crafted rows of testrows (all zero,
// constant, one value, ties, extreme magnitudes, zero-weight blocks, and the
// stress kinds) with the reference's, with and without the assembly
// (testdata/README.md says how the fixture was made).
func TestReferenceSpecialRows(t *testing.T) {
	family.CheckFixture(t, filepath.Join("testdata", "reference-special-rows.tsv"))
}

// TestAssemblyMatchesPortable runs seeded random rows of every stress kind
// and the special rows of testrows through every kernel of this package,
// without and with importance vectors (crafted ones with zero blocks and
// random ones), with the assembly and with the portable Go code, and checks
// that the two agree bit for bit.
func TestAssemblyMatchesPortable(t *testing.T) {
	family.CheckAssemblyMatchesPortable(t, 42, 320)
}
