package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// openF32Tensor writes a model of one f32 tensor holding data at path and
// opens it; the test closes it.
func openF32Tensor(t *testing.T, path, name string, shape []int64, data []float32) *gguf.Model {
	t.Helper()
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}},
		[]gguf.TensorInfo{{Name: name, Shape: shape, Type: formats.F32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	if _, err := w.Write(buf); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestCallScopedTypesKeepReferenceCalls: iq1_m and iq1_m_r4 carry each
// sub-block position's shift from row to row within a call (a sub-block of
// zeros keeps the shift its position had last), so a run must quantize in
// the reference's calls, here one per expert matrix, whatever its piece
// size. Here a row whose first sub-block is zeros starts every piece of
// four rows within a call.
func TestCallScopedTypesKeepReferenceCalls(t *testing.T) {
	const ne0, ne1, ne2 = 256, 16, 2
	shape := []int64{ne0, ne1, ne2}
	src := make([]float32, ne0*ne1*ne2)
	for r := range ne1 * ne2 {
		for i := range ne0 {
			// Where a piece of four rows would start within a call, the
			// first 16 weights (a sub-block) are zeros.
			if r%4 == 0 && r%ne1 != 0 && i < 16 {
				continue
			}
			src[r*ne0+i] = float32((i*37+r*11)%29-14) / 700
		}
	}
	dir := t.TempDir()
	m := openF32Tensor(t, filepath.Join(dir, "in.gguf"), "blk.0.ffn_up_exps.weight", shape, src)
	imatrix := make([]float32, ne0*ne2)
	for i := range imatrix {
		imatrix[i] = 1 + float32(i%5)/4
	}
	for _, typ := range []formats.Type{formats.IQ1_M, formats.IQ1_M_R4} {
		if !quantize.CallScoped(typ, true) {
			t.Errorf("%s is not call-scoped", typ)
		}
		// The reference: one call per expert matrix.
		var want []byte
		for e := range ne2 {
			b, err := quantize.QuantizeRows(typ, ne1, ne0, src[e*ne0*ne1:(e+1)*ne0*ne1], imatrix[e*ne0:(e+1)*ne0])
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, b...)
		}
		out := filepath.Join(dir, typ.String()+".gguf")
		outs := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up_exps.weight", Shape: shape, Type: typ, Convert: true, Imatrix: imatrix}}}}
		// Pieces of four rows, unless the type keeps the reference's calls.
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
			t.Errorf("%s: the run's bytes differ from one call per expert", typ)
		}
	}
}
