package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// Rows the reference cannot quantize (an iq2_xxs block whose only
// non-zero value has importance 0) are reported once per tensor, on its
// Finished event, as rows of the tensor, gathered over its pieces (here
// two experts, one call each).
func TestRunReportsFallbackRows(t *testing.T) {
	const ne0, ne1, ne2 = 256, 3, 2
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	shape := []int64{ne0, ne1, ne2}
	bad := map[int]bool{1: true, 5: true} // matrix 0 row 1, matrix 1 row 2
	src := make([]float32, ne0*ne1*ne2)
	for r := 0; r < ne1*ne2; r++ {
		row := src[r*ne0 : (r+1)*ne0]
		for i := range row {
			row[i] = float32((i*37+r*11)%29-14) / 700
		}
		if bad[r] {
			clear(row[32:64])
			row[40] = 0.03
		}
	}
	m := openF32Tensor(t, in, "blk.0.ffn_up_exps.weight", shape, src)
	imatrix := make([]float32, ne0*ne2)
	for i := range imatrix {
		imatrix[i] = 1 + float32(i%7)/8
	}
	imatrix[40], imatrix[ne0+40] = 0, 0
	outs := []Output{{Path: filepath.Join(dir, "out.gguf"), Tensors: []Tensor{{Name: "blk.0.ffn_up_exps.weight", Shape: shape, Type: formats.IQ2_XXS, Convert: true, Imatrix: imatrix}}}}
	var got []*Fallback
	var finished int
	err := Run(context.Background(), m, outs, Options{Threads: 2, Progress: func(ev Event) {
		if ev.Finished {
			finished++
		}
		if ev.Fallback != nil {
			if !ev.Finished {
				t.Error("a fallback reported before the tensor is finished")
			}
			got = append(got, ev.Fallback)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if finished != 1 || len(got) != 1 {
		t.Fatalf("%d finished events, %d fallback reports; want 1 and 1", finished, len(got))
	}
	fb := got[0]
	if fb.Type != formats.IQ2_XXS || len(fb.Rows) != 2 || fb.Rows[0] != 1 || fb.Rows[1] != 5 {
		t.Errorf("fallback %+v, want iq2_xxs rows 1 and 5", fb)
	}
	if s := fb.String(); !strings.HasPrefix(s, "iq2_xxs rows 1, 5: ") {
		t.Errorf("String() = %q", s)
	}
}

func TestFallbackString(t *testing.T) {
	f := &Fallback{Type: formats.IQ1_S, Rows: []int64{4}, Reason: "why"}
	if s := f.String(); s != "iq1_s row 4: why" {
		t.Errorf("%q", s)
	}
	for i := int64(5); i < 17; i++ {
		f = mergeFallback(f, &Fallback{Type: formats.IQ1_S, Rows: []int64{i}, Reason: "why"})
	}
	if s := f.String(); s != "iq1_s rows 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 and 3 more: why" {
		t.Errorf("%q", s)
	}
}

// openF32Tensor writes a model of one f32 tensor holding data at path and
// opens it; the test closes it.
func openF32Tensor(t *testing.T, path, name string, shape []int64, data []float32) *gguf.Model {
	t.Helper()
	buf := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return writeRawModel(t, path, gguf.TensorInfo{Name: name, Shape: shape, Type: formats.F32}, buf)
}

// Importance data that makes an encoding non-finite (a block of zero
// importance gives q5_K and iq4_nl NaN scales, one of subnormal weights
// too; llama-quantize stops the run there) gets those rows quantized again
// with uniform importance: the output is finite, the same at any thread
// count, the rows are reported as a Fallback, and rows with usable
// importance data are the kernel's own.
func TestRunImportanceFallback(t *testing.T) {
	const ne0, ne1, ne2 = 512, 4, 3
	shape := []int64{ne0, ne1, ne2}
	src, imatrix := fallbackInput(ne0, ne1, ne2) // matrix 1: no importance data at all
	for i := 2*ne0 + 256; i < 3*ne0; i++ {
		imatrix[i] = math.SmallestNonzeroFloat32 // matrix 2: a super-block of subnormal weights
	}
	for _, tc := range []struct {
		typ  formats.Type
		rows []int64
	}{
		{formats.Q5_K, []int64{4, 5, 6, 7, 8, 9, 10, 11}},
		{formats.IQ4_NL, []int64{4, 5, 6, 7, 8, 9, 10, 11}},
		{formats.Q5_K_R4, nil}, // QHelper's guard: finite as it is
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			dir := t.TempDir()
			m := openF32Tensor(t, filepath.Join(dir, "in.gguf"), "blk.0.ffn_up_exps.weight", shape, src)
			var outputs [][]byte
			for _, threads := range []int{1, 2} {
				out := filepath.Join(dir, fmt.Sprintf("out%d.gguf", threads))
				outs := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up_exps.weight", Shape: shape, Type: tc.typ, Convert: true, Imatrix: imatrix}}}}
				var fb *Fallback
				err := Run(context.Background(), m, outs, Options{Threads: threads, PieceWeights: 2 * ne0, Progress: func(ev Event) {
					if ev.Fallback != nil {
						fb = ev.Fallback
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.rows == nil && fb != nil:
					t.Errorf("threads %d: fallback %v", threads, fb)
				case tc.rows != nil && (fb == nil || !slices.Equal(fb.Rows, tc.rows) || fb.Reason != importanceFallback):
					t.Errorf("threads %d: fallback %v, want rows %v", threads, fb, tc.rows)
				}
				o, err := gguf.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				data := make([]byte, o.Tensors[0].Size)
				if _, err := o.TensorReader(0).ReadAt(data, 0); err != nil {
					t.Fatal(err)
				}
				o.Close()
				deq := make([]float32, ne0*ne1*ne2)
				if err := formats.DequantizeRows(tc.typ, ne0, data, deq); err != nil {
					t.Fatal(err)
				}
				if i := formats.FirstNonFinite(deq); i >= 0 {
					t.Errorf("threads %d: value %d is %v", threads, i, deq[i])
				}
				// Matrix 0 is the kernel's own encoding.
				want, err := quantize.QuantizeRows(tc.typ, ne1, ne0, src[:ne0*ne1], imatrix[:ne0])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(data[:len(want)], want) {
					t.Errorf("threads %d: matrix 0 is not the kernel's encoding", threads)
				}
				outputs = append(outputs, data)
			}
			if !bytes.Equal(outputs[0], outputs[1]) {
				t.Error("1 and 2 threads wrote different bytes")
			}
		})
	}
}

func TestRiskyImportance(t *testing.T) {
	ones := func(n int) []float32 {
		w := make([]float32, n)
		for i := range w {
			w[i] = 1
		}
		return w
	}
	zeroAt := func(w []float32, from, to int) []float32 { clear(w[from:to]); return w }
	big := ones(64)
	big[9] = 1e30
	for _, tc := range []struct {
		name string
		im   []float32
		want bool
	}{
		{"usable", ones(256), false},
		{"scattered zeros", zeroAt(zeroAt(ones(256), 3, 18), 40, 47), false},
		{"a zero group of 16", zeroAt(ones(256), 32, 48), true},
		{"all zero", make([]float32, 256), true},
		{"a group of subnormals", func() []float32 {
			w := ones(64)
			for i := 16; i < 32; i++ {
				w[i] = 1e-43
			}
			return w
		}(), true},
		{"small but normal", func() []float32 {
			w := ones(64)
			for i := 16; i < 32; i++ {
				w[i] = 1e-20
			}
			return w
		}(), false},
		{"a short zero tail", zeroAt(ones(40), 32, 40), true},
		{"huge", big, true},
	} {
		if got := riskyImportance(tc.im); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The same in pieces converted in chunks (convertChunks): the rows
// quantized again are reported too.
func TestRunImportanceFallbackChunks(t *testing.T) {
	const ne0, ne1, ne2 = 512, 256, 2
	shape := []int64{ne0, ne1, ne2}
	src, imatrix := fallbackInput(ne0, ne1, ne2) // matrix 1: no importance data
	dir := t.TempDir()
	m := openF32Tensor(t, filepath.Join(dir, "in.gguf"), "blk.0.ffn_up_exps.weight", shape, src)
	outs := []Output{{Path: filepath.Join(dir, "out.gguf"), Tensors: []Tensor{{Name: "blk.0.ffn_up_exps.weight", Shape: shape, Type: formats.Q5_K, Convert: true, Imatrix: imatrix}}}}
	if n := chunkRows(outs[0].Tensors[0], &piece{rows: ne1}); n == 0 || n >= ne1 {
		t.Fatalf("a piece of %d rows is converted in chunks of %d: not chunked", ne1, n)
	}
	var fb *Fallback
	if err := Run(context.Background(), m, outs, Options{Threads: 1, Progress: func(ev Event) {
		if ev.Fallback != nil {
			fb = ev.Fallback
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if fb == nil || len(fb.Rows) != ne1 || fb.Rows[0] != ne1 || fb.Rows[ne1-1] != 2*ne1-1 {
		t.Errorf("fallback %v, want rows %d..%d", fb, ne1, 2*ne1-1)
	}
}

// fallbackInput makes the rows and importance data of the importance
// fallback tests: every matrix's importance usable but matrix 1's, all zero.
func fallbackInput(ne0, ne1, ne2 int) (src, imatrix []float32) {
	src = make([]float32, ne0*ne1*ne2)
	for i := range src {
		src[i] = float32((i*37)%29-14) / 700
	}
	imatrix = make([]float32, ne0*ne2)
	for i := range imatrix {
		imatrix[i] = 1 + float32(i%7)/8
	}
	clear(imatrix[ne0 : 2*ne0])
	return src, imatrix
}
