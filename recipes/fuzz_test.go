package recipes

import (
	"bytes"
	"errors"
	"testing"
)

var fuzzNames = []string{"token_embd.weight", "output.weight", "blk.0.attn_output.weight", "blk.10.ffn_down_exps.weight", "blk.1.attn_kv_b.weight", ""}

// checkRuleSet exercises a parsed set and its --custom-q round trip.
func checkRuleSet(t *testing.T, rs *RuleSet) {
	for _, n := range fuzzNames {
		for _, r := range rs.Rules {
			if start, end, ok, _ := r.Find(n); ok && (start < 0 || end < start || end > len(n)) {
				t.Fatalf("%s: match [%d,%d) outside %q", r, start, end, n)
			}
		}
		rs.Match(n)
	}
	if a, err := Analyze(rs, fuzzNames, NewBudget(0)); err == nil {
		_ = a.String()
	}
	line, err := rs.CustomQ()
	if err != nil {
		return // a regex with a comma cannot be written in one line
	}
	if rs.Len() == 0 {
		return // the empty string is one empty item, which the reference rejects
	}
	back, err := ParseCustomQ(line)
	if err != nil {
		t.Fatalf("%q does not parse back: %v", line, err)
	}
	if back.Len() != rs.Len() {
		t.Fatalf("%q: %d rules back, want %d", line, back.Len(), rs.Len())
	}
	for i := range back.Rules {
		if back.Rules[i].Pattern != rs.Rules[i].Pattern || back.Rules[i].Type != rs.Rules[i].Type {
			t.Fatalf("rule %d: %s back, want %s", i, back.Rules[i], rs.Rules[i])
		}
	}
}

func checkRuleError(t *testing.T, err error) {
	var re *RuleError
	if !errors.As(err, &re) {
		if errors.Is(err, ErrBadRule) || errors.Is(err, ErrBadRegex) || errors.Is(err, ErrBadType) {
			t.Fatalf("sentinel without a RuleError: %v", err)
		}
		return
	}
	if re.Error() == "" || re.Offset < -1 {
		t.Fatalf("bad RuleError %#v", re)
	}
}

func FuzzParseCustomQ(f *testing.F) {
	for _, s := range []string{
		`token_embd\.weight=q8_0,output\.weight=q6_K,blk\.0\..*=q8_0`,
		`blk\.[0-9]{1,3}\.ffn=q8_0`, `a=q8_0,`, `(ab=q8_0`, `^blk\.\d+\.attn_.*=iq4_xs_r8`,
		`a(?=b)=q8_0`, `=q4_0`, `x=Q4_K`, `[z-a]=q8_0`, `a**=q8_0`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseCustomQ(s)
		if err != nil {
			checkRuleError(t, err)
			return
		}
		checkRuleSet(t, rs)
	})
}

func FuzzParseRecipe(f *testing.F) {
	for _, s := range []string{
		"# c\ntoken_embd\\.weight=q8_0\n\n  blk\\.0\\..* = q8_0 \n",
		"a=q8_0,b=q4_0\n", "\uFEFFx=iq2_k_r4\r\n", "nonsense\n", "[=q8_0", "a=\n=b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseRecipe(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			checkRuleError(t, err)
			return
		}
		for _, r := range rs.Rules {
			if r.Line < 1 || r.Source != "fuzz.txt" {
				t.Fatalf("rule position %s", r.Where())
			}
		}
		checkRuleSet(t, rs)
	})
}

// FuzzParseTypeArgs: the file type argument (a name in any case or a
// number, as std::stoi reads it), --tensor-type and the --*-type options.
// An accepted file type or type option names itself back (a type option
// without a warning); an accepted --tensor-type is a
// rule set like --custom-q's; errors are RuleErrors where they are rules.
func FuzzParseTypeArgs(f *testing.F) {
	for _, s := range []string{"Q4_K_M", "q4_k", "15", " 7x", "-3", "COPY", "99999999999999999999", "attn_v=q8_0", `blk\.[0-9]+\.ffn=IQ4_XS`, "=q8_0", "x=", "f16", "bf16_r16"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ft, copyOnly, err := ParseFileType(s); err == nil && !copyOnly {
			back, _, err := ParseFileType(FileTypeArgName(s))
			if err != nil || back != ft {
				t.Fatalf("%q is %v, its name %q gives %v (%v)", s, ft, FileTypeArgName(s), back, err)
			}
		}
		rs, err := ParseTensorType(s, 1)
		if err != nil {
			checkRuleError(t, err)
		} else {
			checkRuleSet(t, rs)
		}
		if typ, _, err := ParseTypeOption("--attn-v-type", s); err == nil {
			back, warning, err := ParseTypeOption("--attn-v-type", typ.String())
			if err != nil || back != typ || warning != "" {
				t.Fatalf("%q is %v, whose own name %q gives %v, %q, %v", s, typ, typ.String(), back, warning, err)
			}
		}
	})
}
