package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// inspectJSON runs `gquant inspect --json path` and decodes its output.
func inspectJSON(t *testing.T, path string) inspectReport {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"inspect", path, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("inspect %s: exit %d: %s", path, code, errb.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("inspect --json output is not JSON: %v", err)
	}
	return rep
}

// typesFromLog reads the type the reference gave each tensor from its log:
// the "converting to TYPE" line after the tensor's "[ i/ n] name" line;
// tensors without one were copied as f32.
func typesFromLog(t *testing.T, elem ...string) (names []string, types map[string]string) {
	t.Helper()
	f, err := os.Open(golden.Path(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tensorLine := regexp.MustCompile(`^\[\s*\d+/\s*\d+\]\s+(\S+) - `)
	converting := regexp.MustCompile(`converting to (\S+) \.\.`)
	types = map[string]string{}
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := tensorLine.FindStringSubmatch(sc.Text()); m != nil {
			cur = m[1]
			names = append(names, cur)
			types[cur] = "f32"
		} else if m := converting.FindStringSubmatch(sc.Text()); m != nil && cur != "" {
			types[cur] = m[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names, types
}

func TestInspectRecipeMatchesReferenceLog(t *testing.T) {
	names, types := typesFromLog(t, "e2e", "log-recipe.txt")
	if len(names) != 74 {
		t.Fatalf("log lists %d tensors", len(names))
	}
	check := func(t *testing.T, rep inspectReport, shards int) {
		if len(rep.Tensors) != 74 || len(rep.Shards) != shards {
			t.Fatalf("%d tensors in %d shards, want 74 in %d", len(rep.Tensors), len(rep.Shards), shards)
		}
		var bytes int64
		for i, tt := range rep.Tensors {
			if tt.Name != names[i] || tt.Type != types[tt.Name] {
				t.Errorf("tensor %d: %s %s, reference wrote %s %s", i+1, tt.Name, tt.Type, names[i], types[names[i]])
			}
			bytes += tt.Bytes
		}
		if bytes != rep.TensorBytes || rep.BitsPerWeight <= 0 {
			t.Errorf("total %d bytes, tensors add up to %d; %v bits per weight", rep.TensorBytes, bytes, rep.BitsPerWeight)
		}
		count := 0
		for _, c := range rep.Types {
			count += c.Tensors
		}
		if count != 74 {
			t.Errorf("type counts add up to %d", count)
		}
	}
	whole := inspectJSON(t, golden.Path(t, "e2e", "out-recipe.gguf"))
	check(t, whole, 1)
	for k := 1; k <= 3; k++ {
		shard := golden.Path(t, "e2e", "split", "out-recipe-0000"+string(rune('0'+k))+"-of-00003.gguf")
		rep := inspectJSON(t, shard)
		check(t, rep, 3)
		if rep.TensorBytes != whole.TensorBytes || rep.BitsPerWeight != whole.BitsPerWeight {
			t.Errorf("shard set: %d bytes, %v bpw; whole file: %d, %v", rep.TensorBytes, rep.BitsPerWeight, whole.TensorBytes, whole.BitsPerWeight)
		}
	}
}

func TestInspectSplitEqualsWhole(t *testing.T) {
	whole := inspectJSON(t, golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	for _, shard := range []string{"tiny-ds2-bf16-00001-of-00002.gguf", "tiny-ds2-bf16-00002-of-00002.gguf"} {
		split := inspectJSON(t, golden.Path(t, "e2e", "split", shard))
		if len(split.Tensors) != len(whole.Tensors) || len(split.Shards) != 2 {
			t.Fatalf("%s: %d tensors in %d shards", shard, len(split.Tensors), len(split.Shards))
		}
		for i, s := range split.Tensors {
			w := whole.Tensors[i]
			if s.Name != w.Name || s.Type != w.Type || s.Bytes != w.Bytes || !equalInts(s.Shape, w.Shape) {
				t.Errorf("tensor %d: %+v, whole file has %+v", i, s, w)
			}
			if want := 1 + btoi(i >= 40); s.Shard != want {
				t.Errorf("tensor %d in shard %d, want %d", i, s.Shard, want)
			}
		}
		if split.TensorBytes != whole.TensorBytes || split.Weights != whole.Weights {
			t.Errorf("totals differ: %d/%d bytes, %d/%d weights", split.TensorBytes, whole.TensorBytes, split.Weights, whole.Weights)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInspectText(t *testing.T) {
	path := golden.Path(t, "e2e", "split", "out-recipe-00003-of-00003.gguf")
	var out, errb bytes.Buffer
	if code := run([]string{"inspect", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{
		"GGUF v3, 74 tensors",
		"shards: 3",
		"general.architecture",
		`"deepseek2"`,
		"1e-06",
		"blk.3.ffn_down_exps.weight",
		"iq3_k_r4",
		"256 x 128 x 2",
		"bits per weight",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestInspectArrays checks that long arrays are summarized: type, length,
// first elements.
func TestInspectArrays(t *testing.T) {
	toks := make([]string, 1000)
	for i := range toks {
		toks[i] = "tok" + strings.Repeat("x", i%5)
	}
	md := gguf.Metadata{
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue(toks)},
		{Key: "tokenizer.ggml.scores", Value: gguf.ArrayValue([]float32{0.5, -1, 2})},
		{Key: "x.nan", Value: gguf.Float32Value(float32(nan()))},
	}
	path := filepath.Join(t.TempDir(), "arrays.gguf")
	w, err := gguf.Create(path, md, []gguf.TensorInfo{{Name: "w", Shape: []int64{32}, Type: formats.F32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 128))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := inspectJSON(t, path)
	tokens := rep.Metadata[0]
	if tokens.ElemType != "str" || tokens.Len == nil || *tokens.Len != 1000 || len(tokens.Head) != inspectArrayHead || tokens.Head[1] != "tokx" {
		t.Errorf("tokens summarized as %+v", tokens)
	}
	if rep.Metadata[2].Value != "NaN" {
		t.Errorf("NaN shown as %v", rep.Metadata[2].Value)
	}
	var out bytes.Buffer
	run([]string{"inspect", path}, &out, &out)
	if !strings.Contains(out.String(), `[str x 1000] ["tok", "tokx", `) || !strings.Contains(out.String(), `[f32 x 3] [0.5, -1, 2]`) {
		t.Errorf("text output:\n%s", out.String())
	}
}

// TestInspectNestedArrays checks that an array of arrays comes out as JSON
// arrays at every depth, every element of them with --full: an inner array
// was a text summary of its first 8 elements, so --full lost the rest.
func TestInspectNestedArrays(t *testing.T) {
	inner := make([]uint32, 10)
	for i := range inner {
		inner[i] = uint32(i)
	}
	md := gguf.Metadata{{Key: "x.nested", Value: gguf.ArrayValue([]gguf.Value{gguf.ArrayValue(inner), gguf.ArrayValue([]string{"a"})})}}
	path := filepath.Join(t.TempDir(), "nested.gguf")
	w, err := gguf.Create(path, md, []gguf.TensorInfo{{Name: "w", Shape: []int64{32}, Type: formats.F32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 128))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	type value struct {
		Type     string `json:"type"`
		ElemType string `json:"elem_type"`
		Len      int    `json:"len"`
		Head     []any  `json:"head"`
		Values   []any  `json:"values"`
	}
	for _, full := range []bool{false, true} {
		args := []string{"inspect", "--json", path}
		if full {
			args = append(args, "--full")
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		var doc struct {
			Metadata []struct {
				Head   []value `json:"head"`
				Values []value `json:"values"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%v: nested arrays are not JSON objects: %v\n%s", args, err, out.String())
		}
		outer := doc.Metadata[0].Head
		if full {
			outer = doc.Metadata[0].Values
		}
		if len(outer) != 2 {
			t.Fatalf("%v: outer elements %+v", args, outer)
		}
		first := outer[0]
		elems, want := first.Head, inspectArrayHead
		if full {
			elems, want = first.Values, 10
		}
		if first.Type != "arr" || first.ElemType != "u32" || first.Len != 10 || len(elems) != want || elems[want-1] != float64(want-1) {
			t.Errorf("%v: inner array %+v", args, first)
		}
		if s := outer[1]; s.ElemType != "str" || s.Len != 1 {
			t.Errorf("%v: inner array %+v", args, s)
		}
	}
	var out bytes.Buffer
	run([]string{"inspect", path}, &out, &out)
	if !strings.Contains(out.String(), `[arr x 2] [[u32 x 10: 0, 1, 2, 3, 4, 5, 6, 7, ...], [str x 1: "a"]]`) {
		t.Errorf("text output:\n%s", out.String())
	}
}

// TestInspectTextCutsWholeCharacters: long strings are cut in the text
// output at a character boundary; cut inside a UTF-8 sequence, the rest of
// the character showed as \x escapes.
func TestInspectTextCutsWholeCharacters(t *testing.T) {
	md := gguf.Metadata{
		{Key: "x.long", Value: gguf.StringValue("a" + strings.Repeat("é", 100))},
		{Key: "x.tokens", Value: gguf.ArrayValue([]string{strings.Repeat("文", 20)})},
	}
	path := filepath.Join(t.TempDir(), "utf8.gguf")
	w, err := gguf.Create(path, md, []gguf.TensorInfo{{Name: "w", Shape: []int64{32}, Type: formats.F32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 128))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	run([]string{"inspect", path}, &out, &out)
	for _, want := range []string{
		`"a` + strings.Repeat("é", 59) + `"... (201 bytes)`,
		`[str x 1] ["` + strings.Repeat("文", 10) + `..."]`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}

func nan() float64 { var z float64; return z / z }

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("not a gguf file at all"), 0o644)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect"}, 2, "usage"},
		{[]string{"inspect", bad}, 1, bad},
		{[]string{"inspect", filepath.Join(dir, "missing.gguf")}, 1, "missing.gguf"},
		{[]string{"inspect", "--nope", bad}, 2, "nope"},
	} {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != tt.code || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, errb.String(), tt.code, tt.want)
		}
	}
}

// Names from the file are escaped in the text output, newlines and tabs as
// well as the other control characters and bytes that are not UTF-8, so
// that a name with a newline cannot start a false row of the tensor table
// or shift its columns.
func TestInspectTextEscapesNames(t *testing.T) {
	names := []string{"blk.0.ok.weight", "line\nbreak.weight", "tab\there.weight", "bad\xffutf8.weight", "esc\x1b[2Jape.weight", "bell\a.weight"}
	var infos []gguf.TensorInfo
	for _, n := range names {
		infos = append(infos, gguf.TensorInfo{Name: n, Shape: []int64{32}, Type: formats.F32})
	}
	md := gguf.Metadata{
		{Key: "general.architecture", Value: gguf.StringValue("llama")},
		{Key: "odd\nkey\tname", Value: gguf.StringValue("two\nlines")},
	}
	path := filepath.Join(t.TempDir(), "odd.gguf")
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 32*4*len(names)))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"inspect", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	for _, want := range []string{`line\x0abreak.weight`, `tab\x09here.weight`, `bad\xffutf8.weight`, `esc\x1b[2Jape.weight`, `bell\x07.weight`, `odd\x0akey\x09name`, `"two\nlines"`} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// The tensor table: a header and one row per tensor, all as wide.
	_, table, _ := strings.Cut(text, fmt.Sprintf("\ntensors: %d\n", len(names)))
	table, _, _ = strings.Cut(table, "\n\ntypes:")
	rows := strings.Split(table, "\n")
	if len(rows) != len(names)+1 {
		t.Fatalf("tensor table of %d rows for %d tensors:\n%s", len(rows), len(names), table)
	}
	for _, r := range rows[1:] {
		if len(r) != len(rows[0]) {
			t.Errorf("row %q is not as wide as the header %q", r, rows[0])
		}
	}
}
