package quantize_test

import (
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestF32Rows quantizes the float32 rows of testdata/f32rows (full
// mantissas, as in F32 models and every --allow-requantize run, where sums
// of x*x round differently fused and unfused; the golden data is all
// bf16-exact and cannot show that) to every type, without and with the
// importance vector, in one QuantizeRows call each, and holds the bytes to
// the reference's (testdata/f32rows/README.md) at the shares of
// testrows.F32BelowFull. This runs the highest assembly level this CPU has,
// the portable Go with -tags purego; the families' TestGoldenAsmLevels run
// the levels between.
func TestF32Rows(t *testing.T) {
	rows := testrows.LoadF32Rows(t)
	n := rows.Check(t, "", nil, func(typ formats.Type, x []float32, nrows, cols int, w []float32) ([]byte, error) {
		return quantize.QuantizeRows(typ, nrows, cols, x, w)
	})
	// Every type QuantizeRows writes has its cases (those the reference
	// could make; reference.tsv names the others).
	have := map[formats.Type]bool{}
	for _, c := range rows.Cases {
		have[c.Type] = true
	}
	for _, typ := range quantize.SupportedTypes() {
		if !have[typ] {
			t.Errorf("no reference output for %s in testdata/f32rows", typ)
		}
	}
	if n < 130 {
		t.Errorf("only %d cases", n)
	}
}
