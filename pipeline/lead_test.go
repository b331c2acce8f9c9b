package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// TestLeadKeepsReferenceCalls: iq1_m and iq1_m_r4 carry each sub-block
// position's shift from row to row within a call (a sub-block of zeros in a
// super-block with others stores the shift its position had last), so a run
// that quantizes a reference call in pieces must give the same bytes as the
// whole call: one per expert matrix of a 3-D tensor, ceil(16384/ne0) rows
// (times the interleave count) of a 2-D one. Here a row whose first 16 weights are zeros starts every piece
// of four rows.
func TestLeadKeepsReferenceCalls(t *testing.T) {
	for _, tc := range []struct {
		shape   []int64
		perCall int // rows per call; 2-D: times the interleave count
	}{
		{[]int64{256, 16, 2}, 0}, // one call per expert
		{[]int64{256, 160}, 64},  // calls of 64 rows (iq1_m_r4: 256, one)
	} {
		ne0, ne1 := int(tc.shape[0]), int(tc.shape[1])
		mats := 1
		if len(tc.shape) > 2 {
			mats = int(tc.shape[2])
		}
		nrows := ne1 * mats
		src := make([]float32, ne0*nrows)
		for r := range nrows {
			for i := range ne0 {
				if r%4 == 0 && i < 16 {
					continue
				}
				src[r*ne0+i] = float32((i*37+r*11)%29-14) / 700
			}
		}
		dir := t.TempDir()
		m := openF32Tensor(t, filepath.Join(dir, "in.gguf"), "blk.0.ffn_up_exps.weight", tc.shape, src)
		imatrix := make([]float32, ne0*mats)
		for i := range imatrix {
			imatrix[i] = 1 + float32(i%5)/4
		}
		for _, typ := range []formats.Type{formats.IQ1_M, formats.IQ1_M_R4} {
			per := ne1
			if tc.perCall > 0 {
				per = tc.perCall * typ.Interleave()
			}
			var want []byte
			for r := 0; r < nrows; r += per {
				n := min(per, nrows-r)
				mat := r / ne1
				b, err := quantize.QuantizeRows(typ, n, ne0, src[r*ne0:(r+n)*ne0], imatrix[mat*ne0:(mat+1)*ne0])
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, b...)
			}
			out := filepath.Join(dir, typ.String()+".gguf")
			outs := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up_exps.weight", Shape: tc.shape, Type: typ, Convert: true, Imatrix: imatrix}}}}
			if err := Run(context.Background(), m, outs, Options{Threads: 2, PieceWeights: 4 * ne0}); err != nil {
				t.Fatal(err)
			}
			got, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, got.Tensors[0].Size)
			if _, err := got.TensorReader(0).ReadAt(data, 0); err != nil {
				t.Fatal(err)
			}
			got.Close()
			os.Remove(out)
			if !bytes.Equal(data, want) {
				t.Errorf("%s %v: the run's bytes differ from the reference's calls", typ, tc.shape)
			}
		}
	}
}
