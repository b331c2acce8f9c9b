package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// The reference's loader checks every tensor it reads, converted or copied
// (formats.FirstInvalid): a NaN or an infinity in a tensor gquant copies,
// or converts between float types, stopped nothing, and the file was
// written with it. Now the run stops naming the tensor, row and column or
// block, and leaves no output; what the reference does not check (the ik
// types) is copied as it is.
func TestRunChecksCopiedTensors(t *testing.T) {
	const ne0, rows = 256, 24
	type patch struct {
		off  int64 // byte in the tensor
		data []byte
	}
	for _, tc := range []struct {
		name    string
		typ     formats.Type // input type
		out     formats.Type // output type; the same: copied
		patch   patch
		message string // "" for a run that succeeds
	}{
		{"f32 NaN copied", formats.F32, formats.F32, patch{4 * (5*ne0 + 7), []byte{0, 0, 0xc0, 0x7f}}, "row 5 (matrix 0, row 5) column 7: value NaN is not finite"},
		{"f32 -Inf copied", formats.F32, formats.F32, patch{4 * (23*ne0 + 255), []byte{0, 0, 0x80, 0xff}}, "row 23 (matrix 0, row 23) column 255: value -Inf is not finite"},
		{"bf16 NaN copied", formats.BF16, formats.BF16, patch{2 * (9*ne0 + 100), []byte{0xc0, 0x7f}}, "row 9 (matrix 0, row 9) column 100: value NaN is not finite"},
		// f16 and q8_KV from bf16 are made in one pass, which leaves the
		// check to pieces it declines.
		{"bf16 NaN to q8_KV", formats.BF16, formats.Q8_KV, patch{2 * (9*ne0 + 100), []byte{0xc0, 0x7f}}, "row 9 (matrix 0, row 9) column 100: value NaN is not finite"},
		{"bf16 -Inf to q8_KV", formats.BF16, formats.Q8_KV, patch{2 * (23*ne0 + 255), []byte{0x80, 0xff}}, "row 23 (matrix 0, row 23) column 255: value -Inf is not finite"},
		{"bf16 Inf to f16", formats.BF16, formats.F16, patch{2 * (4*ne0 + 31), []byte{0x80, 0x7f}}, "row 4 (matrix 0, row 4) column 31: value +Inf is not finite"},
		{"bf16 NaN to q8_KV_r8", formats.BF16, formats.Q8_KV_R8, patch{2 * (17*ne0 + 64), []byte{0x81, 0xff}}, "row 17 (matrix 0, row 17) column 64: value NaN is not finite"},
		{"bf16 largest finite to q8_KV", formats.BF16, formats.Q8_KV, patch{2 * (3*ne0 + 5), []byte{0x7f, 0xff}}, ""},
		{"f16 Inf to f32", formats.F16, formats.F32, patch{2 * (2*ne0 + 1), []byte{0x00, 0x7c}}, "row 2 (matrix 0, row 2) column 1: value +Inf is not finite"},
		{"q8_0 NaN scale copied", formats.Q8_0, formats.Q8_0, patch{34 * (3*8 + 2), []byte{0x00, 0x7e}}, "row 3 (matrix 0, row 3) block 2: its scale is NaN"},
		{"q4_K infinite dmin copied", formats.Q4_K, formats.Q4_K, patch{144*17 + 2, []byte{0x00, 0x7c}}, "row 17 (matrix 0, row 17) block 0: its scale is infinity"},
		{"f32 largest finite copied", formats.F32, formats.F32, patch{0, []byte{0xff, 0xff, 0x7f, 0x7f}}, ""},
		{"iq4_ks bytes not checked", formats.IQ4_KS, formats.IQ4_KS, patch{4, []byte{0x00, 0x7c, 0xff, 0xff}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			info := gguf.TensorInfo{Name: "blk.0.attn_norm.weight", Shape: []int64{ne0, rows}, Type: tc.typ}
			size, err := tc.typ.TensorSize(info.Shape)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, size) // zeros: finite values, zero scales
			copy(data[tc.patch.off:], tc.patch.data)
			m := writeRawModel(t, in, info, data)
			out := filepath.Join(dir, "out.gguf")
			tensor := Tensor{Name: info.Name, Shape: info.Shape, Source: 0, Type: tc.out, Convert: tc.out != tc.typ}
			// Small pieces: the bad unit is in a later one.
			err = Run(context.Background(), m, []Output{{Path: out, Tensors: []Tensor{tensor}}}, Options{Threads: 2, PieceWeights: 64, Memory: 1})
			if tc.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidData) || !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), "tensor blk.0.attn_norm.weight") {
				t.Fatalf("error %v, want %q", err, tc.message)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output was written")
			}
		})
	}
}

// A tensor of a type llama-quantize's loader refuses whatever its bytes
// (q8_1 and the other activation types: formats.TypeInfo.NotLoaded) was
// copied into the output; the plan now refuses it before any work, naming
// the tensor and the file, as such and not as a tensor quantized already
// (the reference's loader stops before its requantize check).
func TestBuildRefusesTypesNotLoaded(t *testing.T) {
	for _, typ := range formats.Types() {
		if !typ.NotLoaded() {
			continue
		}
		t.Run(typ.String(), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			info := gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 4}, Type: typ}
			size, err := typ.TensorSize(info.Shape)
			if err != nil {
				t.Fatal(err)
			}
			m := writeRawModel(t, in, info, make([]byte, size))
			for _, sel := range []recipes.Options{{FileType: recipes.FileTypeAllF32, CopyOnly: true}, {FileType: recipes.FileTypeQ8_0}} {
				_, err = Build(m, Config{Selection: sel, Output: filepath.Join(dir, "out.gguf")})
				if !errors.Is(err, formats.ErrNotLoaded) || !strings.Contains(err.Error(), "tensor blk.0.ffn_up.weight in "+in) || !strings.Contains(err.Error(), typ.String()) {
					t.Errorf("%s: error %v, want formats.ErrNotLoaded naming the tensor, file and type", sel.FileType, err)
				}
			}
		})
	}
}

// The loader's check of bf16 rows converted in chunks runs only from the
// first chunk that reaches the overflow gate on, or after a conversion
// that fails (readConvert): its error must still be the one the check
// before the conversion gave, wherever the bad value is, and whatever the
// conversion would have said first (a value too large for q8_0 in an
// earlier chunk, iq2_xxs's refusal without importance data).
func TestRunChecksChunkedPieces(t *testing.T) {
	const ne0, rows = 4096, 64 // chunks of 16 rows, one piece
	nan, inf, huge := uint16(0x7fc0), uint16(0xff80), formats.FP32ToBF16(1e38)
	type value struct {
		row, col int
		h        uint16
	}
	for _, tc := range []struct {
		name    string
		out     formats.Type
		values  []value
		message string // "" for a run that succeeds
		invalid bool   // the message is the loader's
	}{
		{"NaN in the first chunk", formats.Q8_0, []value{{0, 0, nan}}, "row 0 (matrix 0, row 0) column 0: value NaN is not finite", true},
		{"NaN in a later chunk", formats.Q8_0, []value{{40, 7, nan}}, "row 40 (matrix 0, row 40) column 7: value NaN is not finite", true},
		{"-Inf in the last row", formats.Q4_0, []value{{63, 4095, inf}}, "row 63 (matrix 0, row 63) column 4095: value -Inf is not finite", true},
		{"two NaNs", formats.Q8_0, []value{{47, 9, nan}, {17, 3, nan}}, "row 17 (matrix 0, row 17) column 3: value NaN is not finite", true},
		{"too large, then NaN", formats.Q8_0, []value{{3, 5, huge}, {40, 7, nan}}, "row 40 (matrix 0, row 40) column 7: value NaN is not finite", true},
		{"too large, NaN in its chunk", formats.Q8_0, []value{{3, 5, huge}, {1, 2, nan}}, "row 1 (matrix 0, row 1) column 2: value NaN is not finite", true},
		{"too large", formats.Q8_0, []value{{3, 5, huge}}, "row 3 (matrix 0, row 3) column 5: value 9.9", false},
		{"refused kernel, then NaN", formats.IQ2_XXS, []value{{40, 7, nan}}, "row 40 (matrix 0, row 40) column 7: value NaN is not finite", true},
		{"refused kernel", formats.IQ2_XXS, nil, "importance", false},
		{"large but finite", formats.Q8_0, []value{{20, 1, formats.FP32ToBF16(5000)}}, "", false},
		{"bf16_r16", formats.BF16_R16, []value{{33, 0, nan}}, "row 33 (matrix 0, row 33) column 0: value NaN is not finite", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			info := gguf.TensorInfo{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: formats.BF16}
			data := make([]byte, 2*ne0*rows)
			for i := 0; i < ne0*rows; i++ {
				binary.LittleEndian.PutUint16(data[2*i:], formats.FP32ToBF16(float32(math.Sin(float64(i)))*0.02))
			}
			for _, v := range tc.values {
				binary.LittleEndian.PutUint16(data[2*(v.row*ne0+v.col):], v.h)
			}
			m := writeRawModel(t, in, info, data)
			out := filepath.Join(dir, "out.gguf")
			tensor := Tensor{Name: info.Name, Shape: info.Shape, Source: 0, Type: tc.out, Convert: true}
			err := Run(context.Background(), m, []Output{{Path: out, Tensors: []Tensor{tensor}}}, Options{Threads: 2, PieceWeights: ne0 * rows})
			if tc.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.message) || errors.Is(err, ErrInvalidData) != tc.invalid {
				t.Fatalf("error %v, want %q (invalid data: %v)", err, tc.message, tc.invalid)
			}
		})
	}
}
