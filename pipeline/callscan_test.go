package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	raw := toBF16(x)
	var want []byte
	for m := 0; m < mats; m++ {
		b, err := quantize.QuantizeRows(formats.Q2_K, rows, ne0, x[m*ne0*rows:(m+1)*ne0*rows], nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}

	dir := t.TempDir()
	info := gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{ne0, rows, mats}, Type: formats.BF16}
	model := writeRawModel(t, filepath.Join(dir, "in.gguf"), info, raw)
	tensors := []Tensor{{Name: info.Name, Shape: info.Shape, Source: 0, Type: formats.Q2_K, Convert: true}}
	if ps := planPieces(model, tensors[0], 8*ne0, 1); len(ps) != mats*(1+rows/8) || ps[0].kind != pieceScan {
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
		if b := runTensor(t, model, tensors[0], opt); !bytes.Equal(b, want) {
			t.Errorf("held scans %v: the output differs from one call per matrix", held)
		}
		if held && speculative.Load() < mats*rows/8 {
			t.Errorf("%d pieces quantized before their scan, want all %d", speculative.Load(), mats*rows/8)
		}
	}
}

// Calls smaller than a piece (a 2-D tensor's: ceil(16384/ne0) rows) are
// quantized call by call within it: a ternary call, a call whose first rows
// are, and normal ones, in pieces of two and a half calls.
func TestCallScopedPiecesHoldWholeCalls(t *testing.T) {
	const ne0, rows, per = 512, 100, 32
	r := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, ne0*rows)
	for i := range x {
		if i < per*ne0 || (i >= per*ne0 && i < (per+8)*ne0) {
			x[i] = 0.02*float32(r.IntN(3)-1) + float32(r.NormFloat64())*0.0002
		} else {
			x[i] = float32(r.NormFloat64()) * 0.05
		}
	}
	raw := toBF16(x)
	var want []byte
	for at := 0; at < rows; at += per {
		n := min(per, rows-at)
		b, err := quantize.QuantizeRows(formats.Q2_K, n, ne0, x[at*ne0:(at+n)*ne0], nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	info := gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: formats.BF16}
	model := writeRawModel(t, filepath.Join(t.TempDir(), "in.gguf"), info, raw)
	tensor := Tensor{Name: info.Name, Shape: info.Shape, Source: 0, Type: formats.Q2_K, Convert: true}
	ps := planPieces(model, tensor, 80*ne0, 1)
	if len(ps) != 2 || ps[0].rows != 2*per || ps[0].callRows != per {
		t.Fatalf("pieces of %d rows (calls of %d), want %d pieces of %d rows", ps[0].rows, ps[0].callRows, 2, 2*per)
	}
	if b := runTensor(t, model, tensor, Options{Threads: 2, PieceWeights: 80 * ne0}); !bytes.Equal(b, want) {
		t.Error("the output differs from one call per 32 rows")
	}
}

// toBF16 rounds x to bf16 in place and returns the bf16 bytes.
func toBF16(x []float32) []byte {
	raw := make([]byte, 2*len(x))
	for i, v := range x {
		bits := formats.FP32ToBF16(v)
		binary.LittleEndian.PutUint16(raw[2*i:], bits)
		x[i] = formats.BF16ToFP32(bits)
	}
	return raw
}

// writeRawModel writes a model of one tensor with the given bytes and opens
// it (closed with the test).
func writeRawModel(t *testing.T, path string, info gguf.TensorInfo, raw []byte) *gguf.Model {
	t.Helper()
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, []gguf.TensorInfo{info}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
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

// runTensor runs one tensor into a temporary output and returns its bytes.
func runTensor(t *testing.T, model *gguf.Model, tensor Tensor, opt Options) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	if err := Run(context.Background(), model, []Output{{Path: out, Tensors: []Tensor{tensor}}}, opt); err != nil {
		t.Fatal(err)
	}
	got, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	b, err := io.ReadAll(got.TensorReader(0))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each call's scan is sent with the scans of the next scanAhead calls
// before the call's pieces.
func TestPlanPiecesScansAhead(t *testing.T) {
	const ne0, rows, mats = 256, 16, 4
	info := gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{ne0, rows, mats}, Type: formats.BF16}
	model := writeRawModel(t, filepath.Join(t.TempDir(), "in.gguf"), info, make([]byte, 2*ne0*rows*mats))
	tensor := Tensor{Name: info.Name, Shape: info.Shape, Source: 0, Type: formats.Q2_K, Convert: true}
	for _, tc := range []struct {
		ahead int
		want  string // S: a scan, then its matrix; P: a piece of that matrix
	}{
		{0, "S0 P0 P0 S1 P1 P1 S2 P2 P2 S3 P3 P3"},
		{1, "S0 S1 P0 P0 S2 P1 P1 S3 P2 P2 P3 P3"},
		{2, "S0 S1 S2 P0 P0 S3 P1 P1 P2 P2 P3 P3"},
		{9, "S0 S1 S2 S3 P0 P0 P1 P1 P2 P2 P3 P3"},
	} {
		var got []string
		for _, p := range planPieces(model, tensor, 8*ne0, tc.ahead) {
			kind := "P"
			if p.kind == pieceScan {
				kind = "S"
			}
			got = append(got, fmt.Sprintf("%s%d", kind, p.matrix))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("scanAhead %d: %s, want %s", tc.ahead, g, tc.want)
		}
	}
}

// A run stopped while a call's scan has not ended (its worker holds it
// back until the stop) ends at once with the stop's error and leaves
// nothing behind: the writer does not wait for a scan that may never run.
func TestCallScanStop(t *testing.T) {
	const ne0, rows, mats = 512, 64, 4
	dir := t.TempDir()
	info := gguf.TensorInfo{Name: "blk.0.ffn_up_exps.weight", Shape: []int64{ne0, rows, mats}, Type: formats.BF16}
	model := writeRawModel(t, filepath.Join(dir, "in.gguf"), info, make([]byte, 2*ne0*rows*mats))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opt := Options{Threads: 3, PieceWeights: 8 * ne0}
	opt.beforeScan = func(*callScan) { <-ctx.Done() }
	opt.quantize = func(t Tensor, p *piece) error {
		cancel()
		return quantizePiece(t, p)
	}
	out := filepath.Join(dir, "out.gguf")
	tensor := Tensor{Name: info.Name, Shape: info.Shape, Source: 0, Type: formats.Q2_K, Convert: true}
	err := Run(ctx, model, []Output{{Path: out, Tensors: []Tensor{tensor}}}, opt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want the cancellation", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}
