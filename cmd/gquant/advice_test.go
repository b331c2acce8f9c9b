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

// The advice for a file type refused without importance data suggests
// --ignore-imatrix-rules exactly when the plan with it passes (for IQ2_XS it
// suggested the flag, and the plan with it failed: the iq2_xs kernel needs
// the data itself).
func TestAdviceIgnoreImatrixRulesHelps(t *testing.T) {
	out := t.TempDir() + "/o.gguf"
	checked := 0
	for _, ft := range []string{"IQ2_XS", "IQ2_XXS", "IQ2_S", "IQ2_XXS_R4", "Q2_K_S", "IQ2_XS_R4", "IQ1_S", "IQ1_S_R4", "IQ1_M_R4", "IQ1_M"} {
		code, _, stderr := runGquant("plan", "--summary", tinyModel, out, ft)
		if code != 1 {
			t.Errorf("%s without an importance matrix: exit %d", ft, code)
			continue
		}
		suggests := strings.Contains(stderr, "--ignore-imatrix-rules quantizes anyway")
		helps, _, _ := runGquant("plan", "--summary", "--ignore-imatrix-rules", tinyModel, out, ft)
		if suggests != (helps == 0) {
			t.Errorf("%s: the advice suggests --ignore-imatrix-rules: %v; the plan with it exits %d\n%s", ft, suggests, helps, stderr)
		}
		checked++
	}
	if checked != 10 {
		t.Errorf("%d file types checked", checked)
	}
}
