package stdregex

import (
	"errors"
	"testing"
)

// What std::regex (ECMAScript, libstdc++) matches, compared with
// llama-quantize on the same names: POSIX classes in brackets, unknown
// escapes as the letter, .NET-only groups refused.
func TestCompile(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		name    string
		match   bool
	}{
		{`[[:digit:]]\.attn_v`, "blk.3.attn_v.weight", true},
		{`[[:alpha:]]+_down`, "blk.0.ffn_down.weight", true},
		{`[^[:digit:]]\.attn`, "blk.3.attn_v.weight", false},
		{`blk\.[[:digit:][:space:]]+\.`, "blk.12.ffn_up.weight", true},
		{`[[:upper:]]`, "blk.0.ffn_up.weight", false},
		{`[[:punct:]]weight`, "blk.0.ffn_up.weight", true},
		{`\Aoutput`, "output.weight", false}, // \A is "A"
		{`\Aoutput`, "Aoutput.weight", true},
		{`\e`, "token_embd.weight", true}, // \e is "e"
		{`\d+\.ffn`, "blk.7.ffn_up.weight", true},
		{`\bffn`, "blk.7.ffn_up.weight", true},
		{`(?:attn|ffn)_up`, "blk.7.ffn_up.weight", true},
		{`ffn_(?!down)`, "blk.7.ffn_down.weight", false},
		{`\\`, `a\b`, true},
		{`[\A]`, "A", true},
		{`attn_\cq`, "blk.0.attn_q.weight", true}, // libstdc++: \cX is X
		{`ffn_(up){1}`, "blk.0.ffn_up.weight", true},
		{`l{1,}k`, "blk.0", true},
		{`(b)lk\.\d\.\1?`, "blk.0.", true},
		{`[[.a.]]ttn`, "attn_q", true},
		{`[[=a=]]ttn`, "attn_q", true},
		{`\x61ttn`, "attn_q", true},
		{`\u0061ttn`, "attn_q", true},
	} {
		re, err := Compile(tc.pattern)
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		if got, err := re.MatchString(tc.name); err != nil || got != tc.match {
			t.Errorf("%s on %s: %v %v, want %v", tc.pattern, tc.name, got, err, tc.match)
		}
	}
	// What std::regex refuses (llama-quantize stops), refused here too.
	for _, bad := range []string{`(?i)ATTN_Q`, `(?<n>attn)_k`, `(?<=blk)\.`, `[[:nope:]]`, `[[=ab=]]`,
		`blk{`, `x{y`, `{`, `a{,3}`, `a{ 1}`, `\x4`, `\u41`, `\p{L}`, `\1`, `(a)\2`, `[\1]`, `[\B]`, `[\d-z]`, `[\w-z]`, `\c`} {
		if _, err := Compile(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v, want ErrSyntax", bad, err)
		}
	}
}

func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`[[:digit:]]`, `\A\e`, `(?i)x`, `[\]]`, `\`, `[[:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Translate(s)
		if err == nil && out == "" && s != "" {
			t.Errorf("%q translated to nothing", s)
		}
	})
}
