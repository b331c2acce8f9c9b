package repack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// llama-quantize --repack loads the model with its loader's check of every
// tensor (formats.FirstInvalid): an infinity or NaN scale in a tensor
// repacked, or a value in one copied, stops it. Repacking wrote them.
func TestRunChecksInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typ     formats.Type
		bad     int64 // byte of the tensor set to an fp16 infinity (0x7c00)
		message string
	}{
		{"q4_0 scale, repacked", formats.Q4_0, 18 * (32*5 + 3), "row 5 block 3: a q4_0 block scale is infinity"},
		{"q8_0 scale, last block", formats.Q8_0, 34*32*8 - 34, "row 7 block 31: a q8_0 block scale is infinity"},
		{"f32 value, copied", formats.F32, 4*1024*3 + 2, "row 3 column 0: value +Inf is not finite"},
		{"f16 value, copied", formats.F16, 2*1024*8 - 2, "row 7 column 1023: value +Inf is not finite"},
		{"iq4_ks bytes, not checked", formats.IQ4_KS, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			size, err := tc.typ.TensorSize([]int64{1024, 8})
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, size)
			if tc.typ == formats.F32 {
				copy(data[tc.bad:], []byte{0x80, 0x7f})
			} else {
				copy(data[tc.bad:], []byte{0x00, 0x7c})
			}
			// A q4_0 tensor to repack first, then the case's tensor (a q4_0
			// or q8_0 one is repacked too, a float one copied).
			in := filepath.Join(dir, "in.gguf")
			infos := []gguf.TensorInfo{{Name: "blk.0.ffn_up.weight", Shape: []int64{1024, 8}, Type: formats.Q4_0},
				{Name: "blk.0.ffn_down.weight", Shape: []int64{1024, 8}, Type: tc.typ}}
			m := writeModel(t, in, infos, make([]byte, 18*32*8), data)
			p, err := NewPlan(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.gguf")
			_, err = Run(m, p, out)
			if tc.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, formats.ErrInvalidData) || !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), "blk.0.ffn_down.weight") {
				t.Fatalf("error %v, want %q", err, tc.message)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output was written")
			}
		})
	}
}

// A tensor of a type llama-quantize's loader refuses whatever its bytes
// (formats.TypeInfo.NotLoaded) stops the plan, as it stops
// llama-quantize --repack; repack copied it.
func TestPlanRefusesTypesNotLoaded(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	infos := []gguf.TensorInfo{{Name: "blk.0.ffn_up.weight", Shape: []int64{1024, 8}, Type: formats.Q4_0},
		{Name: "blk.0.ffn_down.weight", Shape: []int64{1024, 8}, Type: formats.Q8_1}}
	m := writeModel(t, in, infos, make([]byte, 18*32*8), make([]byte, 36*32*8))
	_, err := NewPlan(m, Options{})
	if !errors.Is(err, formats.ErrNotLoaded) || !strings.Contains(err.Error(), "tensor blk.0.ffn_down.weight in "+in) {
		t.Fatalf("error %v, want formats.ErrNotLoaded naming the tensor", err)
	}
}

// writeModel writes a model of the tensors infos holding data, one slice
// per tensor, and opens it (closed with the test).
func writeModel(t *testing.T, path string, infos []gguf.TensorInfo, data ...[]byte) *gguf.Model {
	t.Helper()
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range data {
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
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
