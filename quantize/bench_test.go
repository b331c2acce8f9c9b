package quantize_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/quantize"
)

// BenchmarkQuantize times one QuantizeRows call per type over 64 rows of 4096
// normal weights (sigma 0.02, fixed seed) with an importance matrix, the
// setting of ../shared/bench/reference-quantize-speed.tsv. SetBytes counts
// the bf16 input (2 bytes per weight), so MB/s compares with that table.
func BenchmarkQuantize(b *testing.B) {
	const rows, cols = 64, 4096
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(r.ExpFloat64())
	}
	for _, t := range quantize.SupportedTypes() {
		rs, err := t.RowSize(cols)
		if err != nil {
			continue
		}
		n := rows - rows%t.Interleave()
		if n == 0 {
			continue
		}
		b.Run(t.String(), func(b *testing.B) {
			dst := make([]byte, int(rs)*n)
			b.SetBytes(int64(n * cols * 2))
			for b.Loop() {
				if err := quantize.QuantizeRowsInto(dst, t, n, cols, src[:n*cols], imatrix); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
