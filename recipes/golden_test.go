package recipes

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// loggedTensor is one tensor as a reference llama-quantize log shows it.
type loggedTensor struct {
	gguf.TensorInfo
	want   formats.Type // type written to the output
	custom bool         // the log says "Using custom type"
}

// referenceLog is what the tests need from one log-*.txt.
type referenceLog struct {
	kv      map[string]string
	tensors []loggedTensor
}

var (
	logKVLine     = regexp.MustCompile(`^llama_model_loader: - kv\s+\d+:\s+(\S+)\s+\S+\s+= (.*)$`)
	logTensorLine = regexp.MustCompile(`^\[\s*\d+/\s*\d+\]\s+(\S+) - \[\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+)\], type =\s*(\S+), (.*)$`)
	logConverting = regexp.MustCompile(`converting to (\S+) \.\.`)
	logRepacked   = regexp.MustCompile(`size =\s*[0-9.]+ MB, type = (\S+)$`)
	logCustom     = regexp.MustCompile(`Using custom type (\S+) for tensor (\S+)`)
)

// parseReferenceLog reads a log. Output lines of one tensor can be split by
// interleaved stderr lines, so everything up to the next tensor header
// belongs to the current tensor.
func parseReferenceLog(t *testing.T, data []byte) referenceLog {
	t.Helper()
	out := referenceLog{kv: map[string]string{}}
	var cur *loggedTensor
	var segment strings.Builder
	finish := func() {
		if cur == nil {
			return
		}
		seg := segment.String()
		cur.want = cur.Type
		if m := logConverting.FindStringSubmatch(seg); m != nil {
			cur.want = mustType(t, m[1])
		} else if m := logRepacked.FindStringSubmatch(strings.SplitN(seg, "\n", 2)[0]); m != nil {
			cur.want = mustType(t, m[1])
		}
		if m := logCustom.FindStringSubmatch(seg); m != nil {
			if m[2] != cur.Name {
				t.Fatalf("log: custom type line for %s inside the entry of %s", m[2], cur.Name)
			}
			cur.custom = true
		}
		out.tensors = append(out.tensors, *cur)
		cur = nil
		segment.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := logKVLine.FindStringSubmatch(line); m != nil {
			out.kv[m[1]] = m[2]
			continue
		}
		if m := logTensorLine.FindStringSubmatch(line); m != nil {
			finish()
			var shape []int64
			for _, s := range m[2:6] {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				shape = append(shape, n)
			}
			cur = &loggedTensor{TensorInfo: gguf.TensorInfo{Name: m[1], Shape: shape, Type: mustType(t, m[6])}}
			segment.WriteString(m[7])
			segment.WriteByte('\n')
			continue
		}
		if strings.HasPrefix(line, "llama_model_quantize_internal: model size") {
			finish()
		}
		if cur != nil {
			segment.WriteString(line)
			segment.WriteByte('\n')
		}
	}
	finish()
	if len(out.tensors) == 0 {
		t.Fatal("log: no tensors found")
	}
	return out
}

func mustType(t *testing.T, name string) formats.Type {
	t.Helper()
	ty, err := formats.ParseType(name)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// modelFromKV builds Model from the metadata lines of a log.
func modelFromKV(t *testing.T, kv map[string]string) Model {
	t.Helper()
	arch := kv["general.architecture"]
	num := func(key string) int {
		v, ok := kv[key]
		if !ok {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("kv %s = %q: %v", key, v, err)
		}
		return n
	}
	m := Model{
		Arch:     arch,
		NLayer:   num(arch + ".block_count"),
		NExpert:  num(arch + ".expert_count"),
		NHead:    num(arch + ".attention.head_count"),
		NHeadKV:  num(arch + ".attention.head_count_kv"),
		NVocab:   num(arch + ".vocab_size"),
		FileType: FileType(num("general.file_type")),
	}
	if _, ok := kv[arch+".attention.head_count_kv"]; !ok {
		m.NHeadKV = m.NHead
	}
	m.Size = GuessModelSize(arch, m.NLayer, m.NVocab, m.NHead, m.NHeadKV, m.NExpert, num(arch+".embedding_length"))
	return m
}

// customFromCommands returns the one-line $custom string of COMMANDS.md.
func customFromCommands(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(string(golden.ReadFile(t, "e2e", "COMMANDS.md")), "\n") {
		if strings.HasPrefix(line, "`token_embd") && strings.HasSuffix(line, "`") {
			return strings.Trim(line, "`")
		}
	}
	t.Fatal("COMMANDS.md: no $custom line")
	return ""
}

// oneLine turns a recipe file into the --custom-q form the way COMMANDS.md
// describes: comment lines dropped, lines joined with commas.
func oneLine(recipe []byte) string {
	var parts []string
	for _, l := range strings.Split(string(recipe), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, ",")
}

func TestGoldenLogs(t *testing.T) {
	custom := customFromCommands(t)
	customIQ := oneLine(golden.ReadFile(t, "e2e", "recipe-iq.txt"))
	cases := []struct {
		log      string
		ftype    string
		pure     bool
		imatrix  bool
		customQ  string
		wantFile FileType
	}{
		{log: "log-pure.txt", ftype: "Q8_0", pure: true, wantFile: FileTypeQ8_0},
		{log: "log-q4km.txt", ftype: "Q4_K_M", wantFile: FileTypeQ4_K_M},
		{log: "log-iq2k.txt", ftype: "IQ2_K", imatrix: true, wantFile: FileTypeIQ2_K},
		{log: "log-iq4ks.txt", ftype: "IQ4_KS", imatrix: true, wantFile: FileTypeIQ4_KS},
		{log: "log-recipe.txt", ftype: "IQ2_K_R4", imatrix: true, customQ: custom, wantFile: FileTypeIQ2_K_R4},
		{log: "log-dry.txt", ftype: "IQ2_K_R4", imatrix: true, customQ: custom, wantFile: FileTypeIQ2_K_R4},
		// log-repack.txt (--repack) is repack.TestGoldenQ4KM's, byte for byte.
		{log: "log-iq2_xs-imat.txt", ftype: "IQ2_XS", imatrix: true, wantFile: FileTypeIQ2_XS},
		{log: "log-recipe-iq.txt", ftype: "IQ3_S", imatrix: true, customQ: customIQ, wantFile: FileTypeIQ3_S},
		{log: "log-keepsplit.txt", ftype: "IQ4_KS", imatrix: true, wantFile: FileTypeIQ4_KS},
	}
	for _, tc := range cases {
		t.Run(tc.log, func(t *testing.T) {
			ref := parseReferenceLog(t, golden.ReadFile(t, "e2e", tc.log))
			if len(ref.tensors) != 74 {
				t.Fatalf("parsed %d tensors, want 74", len(ref.tensors))
			}
			ft, copyOnly, err := ParseFileType(tc.ftype)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{FileType: ft, CopyOnly: copyOnly, Pure: tc.pure, HasImatrix: tc.imatrix}
			if tc.customQ != "" {
				if opts.Rules, err = ParseCustomQ(tc.customQ); err != nil {
					t.Fatal(err)
				}
			}
			tensors := make([]gguf.TensorInfo, len(ref.tensors))
			for i, lt := range ref.tensors {
				tensors[i] = lt.TensorInfo
			}
			plan, err := Select(opts, modelFromKV(t, ref.kv), tensors)
			if err != nil {
				t.Fatal(err)
			}
			if plan.FileType != tc.wantFile {
				t.Errorf("file type %s, want %s", plan.FileType, tc.wantFile)
			}
			for i, lt := range ref.tensors {
				c := plan.Choices[i]
				if c.Type != lt.want {
					t.Errorf("%s: got %s, reference %s (%s)", lt.Name, c.Type, lt.want, c)
				}
				if c.Quantize != (lt.want != lt.Type) {
					t.Errorf("%s: Quantize = %v, reference converts %s -> %s", lt.Name, c.Quantize, lt.Type, lt.want)
				}
				if gotCustom := c.Reason == ReasonCustomRule; gotCustom != lt.custom {
					t.Errorf("%s: custom rule decided = %v, reference log says %v (%s)", lt.Name, gotCustom, lt.custom, c)
				}
			}
			// Every run with very-low-bit types had importance data for them.
			for _, c := range plan.Choices {
				if c.NeedsImatrix && !tc.imatrix {
					t.Errorf("%s needs importance data, the reference ran without", c)
				}
			}
			if t.Failed() {
				for _, c := range plan.Choices {
					t.Log(c)
				}
			}
		})
	}
}

// The recipe run's second rule, output\.weight=q6_K, also wins every
// blk.N.attn_output.weight; the analysis must say so.
func TestGoldenRecipeAnalysis(t *testing.T) {
	rs, err := ParseRecipe(bytes.NewReader(golden.ReadFile(t, "e2e", "recipe.txt")), "recipe.txt")
	if err != nil {
		t.Fatal(err)
	}
	oneLineRules, err := ParseCustomQ(customFromCommands(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustCustomQ(t, rs), mustCustomQ(t, oneLineRules); got != want {
		t.Errorf("recipe.txt renders as\n%s\nCOMMANDS.md has\n%s", got, want)
	}
	ref := parseReferenceLog(t, golden.ReadFile(t, "e2e", "log-recipe.txt"))
	var names []string
	for _, lt := range ref.tensors {
		names = append(names, lt.Name)
	}
	a, err := Analyze(rs, names, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := a.Rules[1]
	if out.Rule.Pattern != `output\.weight` {
		t.Fatalf("rule 2 is %s", out.Rule)
	}
	var flagged []string
	for _, u := range out.Unintended {
		flagged = append(flagged, u.Name)
	}
	want := []string{"blk.0.attn_output.weight", "blk.1.attn_output.weight", "blk.2.attn_output.weight", "blk.3.attn_output.weight"}
	if strings.Join(flagged, " ") != strings.Join(want, " ") {
		t.Errorf("unintended matches of rule 2: %v, want %v", flagged, want)
	}
	if out.Suggestion != `^output\.weight$` {
		t.Errorf("suggestion %q", out.Suggestion)
	}
	if len(out.Won) != 5 {
		t.Errorf("rule 2 won %v, want output.weight and four attn_output", out.Won)
	}
	// blk\.0\..* and blk\.[1-3]\.attn_.* lose the attn_output tensors to it.
	if got := len(a.Rules[2].Shadowed); got != 1 {
		t.Errorf("rule 3 shadowed %d tensors, want 1: %v", got, a.Rules[2].Shadowed)
	}
	if got := len(a.Rules[5].Shadowed); got != 3 {
		t.Errorf("rule 6 shadowed %d tensors, want 3: %v", got, a.Rules[5].Shadowed)
	}
	report := a.String()
	if !strings.Contains(report, "attn_output.weight") || !strings.Contains(report, `^output\.weight$`) {
		t.Errorf("report does not point at the problem:\n%s", report)
	}
	t.Log("\n" + report)
}

func mustCustomQ(t *testing.T, rs *RuleSet) string {
	t.Helper()
	s, err := rs.CustomQ()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
