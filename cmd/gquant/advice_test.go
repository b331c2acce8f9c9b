package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
)

// The libraries' errors name no flag; the command line adds them.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("m.gguf: file type IQ2_XXS: %w", quantize.ErrNeedsImatrix), "--ignore-imatrix-rules quantizes anyway"},
		// With the rules ignored, the kernel still refuses: the advice must
		// not suggest the flag again.
		{fmt.Errorf("m.gguf: tensor x as iq2_xxs: %w", quantize.ErrKernelNeedsImatrix), "--ignore-imatrix-rules cannot help"},
		{fmt.Errorf("m.gguf: tensor x: %w (it is q4_K)", pipeline.ErrRequantize), "--allow-requantize"},
		{fmt.Errorf("m.gguf: tensor x: %w q8_k_r16", quantize.ErrUnsupported), "--custom-q"},
		{fmt.Errorf("m.gguf: tensor x: %w", quantize.ErrImatrixRefused), "leave out --imatrix"},
		{fmt.Errorf("%w: o.gguf: .o.gguf.tmp-1-x (another plan)", pipeline.ErrNotResumable), "run without --resume to start over"},
		{&gguf.CommitError{Failed: "o-00002-of-00002.gguf", Err: os.ErrExist}, "--resume puts the kept files in place"},
		{fmt.Errorf("something else"), ""},
	} {
		got := advice(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("advice(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
	}
}
