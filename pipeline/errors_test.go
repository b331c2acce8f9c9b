package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
)

// The kernel's errors about a value reach the caller of Run intact below the
// tensor's context, so errors.As finds them (issue 18 item 6).
func TestRunErrorsUnwrapToTheKernels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value float32
		typ   formats.Type
		as    func(error) bool
	}{
		{"NaN", float32(math.NaN()), formats.Q8_0, func(err error) bool {
			var re *quantize.RowError
			return errors.As(err, &re) && re.Column == 3 && math.IsNaN(float64(re.Value))
		}},
		{"huge", 1e30, formats.IQ3_S, func(err error) bool {
			var oe *quantize.OverflowError
			return errors.As(err, &oe) && oe.Type == formats.IQ3_S
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			writeBF16Model(t, in, 256, 300, 217, tc.value)
			m, err := gguf.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			outs := []Output{{Path: filepath.Join(dir, "out.gguf"), Tensors: []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 300}, Source: 0, Type: tc.typ, Convert: true}}}}
			err = Run(context.Background(), m, outs, Options{Threads: 2, PieceWeights: 256 * 10})
			if err == nil || !tc.as(err) {
				t.Fatalf("error %v does not unwrap to the kernel's", err)
			}
			// The message counts the row in the tensor, not in the kernel call.
			if !strings.Contains(err.Error(), "row 217") {
				t.Errorf("error %q does not name row 217", err)
			}
		})
	}
}

// Refusals for want of importance data wrap quantize.ErrNeedsImatrix, whether
// the file type, a tensor's type or the kernel refuses, and name no flag:
// the command line adds the advice.
func TestNeedsImatrixErrors(t *testing.T) {
	m, im := openGolden(t)
	out := filepath.Join(t.TempDir(), "o.gguf")
	// The file type: llama-quantize refuses IQ2_XXS without an importance matrix.
	_, err := Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeIQ2_XXS}, Output: out})
	if !errors.Is(err, quantize.ErrNeedsImatrix) || !strings.Contains(err.Error(), "IQ2_XXS") {
		t.Errorf("IQ2_XXS without importance data: %v", err)
	}
	// A tensor: iq1_m by a rule, its entry left out of the importance matrix.
	rules, err := recipes.ParseCustomQ(`blk\.1\.ffn_down_exps=iq1_m`)
	if err != nil {
		t.Fatal(err)
	}
	im.Filter(nil, []string{"blk.1.ffn_down_exps.weight"})
	sel := recipes.Options{FileType: recipes.FileTypeQ4_K_M, Rules: rules}
	_, err = Build(m, Config{Selection: sel, Imatrix: im, ImatrixPath: "x.dat", Output: out})
	if !errors.Is(err, quantize.ErrNeedsImatrix) || !strings.Contains(err.Error(), "blk.1.ffn_down_exps.weight") {
		t.Errorf("iq1_m tensor without importance data: %v", err)
	}
	sel.IgnoreImatrixRules = true
	if _, err := Build(m, Config{Selection: sel, Imatrix: im, ImatrixPath: "x.dat", Output: out}); err != nil {
		t.Errorf("with IgnoreImatrixRules: %v", err)
	}
	// The kernel: iq2_xs does not run without importance weights.
	_, err = quantize.QuantizeRows(formats.IQ2_XS, 1, 256, make([]float32, 256), nil)
	if !errors.Is(err, quantize.ErrKernelNeedsImatrix) || !errors.Is(err, quantize.ErrNeedsImatrix) || strings.Contains(err.Error(), "--") {
		t.Errorf("iq2_xs kernel without importance weights: %v", err)
	}
	// The plan knows it before any work, also where the rules are ignored
	// (llama-quantize asserts when it reaches the tensor).
	if rules, err = recipes.ParseCustomQ(`blk\.1\.ffn_down_exps=iq2_xxs`); err != nil {
		t.Fatal(err)
	}
	sel = recipes.Options{FileType: recipes.FileTypeQ4_K_M, Rules: rules, IgnoreImatrixRules: true}
	_, err = Build(m, Config{Selection: sel, Imatrix: im, ImatrixPath: "x.dat", Output: out})
	if !errors.Is(err, quantize.ErrKernelNeedsImatrix) || !strings.Contains(err.Error(), "blk.1.ffn_down_exps.weight as iq2_xxs") {
		t.Errorf("iq2_xxs tensor without importance data, rules ignored: %v", err)
	}
	_, err = Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeIQ2_XXS, IgnoreImatrixRules: true}, Output: out})
	if !errors.Is(err, quantize.ErrKernelNeedsImatrix) {
		t.Errorf("IQ2_XXS without importance data, rules ignored: %v", err)
	}
}

// A quantized input is not quantized again unless asked; the error says
// which tensor and type, wraps ErrRequantize and names no flag.
func TestRequantizeRefused(t *testing.T) {
	m, err := gguf.Open(golden.Path(t, "e2e", "out-q4_k_m.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := Config{Selection: recipes.Options{FileType: recipes.FileTypeQ8_0}, Output: filepath.Join(t.TempDir(), "o.gguf")}
	_, err = Build(m, cfg)
	if !errors.Is(err, ErrRequantize) || !strings.HasPrefix(ErrRequantize.Error(), "pipeline: ") || strings.Contains(err.Error(), "--") {
		t.Errorf("requantizing q4_K_M: %v", err)
	}
	cfg.AllowRequantize = true
	if _, err := Build(m, cfg); err != nil {
		t.Errorf("with AllowRequantize: %v", err)
	}
}

// A tensor type with no kernel here (q8_k_r16, which only --custom-q
// reaches) fails the plan, naming the tensor and the type, before any work.
func TestUnsupportedTypeRefusedByPlan(t *testing.T) {
	m, err := gguf.Open(filepath.Join("..", "testdata", "tiny-deepseek2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rules, err := recipes.ParseCustomQ(`blk\.1\.ffn_down_exps=q8_k_r16`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Selection: recipes.Options{FileType: recipes.FileTypeQ8_0, Rules: rules}, Output: filepath.Join(t.TempDir(), "o.gguf")}
	_, err = Build(m, cfg)
	if !errors.Is(err, quantize.ErrUnsupported) || !strings.Contains(err.Error(), "tensor blk.1.ffn_down_exps.weight") {
		t.Errorf("q8_k_r16: %v", err)
	}
}

// The ARM repacks of q4_0 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) take no
// importance data: llama-quantize aborts in the kernel on the first tensor
// that has some, after writing the ones before it. The plan refuses first,
// naming the tensor and wrapping quantize.ErrImatrixRefused; without an
// importance matrix the same file types plan.
func TestImatrixRefusedByPlan(t *testing.T) {
	m, im := openGolden(t)
	out := filepath.Join(t.TempDir(), "o.gguf")
	for _, ft := range []recipes.FileType{recipes.FileTypeQ4_0_4_4, recipes.FileTypeQ4_0_4_8, recipes.FileTypeQ4_0_8_8} {
		_, err := Build(m, Config{Selection: recipes.Options{FileType: ft}, Imatrix: im, ImatrixPath: "x.dat", Output: out})
		if !errors.Is(err, quantize.ErrImatrixRefused) || !strings.Contains(err.Error(), "tensor blk.") || strings.Contains(err.Error(), "--") {
			t.Errorf("%s with importance data: %v", ft, err)
		}
		if _, err := Build(m, Config{Selection: recipes.Options{FileType: ft}, Output: out}); err != nil {
			t.Errorf("%s without importance data: %v", ft, err)
		}
	}
}

// An input that shrinks under a run (truncated, or being rewritten) stops
// it with ErrTruncated, naming the input file and the tensor (and the rows
// of a tensor quantized), whether the workers read it to quantize (Q8_0)
// or to copy it (BF16: every tensor copied).
func TestRunInputTruncated(t *testing.T) {
	for _, ft := range []recipes.FileType{recipes.FileTypeQ8_0, recipes.FileTypeBF16} {
		t.Run(ft.String(), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.gguf")
			data := copyModel(t, "../testdata/tiny-deepseek2-bf16.gguf", in)
			m, err := gguf.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			out := filepath.Join(dir, "o.gguf")
			plan, err := Build(m, Config{Selection: recipes.Options{FileType: ft}, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(in, int64(len(data))/2); err != nil {
				t.Fatal(err)
			}
			err = Run(context.Background(), m, plan.Outputs, Options{Threads: 2})
			if !errors.Is(err, gguf.ErrTruncated) || !strings.Contains(err.Error(), "from "+in+": ") || !strings.Contains(err.Error(), out+": tensor ") {
				t.Errorf("error %v, want ErrTruncated naming %s and the tensor", err, in)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output left: %v", err)
			}
		})
	}
}
