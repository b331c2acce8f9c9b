package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
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
// of four rows; in the third case most rows are zeros, a few set some of
// the sub-block positions, and the lead of a piece is only the rows that
// last set each position (the rows between leave the state as it is).
func TestLeadKeepsReferenceCalls(t *testing.T) {
	for _, tc := range []struct {
		shape   []int64
		perCall int // rows per call; 2-D: times the interleave count
		sparse  bool
	}{
		{[]int64{256, 16, 2}, 0, false}, // one call per expert
		{[]int64{256, 160}, 64, false},  // calls of 64 rows (iq1_m_r4: 256, one)
		{[]int64{256, 96, 2}, 0, true},
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
				// sparse: row 13 sets every position, rows 30 and 51 some
				// (positions 0-4 and 8-15 of each super-block).
				if tc.sparse && r%ne1 != 13 && (r%ne1 != 30 || i%256 >= 80) && (r%ne1 != 51 || i%256 < 128) {
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

// TestLeadRowsBounded: the lead of a piece holds only the rows that last
// set some state, nearest first, whatever lies between: a zero expert of
// an iq1_m tensor, walked back to its start, holds nothing (it held every
// row before the piece, a whole matrix per worker beyond the memory
// budget).
func TestLeadRowsBounded(t *testing.T) {
	const ne0, ne1 = 256, 96
	// Expert 0: row 13 sets every sub-block position, row 20 positions 0-1,
	// row 30 positions 0-4, row 51 positions 8-15; expert 1 is zeros.
	src := make([]float32, ne0*ne1*2)
	for _, set := range []struct{ row, from, to int }{{13, 0, 256}, {20, 0, 32}, {30, 0, 80}, {51, 128, 256}} {
		for i := set.from; i < set.to; i++ {
			src[set.row*ne0+i] = float32((i*37+set.row*11)%29-14) / 700
		}
	}
	shape := []int64{ne0, ne1, 2}
	m := openF32Tensor(t, filepath.Join(t.TempDir(), "in.gguf"), "blk.0.ffn_up_exps.weight", shape, src)
	tensor := Tensor{Name: "blk.0.ffn_up_exps.weight", Shape: shape, Type: formats.IQ1_M, Convert: true}
	for _, tc := range []struct {
		matrix, row int64
		want        []int // source rows, nearest first
	}{
		{0, 90, []int{51, 30, 13}},
		{0, 40, []int{30, 13}}, // row 20 sets nothing row 30 does not
		{0, 25, []int{20, 13}},
		{0, 14, []int{13}},
		{0, 13, nil},
		{1, 90, nil}, // zeros
	} {
		p := &piece{matrix: tc.matrix, row: tc.row, rows: 1, buf: &buffers{}}
		rows, err := leadRows(m, tensor, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(tc.want) {
			t.Errorf("expert %d row %d: %d rows in the lead, want %d", tc.matrix, tc.row, len(rows), len(tc.want))
			continue
		}
		for i, r := range tc.want {
			if !slices.Equal(rows[i], src[r*ne0:(r+1)*ne0]) {
				t.Errorf("expert %d row %d: lead row %d is not source row %d", tc.matrix, tc.row, i, r)
			}
		}
	}
}
