package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
)

// The libraries' errors name no flag; the command line adds them.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("m.gguf: file type IQ2_XXS: %w", quantize.ErrNeedsImatrix), "--imatrix FILE"},
		{fmt.Errorf("m.gguf: tensor x: %w (it is q4_K)", pipeline.ErrRequantize), "--allow-requantize"},
		{fmt.Errorf("m.gguf: tensor x: %w q4_0_4x4", quantize.ErrUnsupported), "Q4_0 in place"},
		{fmt.Errorf("something else"), ""},
	} {
		got := advice(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("advice(%v) = %q, want it to say %q", tc.err, got, tc.want)
		}
	}
}
