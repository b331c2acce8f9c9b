package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// q2_K without importance data decides over each whole reference call
// whether the weights are ternary (quantize.CallScoped). Expert matrices
// larger than a piece are scanned and split: the bytes are those of one
// call per matrix, for ternary experts (whose pieces alone would take
// their own largest magnitude), an expert whose first rows alone look
// ternary, and normal ones, both when the pieces are quantized after the
// scan and when every piece is quantized before it (speculatively: the
// writer redoes those of ternary calls).
func TestCallScanSplitsCalls(t *testing.T) {
	const ne0, rows, mats = 512, 64, 4
	r := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, ne0*rows*mats)
	for m := 0; m < mats; m++ {
		xm := x[m*ne0*rows : (m+1)*ne0*rows]
		for i := range xm {
			ternary := m == 0 || m == 3 || (m == 1 && i < 8*ne0)
			if ternary {
				xm[i] = 0.02*float32(r.IntN(3)-1) + float32(r.NormFloat64())*0.0002
			} else {
				xm[i] = float32(r.NormFloat64()) * 0.05
			}
		}
		if m != 1 {
			xm[len(xm)-ne0/2] = 0.0213 // the largest magnitude, in the last piece
		}
	}
	raw := make([]byte, 2*len(x))
	for i, v := range x {
		bits := formats.FP32ToBF16(v)
		binary.LittleEndian.PutUint16(raw[2*i:], bits)
		x[i] = formats.BF16ToFP32(bits)
	}
	var want []byte
	for m := 0; m < mats; m++ {
		b, err := quantize.QuantizeRows(formats.Q2_K, rows, ne0, x[m*ne0*rows:(m+1)*ne0*rows], nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}

	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	info := gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{ne0, rows, mats}, Type: formats.BF16}
	w, err := gguf.Create(in, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, []gguf.TensorInfo{info}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	model, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	tensors := []Tensor{{Name: info.Name, Shape: info.Shape, Source: 0, Type: formats.Q2_K, Convert: true}}
	if ps := planPieces(model, tensors[0], 8*ne0); len(ps) != mats*(1+rows/8) || ps[0].kind != pieceScan {
		t.Fatalf("%d pieces, the first of kind %d: want a scan and %d pieces per matrix", len(ps), ps[0].kind, rows/8)
	}

	for _, held := range []bool{false, true} {
		opt := Options{Threads: mats + 1, PieceWeights: 8 * ne0}
		var speculative atomic.Int32
		if held {
			// Each scan waits until every piece of its call is quantized
			// (a worker for each scan and one for the pieces; the pieces
			// in flight hold a whole call).
			var mu sync.Mutex
			quantized := map[*callScan]chan struct{}{}
			count := map[*callScan]int{}
			gate := func(c *callScan) chan struct{} {
				if quantized[c] == nil {
					quantized[c] = make(chan struct{})
				}
				return quantized[c]
			}
			opt.quantize = func(t Tensor, p *piece) error {
				err := quantizePiece(t, p)
				mu.Lock()
				defer mu.Unlock()
				if p.speculative {
					speculative.Add(1)
					if count[p.call]++; count[p.call] == rows/8 {
						close(gate(p.call))
					}
				}
				return err
			}
			opt.beforeScan = func(c *callScan) {
				mu.Lock()
				ch := gate(c)
				mu.Unlock()
				<-ch
			}
		}
		out := filepath.Join(dir, "out.gguf")
		if err := Run(context.Background(), model, []Output{{Path: out, Tensors: tensors}}, opt); err != nil {
			t.Fatal(err)
		}
		got, err := gguf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(got.TensorReader(0))
		got.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("held scans %v: the output differs from one call per matrix", held)
		}
		if held && speculative.Load() < mats*rows/8 {
			t.Errorf("%d pieces quantized before their scan, want all %d", speculative.Load(), mats*rows/8)
		}
	}
}
