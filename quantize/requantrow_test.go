package quantize_test

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

// TestRequantRow quantizes a row of a requantized model that the random and
// crafted rows did not cover (testdata/requant-row/README.md: it told the
// fused trial errors of make_qp_quants from rounded ones) and holds the
// K-quants' bytes with its importance vector to the reference's.
func TestRequantRow(t *testing.T) {
	load := func(name string) []float32 {
		return testrows.ReadFloat32s(t, filepath.Join("testdata", "requant-row", name))
	}
	row, im := load("row.f32"), load("imatrix.f32")
	for _, tc := range []struct {
		typ  formats.Type
		want string
	}{
		{formats.Q2_K, "b255c676100c113c"},
		{formats.Q3_K, "ffeabc2ac9b5521b"},
		{formats.Q4_K, "b2aa7b1e667581fb"},
		{formats.Q5_K, "87eac444e2564be2"},
		{formats.Q6_K, "fe301f976e5f0dd1"},
	} {
		out, err := quantize.QuantizeRows(tc.typ, 1, len(row), row, im)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(out)
		if got := hex.EncodeToString(sum[:8]); got != tc.want {
			t.Errorf("%s: digest %s, the reference's %s", tc.typ, got, tc.want)
		}
	}
}
