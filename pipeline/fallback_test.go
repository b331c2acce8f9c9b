package pipeline

import (
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
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
