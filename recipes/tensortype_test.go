package recipes

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
)

// --tensor-type follows mainline llama.cpp: one rule per option, commas
// belong to the regex, the pattern is lower-cased, the type in any case.
func TestParseTensorType(t *testing.T) {
	for _, tc := range []struct {
		arg, pattern string
		typ          formats.Type
		match, miss  string
	}{
		{"attn_q=q8_0", "attn_q", formats.Q8_0, "blk.0.attn_q.weight", "blk.0.attn_k.weight"},
		{`blk\.[0-9]{1,2}\.ffn_down=Q6_K`, `blk\.[0-9]{1,2}\.ffn_down`, formats.Q6_K, "blk.12.ffn_down.weight", "blk.123.ffn_down.weight"},
		{`FFN_UP=iq4_xs`, `ffn_up`, formats.IQ4_XS, "blk.1.ffn_up.weight", "blk.1.ffn_gate.weight"},
		{`blk\.\D=q4_0`, `blk\.\d`, formats.Q4_0, "blk.7.x", "blk.x.y"}, // \D lower-cased is \d, as in mainline
	} {
		rs, err := ParseTensorType(tc.arg, 2)
		if err != nil {
			t.Fatalf("%q: %v", tc.arg, err)
		}
		r := rs.Rules[0]
		if len(rs.Rules) != 1 || r.Pattern != tc.pattern || r.Type != tc.typ || r.Where() != "--tensor-type item 2" {
			t.Errorf("%q: %d rules, %q=%s at %s", tc.arg, len(rs.Rules), r.Pattern, r.Type, r.Where())
		}
		if ok, _ := r.Match(tc.match); !ok {
			t.Errorf("%q does not match %s", tc.arg, tc.match)
		}
		if ok, _ := r.Match(tc.miss); ok {
			t.Errorf("%q matches %s", tc.arg, tc.miss)
		}
	}
	for _, bad := range []string{"attn_q", "=q8_0", "attn_q=", "attn_q=q9_9", "(=q8_0"} {
		if _, err := ParseTensorType(bad, 1); !errors.Is(err, ErrBadRule) && !errors.Is(err, ErrBadType) && !errors.Is(err, ErrBadRegex) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestLoadTensorTypeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "types.txt")
	if err := os.WriteFile(path, []byte("attn_q=q8_0 attn_k=q6_K\n\n  ffn_down_exps=IQ4_XS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadTensorTypeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 3 || rs.Rules[1].Pattern != "attn_k" || rs.Rules[2].Line != 3 || rs.Rules[2].Index != 2 {
		t.Errorf("rules %v", rs.Rules)
	}
	if err := os.WriteFile(path, []byte("attn_q=q8_0 bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTensorTypeFile(path); !errors.Is(err, ErrBadRule) {
		t.Errorf("a rule without '=': %v", err)
	}
}
