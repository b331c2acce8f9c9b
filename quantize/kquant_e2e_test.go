package quantize_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// kquantE2E lists whole-file reference runs of ../shared/golden/e2e (see
// COMMANDS.md there) whose outputs hold K-quant tensors, with the importance
// matrix each run used ("" for none). Every K-quant tensor of those outputs
// must be reproduced byte for byte from the bf16 input.
var kquantE2E = []struct {
	output, imatrix string
}{
	{"out-q4_k_m.gguf", ""},
	{"out-iq2_k-imat.gguf", "tiny-ds2.imatrix.dat"},
	{"out-iq4_ks-imat.gguf", "tiny-ds2.imatrix.dat"},
	{"out-recipe.gguf", "tiny-ds2.imatrix.dat"},
	{"out-iq2_xs-imat.gguf", "tiny-ds2.full.imatrix.dat"},
	{"out-recipe-iq.gguf", "tiny-ds2.full.imatrix.dat"},
}

// isKQuant reports whether t is produced by quantize/internal/kquant.
func isKQuant(t formats.Type) bool {
	switch t {
	case formats.Q2_K, formats.Q3_K, formats.Q4_K, formats.Q5_K, formats.Q6_K,
		formats.Q2_K_R4, formats.Q3_K_R4, formats.Q4_K_R4, formats.Q5_K_R4, formats.Q6_K_R4:
		return true
	}
	return false
}

func TestKQuantE2EGolden(t *testing.T) {
	input, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer input.Close()
	checked := 0
	for _, run := range kquantE2E {
		t.Run(run.output, func(t *testing.T) {
			out, err := gguf.Open(golden.Path(t, "e2e", run.output))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			var im *imatrix.Matrix
			if run.imatrix != "" {
				if im, err = imatrix.Open(golden.Path(t, "e2e", run.imatrix)); err != nil {
					t.Fatal(err)
				}
			}
			for i, ot := range out.Tensors {
				if !isKQuant(ot.Type) {
					continue
				}
				checked++
				t.Run(ot.Name, func(t *testing.T) {
					want := make([]byte, ot.Size)
					if _, err := out.TensorReader(i).ReadAt(want, 0); err != nil {
						t.Fatalf("reading reference %s: %v", ot.Name, err)
					}
					got, err := quantizeTensorLikeReference(input, ot.Name, ot.Type, im)
					if err != nil {
						t.Fatal(err)
					}
					share, diff := golden.BlockShare(got, want, ot.Type.TypeSize()*ot.Type.Interleave())
					if share < 1 {
						t.Errorf("%s (%s): %.4f identical blocks; %s", ot.Name, ot.Type, share, diff)
					}
				})
			}
		})
	}
	if checked == 0 {
		t.Error("no K-quant tensor found in the e2e outputs")
	}
}

// quantizeTensorLikeReference quantizes the bf16 tensor name of input to t,
// one matrix (expert) per call as llama-quantize does, with that matrix's
// slice of the importance data when im is not nil.
func quantizeTensorLikeReference(input *gguf.Model, name string, t formats.Type, im *imatrix.Matrix) ([]byte, error) {
	idx := input.TensorIndex(name)
	if idx < 0 {
		return nil, fmt.Errorf("input has no tensor %s", name)
	}
	it := input.Tensors[idx]
	if it.Type != formats.BF16 {
		return nil, fmt.Errorf("input tensor %s is %s, want bf16", name, it.Type)
	}
	raw, err := io.ReadAll(input.TensorReader(idx))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	src := make([]float32, len(raw)/2)
	for i := range src {
		src[i] = formats.BF16ToFP32(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	ne0 := int(it.Shape[0])
	rowsPerMatrix := 1
	if len(it.Shape) > 1 {
		rowsPerMatrix = int(it.Shape[1])
	}
	nmat := len(src) / (ne0 * rowsPerMatrix)
	var weights []float32
	if im != nil {
		if e, _, ok := im.Find(name); ok {
			weights = e.Mean()
			if len(weights) != nmat*ne0 {
				return nil, fmt.Errorf("%s: importance data has %d values, want %d", name, len(weights), nmat*ne0)
			}
		}
	}
	var out []byte
	for m := 0; m < nmat; m++ {
		var w []float32
		if weights != nil {
			w = weights[m*ne0 : (m+1)*ne0]
		}
		b, err := quantize.QuantizeRows(t, rowsPerMatrix, ne0, src[m*ne0*rowsPerMatrix:(m+1)*ne0*rowsPerMatrix], w)
		if err != nil {
			return nil, fmt.Errorf("%s matrix %d: %w", name, m, err)
		}
		out = append(out, b...)
	}
	return out, nil
}
