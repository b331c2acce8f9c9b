package fit

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// What the headers already tell is refused before anything is measured,
// with the real reason: a budget below the smallest choices, a tie across
// devices, a quantized input, and no candidate type for a tensor (said per
// type: interleaved types run on CPU devices only, token embeddings are
// never interleaved, iq1_s needs importance data, a fallback that is no
// candidate). They came after every measurement, and the no-candidate
// error blamed the row length whatever the cause. A --tie that ties
// nothing is warned of.
func TestEarlyErrors(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	quantized := filepath.Join(filepath.Dir(file), "..", "testdata", "golden", "e2e", "want.gguf")
	cases := []struct {
		name    string
		model   string // "" is the tiny model
		set     func(*Options)
		is      error
		says    []string
		warning string // the fit succeeds with this warning
	}{
		{name: "budget below the smallest choices", set: func(o *Options) { o.Budgets = mustBudgets(t, "CPU=1MiB") },
			is: ErrInfeasible, says: []string{"device CPU", "smallest choice", "1048576 available"}},
		{name: "budget below with reserves", set: func(o *Options) {
			o.Budgets = mustBudgets(t, "CPU=3MiB")
			o.Reserves = []Reserve{{Device: "CPU", Text: "2MiB", Bytes: 2 << 20}}
		}, is: ErrInfeasible, says: []string{"reserves 2097152 bytes"}},
		{name: "tie across devices", set: func(o *Options) {
			o.Placement = mustPlacement(t, "gate_exps=CPU", ".*=GPU")
			o.Budgets = mustBudgets(t, "CPU=10MiB,GPU=10MiB")
			o.Ties = [][]string{{"ffn_gate_exps", "ffn_up_exps"}}
		}, is: ErrTie, says: []string{"on CPU", "on GPU"}},
		// attn_k_b's rows of 128 take no q4_K (the reference writes q5_0),
		// attn_v_b's of 256 do: tied, both take q5_0, 24576 bytes more
		// than each at its smallest, which the check once summed (2488352
		// bytes) and so measured everything before failing.
		{name: "tied tensors above their own smallest", set: func(o *Options) {
			o.Types = typeNames("q4_K q5_0")
			o.Budgets = mustBudgets(t, "CPU=2500000")
			o.Ties = [][]string{{"attn_k_b", "attn_v_b"}}
		}, is: ErrInfeasible, says: []string{"device CPU", "needs 2512928 bytes", "2500000 available"}},
		// Pins the run cannot produce: measuring them failed in the
		// kernel, after the other tensors' measurements.
		{name: "pin gquant cannot quantize", set: func(o *Options) {
			o.Pins = mustCustomQ(t, "exps=q8_1")
			o.Budgets = mustBudgets(t, "CPU=20MiB")
		}, says: []string{"blk.1.ffn_gate_exps.weight: pinned to q8_1 by rule 1", "cannot quantize"}},
		{name: "pin needing importance data", set: func(o *Options) {
			o.Imatrix = nil
			o.Pins = mustCustomQ(t, "exps=iq2_xxs")
			o.Budgets = mustBudgets(t, "CPU=20MiB")
		}, says: []string{"pinned to iq2_xxs by rule 1", "needs importance data"}},
		{name: "quantized input", model: quantized, set: func(o *Options) { o.Imatrix = nil; o.Budgets = mustBudgets(t, "CPU=1MiB") },
			is: ErrQuantizedInput, says: []string{"already", "unquantized"}},
		{name: "interleaved off CPU", set: func(o *Options) {
			o.Types = typeNames("q4_k_r4")
			o.Pins = mustCustomQ(t, "token_embd=q8_0")
			o.Placement = mustPlacement(t, "exps=CPU", ".*=GPU")
			o.Budgets = mustBudgets(t, "CPU=10MiB,GPU=10MiB")
		}, says: []string{"q4_k_r4: row-interleaved", "CPU devices only"}},
		{name: "token embeddings never interleaved", set: func(o *Options) {
			o.Types = typeNames("q4_k_r4")
			o.Budgets = mustBudgets(t, "CPU=10MiB")
		}, says: []string{"token_embd.weight", "never interleaved"}},
		{name: "iq1_s without importance data", set: func(o *Options) {
			o.Imatrix = nil
			o.Types = typeNames("iq1_s")
			o.Budgets = mustBudgets(t, "CPU=10MiB")
		}, says: []string{"iq1_s: needs importance data"}},
		{name: "a tie that ties nothing", set: func(o *Options) {
			o.Budgets = mustBudgets(t, "CPU=10MiB")
			o.Ties = [][]string{{"foo", "bar"}}
		}, warning: "--tie foo,bar ties nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.model
			if path == "" {
				path = tinyPath()
			}
			in, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			opts := tinyOptions(in)
			opts.Measure.Cache = nil
			c.set(&opts)
			measured := 0
			opts.Measure.Progress = func(done, total int) { measured = done }
			var early []string // what Warn got, and after how many measurements
			if c.warning != "" {
				opts.Measure.Cache = nil
				opts.Warn = func(w string) { early = append(early, fmt.Sprintf("%s (after %d measurements)", w, measured)) }
			}
			res, err := Fit(in, opts)
			if c.warning != "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) {
					t.Errorf("warnings %q lack %q", res.Warnings, c.warning)
				}
				if len(early) != 1 || !strings.HasPrefix(early[0], c.warning) || !strings.HasSuffix(early[0], "(after 0 measurements)") || measured == 0 {
					t.Errorf("Warn got %q after a run of %d measurements, want %q once before any", early, measured, c.warning)
				}
				return
			}
			if err == nil || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("got %v, want %v", err, c.is)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v\ndoes not say %q", err, s)
				}
			}
			if measured > 0 {
				t.Errorf("refused after %d measurements, want before any", measured)
			}
		})
	}
}

func mustCustomQ(t testing.TB, s string) *recipes.RuleSet {
	t.Helper()
	rs, err := recipes.ParseCustomQ(s)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
