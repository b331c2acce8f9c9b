package recipes

import (
	"errors"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
)

func TestParseFileType(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     FileType
		copyOnly bool
		errPart  string
		name     string // FileTypeArgName: llama-quantize's name for the argument
	}{
		{in: "Q4_K_M", want: FileTypeQ4_K_M, name: "Q4_K_M"},
		{in: "q4_k_m", want: FileTypeQ4_K_M, name: "Q4_K_M"},
		{in: "Q4_K", want: FileTypeQ4_K_M, name: "Q4_K"},
		{in: "q3_k", want: FileTypeQ3_K_M, name: "Q3_K"},
		{in: "iq2_k_r4", want: FileTypeIQ2_K_R4, name: "IQ2_K_R4"},
		{in: "15", want: FileTypeQ4_K_M, name: "Q4_K"},
		{in: "12", want: FileTypeQ3_K_M, name: "Q3_K"},
		{in: "17", want: FileTypeQ5_K_M, name: "Q5_K"},
		{in: "14", want: FileTypeQ4_K_S, name: "Q4_K_S"},
		{in: " 338", want: FileTypeIQ2_K_R4, name: "IQ2_K_R4"},
		{in: "0", want: FileTypeAllF32, name: "F32"},
		{in: "COPY", want: FileTypeAllF32, copyOnly: true, name: "COPY"},
		{in: "copy", want: FileTypeAllF32, copyOnly: true, name: "COPY"},
		{in: "Q4_K_X", errPart: "did you mean"},
		{in: "5", errPart: "no file type has number 5"},
		{in: "", errPart: "unknown file type"},
	} {
		got, copyOnly, err := ParseFileType(tc.in)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) || !errors.Is(err, ErrUnknownFileType) {
				t.Errorf("ParseFileType(%q) error %v, want one containing %q", tc.in, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want || copyOnly != tc.copyOnly {
			t.Errorf("ParseFileType(%q) = %s, %v, %v; want %s, %v", tc.in, got, copyOnly, err, tc.want, tc.copyOnly)
		}
		if name := FileTypeArgName(tc.in); name != tc.name {
			t.Errorf("FileTypeArgName(%q) = %s, want %s", tc.in, name, tc.name)
		}
	}
}

func TestFileTypeTable(t *testing.T) {
	for _, ft := range FileTypes() {
		back, _, err := ParseFileType(ft.String())
		if err != nil || back != ft {
			t.Errorf("%s does not parse back: %s %v", ft, back, err)
		}
		d, err := ft.DefaultType()
		if err != nil || !d.Known() {
			t.Errorf("%s: default type %v %v", ft, d, err)
		}
	}
	if len(FileTypes()) != 84 {
		t.Errorf("%d file types, the reference's default-type switch has 84", len(FileTypes()))
	}
	if _, err := FileType(4).DefaultType(); err == nil {
		t.Error("ftype 4 has no default type in the reference")
	}
	if got := RepackedFileType(FileTypeQ4_K_M); got != FileTypeQ4_K_R4 {
		t.Errorf("repacked Q4_K_M: %s", got)
	}
	if got := RepackedFileType(FileTypeIQ2_KS); got != FileTypeIQ2_KS {
		t.Errorf("repacked IQ2_KS: %s", got)
	}
	if !FileTypeQ2_K_S.RequiresImatrix() || FileTypeQ2_K.RequiresImatrix() {
		t.Error("RequiresImatrix")
	}
}

func TestParseCustomQ(t *testing.T) {
	rs, err := ParseCustomQ(`token_embd\.weight=q8_0,blk\.[0-9]+\.ffn_(up|gate)=iq4_ks,attn=Q6_K`)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 3 || rs.Rules[1].Type != formats.IQ4_KS || rs.Rules[2].Type != formats.Q6_K || rs.Rules[2].Line != 3 {
		t.Fatalf("rules %+v", rs.Rules)
	}
	if w := strings.Join(rs.Warnings, "\n"); !strings.Contains(w, `exact spelling "q6_K"`) {
		t.Errorf("no warning about the reference's case-sensitive type names: %q", w)
	}
	if r, _ := rs.Match("blk.12.ffn_gate_exps.weight"); r == nil || r.Index != 1 {
		t.Errorf("match: %v", r)
	}
	if r, _ := rs.Match("output_norm.weight"); r != nil {
		t.Errorf("match: %v", r)
	}

	for _, tc := range []struct {
		in       string
		sentinel error
		parts    []string
		offset   int
	}{
		{in: `blk\.[0-9]{1,3}\.ffn=q8_0`, sentinel: ErrBadRule, parts: []string{"item 1", "containing a comma", "{1,3}"}, offset: -1},
		{in: `a=q8_0,`, sentinel: ErrBadRule, parts: []string{"item 2", "trailing comma"}, offset: -1},
		{in: `a=q8_0,,b=q4_0`, sentinel: ErrBadRule, parts: []string{"item 2", "empty item"}, offset: -1},
		{in: `a=q9_0`, sentinel: ErrBadType, parts: []string{"item 1", "did you mean"}, offset: -1},
		{in: `a(?=b)=q8_0`, sentinel: ErrBadType, parts: []string{"first '='"}, offset: -1},
		{in: `ok=q8_0,(ab=q8_0`, sentinel: ErrBadRegex, parts: []string{"item 2", "(ab"}, offset: 0},
		{in: `ab(cd)(e=q8_0`, sentinel: ErrBadRegex, parts: []string{"regex offset 6"}, offset: 6},
		{in: `ab**=q8_0`, sentinel: ErrBadRegex, offset: 3},
		{in: `x\=q8_0`, sentinel: ErrBadRegex, offset: 1},
		// A long bad pattern is not searched for its offset (each prefix
		// was compiled: 35 s for 80,000 characters).
		{in: "(" + strings.Repeat("a", 80000) + "=q8_0", sentinel: ErrBadRegex, offset: -1},
	} {
		_, err := ParseCustomQ(tc.in)
		var re *RuleError
		if !errors.Is(err, tc.sentinel) || !errors.As(err, &re) {
			t.Errorf("ParseCustomQ(%q): %v, want %v", tc.in, err, tc.sentinel)
			continue
		}
		for _, p := range tc.parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("ParseCustomQ(%q): %q does not say %q", tc.in, err, p)
			}
		}
		if re.Offset != tc.offset {
			t.Errorf("ParseCustomQ(%q): offset %d, want %d (%v)", tc.in, re.Offset, tc.offset, err)
		}
	}
}

func TestParseRecipe(t *testing.T) {
	src := "\uFEFF# comment\n\n   token_embd\\.weight = q8_0  \n\t# indented comment\nblk\\.[0-9]{1,3}\\.ffn_down=iq4_xs\r\n"
	rs, err := ParseRecipe(strings.NewReader(src), "my.recipe")
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 2 || rs.Rules[0].Pattern != `token_embd\.weight` || rs.Rules[0].Line != 3 || rs.Rules[1].Line != 5 {
		t.Fatalf("rules %+v", rs.Rules)
	}
	if rs.Rules[1].Where() != "my.recipe:5" {
		t.Errorf("Where %q", rs.Rules[1].Where())
	}
	if w := strings.Join(rs.Warnings, "\n"); !strings.Contains(w, "my.recipe:5") || !strings.Contains(w, "comma") {
		t.Errorf("warnings %q", w)
	}
	if _, err := rs.CustomQ(); err == nil {
		t.Error("CustomQ should refuse a regex with a comma")
	}

	for _, tc := range []struct {
		src      string
		sentinel error
		parts    []string
	}{
		{"# c\nblk.0.ffn_up\n", ErrBadRule, []string{"f.txt:2", "regex=type"}},
		{"a=q8_0\nb=iq4_sx\n", ErrBadType, []string{"f.txt:2", "did you mean"}},
		{"a=q8_0,b=q4_0\n", ErrBadType, []string{"f.txt:1", "one rule per line"}},
		{"\n\n[a-=q8_0\n", ErrBadRegex, []string{"f.txt:3", "regex offset"}},
		// A binary file's "line": quoted only in part, with its length.
		{"GGUF\x03" + strings.Repeat("\x00x", 3000) + "\n", ErrBadRule, []string{"f.txt:1", "... (6005 bytes)"}},
	} {
		_, err := ParseRecipe(strings.NewReader(tc.src), "f.txt")
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%q: %v, want %v", tc.src, err, tc.sentinel)
			continue
		}
		for _, p := range tc.parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%q: %q does not say %q", tc.src, err, p)
			}
		}
		if len(err.Error()) > 1000 {
			t.Errorf("a message of %d bytes", len(err.Error()))
		}
	}
}

func TestAnalyzeHeuristics(t *testing.T) {
	rs, err := ParseCustomQ(`blk\.1\.=q8_0,blk\.1=q6_K,attn_k=q5_K,_exps=q4_K,nothing_here=q2_K`)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"blk.1.attn_k.weight", "blk.10.attn_k.weight", "blk.10.attn_kv_b.weight", "blk.2.ffn_up_exps.weight", "blk.3.ffn_down_exps.weight"}
	a, err := Analyze(rs, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	// blk\.1 matches blk.1. cleanly (shadowed there) and stops inside "10" elsewhere.
	if u := a.Rules[1].Unintended; len(u) != 2 || u[0].Name != "blk.10.attn_k.weight" || !u[0].Won {
		t.Errorf("rule 2 unintended: %+v", u)
	}
	if s := a.Rules[1].Suggestion; s != `blk\.1(?=[._]|$)` {
		t.Errorf("rule 2 suggestion %q", s)
	}
	// attn_k matches attn_k.weight cleanly but stops inside "attn_kv_b".
	if u := a.Rules[2].Unintended; len(u) != 1 || u[0].Name != "blk.10.attn_kv_b.weight" || u[0].Won {
		t.Errorf("rule 3 unintended: %+v", u)
	}
	// _exps starts with a separator: intended.
	if u := a.Rules[3].Unintended; len(u) != 0 || len(a.Rules[3].Won) != 2 {
		t.Errorf("rule 4: %+v", a.Rules[3])
	}
	if len(a.Unused) != 1 || a.Unused[0].Pattern != "nothing_here" {
		t.Errorf("unused %v", a.Unused)
	}
	if hasTopLevelAlternation(`a(b|c)[|]\|`) || !hasTopLevelAlternation(`a|b`) {
		t.Error("hasTopLevelAlternation")
	}
	if got := anchored(`output|input`, true, true, false); got != `^(?:output|input)$` {
		t.Errorf("anchored %q", got)
	}
}

func TestParseTypeOption(t *testing.T) {
	if ty, w, err := ParseTypeOption("--attn-v-type", "q8_0"); err != nil || ty != formats.Q8_0 || w != "" {
		t.Errorf("q8_0: %s %q %v", ty, w, err)
	}
	if ty, w, err := ParseTypeOption("--attn-v-type", "Q6_K"); err != nil || ty != formats.Q6_K || !strings.Contains(w, "silently ignore") {
		t.Errorf("Q6_K: %s %q %v", ty, w, err)
	}
	if _, _, err := ParseTypeOption("--attn-v-type", "q7_0"); err == nil || !strings.Contains(err.Error(), "--attn-v-type") {
		t.Errorf("q7_0: %v", err)
	}
}
