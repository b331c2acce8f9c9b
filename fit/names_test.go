package fit

import (
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/stdregex"
	"github.com/gquant/gquant/recipes"
)

// Tensor names outside [a-z0-9._] are written so that the rule reads the
// same in every recipe syntax: capitals were written as is (mainline
// llama.cpp lower-cases patterns, so the rule missed the tensor), white
// space broke --tensor-type-file, a comma the comma-joined --custom-q, '='
// the rule itself ("internal error" after measuring); blk.01 beside blk.1
// was merged with layer 1, and the "every layer" rule then matched both
// ("internal error: 2 fitted rules match").
func TestOddNames(t *testing.T) {
	names := []string{"Upper.Case.weight", "sp ace.weight", "tab\tname.weight", "com,ma.weight", "a=b.weight", "h#sh.weight",
		`back\sl.weight`, "x[1]*y?.weight", "d$ll^r.weight", "q\"uo'te.weight", "new\nline.weight", "ünï.weight",
		"blk.01.ffn_up.weight", "blk.1.ffn_up.weight", "blk.0.ffn_up.weight", "blk.99999999999.ffn_up.weight", "blk.2.Attn Q.weight"}
	var ts []Tensor
	var choice []formats.Type
	for i, n := range names {
		cls, layer := Classify(n)
		ts = append(ts, Tensor{Index: i, Name: n, Class: cls, Layer: layer, Device: "CPU", Quantized: true, Cands: []Candidate{{Type: formats.Q8_0, Bytes: 10}}})
		choice = append(choice, formats.Q8_0)
	}
	rules := compactRules(ts, choice, []string{"CPU"})
	var lines []string
	for _, r := range rules {
		lines = append(lines, r.String())
		if strings.ContainsAny(r.Pattern, " \t\n,=#ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Errorf("rule %s has a character some syntax cannot take", r)
		}
	}
	// Each name is matched by exactly one rule, as written and as mainline
	// llama.cpp reads it (lower-cased).
	for _, lower := range []bool{false, true} {
		for _, n := range names {
			hits := 0
			for _, r := range rules {
				p := r.Pattern
				if lower {
					p = strings.ToLower(p)
				}
				re, err := stdregex.Compile(p)
				if err != nil {
					t.Fatalf("rule %s: %v", r, err)
				}
				if ok, _ := re.MatchString(n); ok {
					hits++
				}
			}
			if hits != 1 {
				t.Errorf("%q (lower-cased patterns: %v) is matched by %d rules, want 1:\n%s", n, lower, hits, strings.Join(lines, "\n"))
			}
		}
	}
	// The rules parse as a recipe, one per line, and joined with commas
	// as a --custom-q, into as many rules.
	rs, err := recipes.ParseRecipe(strings.NewReader(strings.Join(lines, "\n")+"\n"), "r.txt")
	if err != nil || rs.Len() != len(rules) {
		t.Errorf("as a recipe: %d rules, %v; want %d", rs.Len(), err, len(rules))
	}
	cq, err := recipes.ParseCustomQ(strings.Join(lines, ","))
	if err != nil || cq.Len() != len(rules) {
		t.Errorf("as --custom-q: %d rules, %v; want %d", cq.Len(), err, len(rules))
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) != 1 {
			t.Errorf("%q is %d words in a --tensor-type-file", l, len(f))
		}
	}
}
