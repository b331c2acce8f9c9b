package recipes

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

var budgetTensors = []gguf.TensorInfo{
	{Name: "token_embd.weight", Shape: []int64{256, 32}, Type: formats.BF16},
	{Name: "blk.0.attn_q.weight", Shape: []int64{256, 256}, Type: formats.BF16},
	{Name: "blk.0.ffn_down_shexp.weight", Shape: []int64{256, 256}, Type: formats.BF16},
	{Name: "output.weight", Shape: []int64{256, 32}, Type: formats.BF16},
}

// A regex search that times out is an error naming the rule and the
// tensor, never "no match" (issue 16, item 6: the tensors got other types).
func TestMatchTimeoutIsAnError(t *testing.T) {
	for _, rule := range []string{`(.*.*)*X=q8_0`, `(?!\w*(?:exps|norm))(\w*\w*)*X|shexp=q8_0`} {
		rs, err := ParseCustomQ(rule)
		if err != nil {
			t.Fatal(err)
		}
		rs.SetMatchTimeout(time.Millisecond)
		names := []string{"blk.0.ffn_down_shexp.weight.and.a.much.longer.name.to.backtrack.over"}
		_, err = Select(Options{FileType: FileTypeQ8_0, Rules: rs}, Model{Arch: "llama"},
			[]gguf.TensorInfo{{Name: names[0] + ".weight", Shape: []int64{256, 256}, Type: formats.BF16}})
		var me *MatchError
		if !errors.As(err, &me) || !errors.Is(err, ErrMatchTimeout) {
			t.Fatalf("%s: error %v, want a *MatchError wrapping ErrMatchTimeout", rule, err)
		}
		if !strings.Contains(err.Error(), "--custom-q item 1") || !strings.Contains(err.Error(), names[0]) {
			t.Errorf("%q does not name the rule and the tensor", err)
		}
		if _, err := rs.Match(names[0]); !errors.Is(err, ErrMatchTimeout) {
			t.Errorf("RuleSet.Match: %v", err)
		}
		if _, err := Analyze(rs, names, nil); !errors.Is(err, ErrMatchTimeout) {
			t.Errorf("Analyze: %v", err)
		}
	}
}

// All the searches of a plan share one budget: once it is spent the plan
// stops with an error naming the rule and tensor it stopped at.
func TestRuleBudget(t *testing.T) {
	rs, err := ParseCustomQ(`nothing=q8_0,nope=q4_0`)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(0, 0)
	b := NewBudget(10 * time.Second)
	b.now = func() time.Time { clock = clock.Add(time.Second); return clock } // each search "takes" 1 s
	var stopped error
	searched := 0
	for _, tn := range budgetTensors {
		for range 3 {
			if _, stopped = b.Match(rs, tn.Name); stopped != nil {
				break
			}
			searched += 2
		}
		if stopped != nil {
			break
		}
	}
	if !errors.Is(stopped, ErrRuleBudget) {
		t.Fatalf("after %d searches of 1 s: %v, want ErrRuleBudget", searched, stopped)
	}
	if searched != 10 {
		t.Errorf("stopped after %d searches, want 10", searched)
	}
	var me *MatchError
	if !errors.As(stopped, &me) || me.Tensor == "" || !strings.Contains(me.Rule, "--custom-q item") {
		t.Errorf("%v does not name the rule and the tensor", stopped)
	}
	// The budget of Select is an option.
	rs, _ = ParseCustomQ(`nothing=q8_0`)
	_, err = Select(Options{FileType: FileTypeQ8_0, Rules: rs, RuleBudget: time.Nanosecond}, Model{Arch: "llama"}, budgetTensors)
	if !errors.Is(err, ErrRuleBudget) {
		t.Errorf("Select with a 1 ns budget: %v", err)
	}
}
