package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// onlyShardsCases are the golden runs of issue 22's "done means": a plain
// file type, an i-quant with an importance matrix and a recipe, each split
// into three shards or more.
var onlyShardsCases = []struct {
	name, golden, split string
	want                []string // golden shards the union must equal, if any
}{
	{"plain type", "pure-q8_0", "1500K", nil},
	{"imatrix IQ type", "iq4_ks-imat", "1M", nil},
	{"recipe", "recipe", "2M", []string{"split/out-recipe-00001-of-00003.gguf", "split/out-recipe-00002-of-00003.gguf", "split/out-recipe-00003-of-00003.gguf"}},
}

// TestOnlyShards runs parts 1/3, 2/3 and 3/3 of each case: their union is
// the one-process run, byte for byte, sidecars included (and, for the
// recipe, the reference's shards); gquant verify passes it with and
// without the quantize arguments.
func TestOnlyShards(t *testing.T) {
	chdirE2E(t)
	tmp := t.TempDir()
	for _, tc := range onlyShardsCases {
		t.Run(tc.name, func(t *testing.T) {
			one, parts := filepath.Join(tmp, tc.golden, "one"), filepath.Join(tmp, tc.golden, "parts")
			os.MkdirAll(one, 0o755)
			os.MkdirAll(parts, 0o755)
			args := func(dir string) []string {
				run, _ := e2eArgs(t, tc.golden, filepath.Join(dir, "out"))
				return append([]string{"--split-max-size", tc.split}, run...)
			}
			mustGquant(t, append([]string{"quantize"}, args(one)...)...)
			for _, k := range []string{"1/3", "2/3", "3/3"} {
				_, _, stderr := runGquant(append([]string{"quantize", "--only-shards", k}, args(parts)...)...)
				if !strings.Contains(stderr, "--only-shards "+k+": ") {
					t.Errorf("part %s: no summary line in:\n%s", k, stderr)
				}
			}
			want, got := readDir(t, one), readDir(t, parts)
			if len(want) < 6 {
				t.Fatalf("one run wrote %d files, want 3 shards or more and their sidecars", len(want))
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Fatalf("the parts wrote %v, one run %v", keys(got), keys(want))
			}
			for name, b := range want {
				if string(got[name]) != string(b) {
					t.Errorf("%s: the parts' file differs from one run's", name)
				}
			}
			for i, g := range tc.want {
				sameFileBytes(t, filepath.Join(parts, strings.Replace(filepath.Base(g), "out-recipe", "out", 1)), golden.Path(t, "e2e", tc.want[i]))
			}
			shard := filepath.Join(parts, keys(got)[0])
			for _, v := range [][]string{{"verify", shard}, append([]string{"verify"}, args(parts)...)} {
				code, stdout, stderr := runGquant(v...)
				if code != 0 || !strings.Contains(stdout, "ok: ") {
					t.Errorf("gquant %s: status %d\n%s%s", strings.Join(v, " "), code, stdout, stderr)
				}
			}
		})
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The flags' errors, plan --shards in text and JSON, and verify's exit
// statuses, on the tiny model of testdata.
func TestShardFlags(t *testing.T) {
	const model = "../../testdata/tiny-deepseek2-bf16.gguf"
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"quantize", "--only-shards", "0", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "not a shard number"},
		{[]string{"quantize", "--only-shards", "4/3", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "the part K must be from 1 to N"},
		{[]string{"quantize", "--only-shards", "9", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "shard 9 selected, the plan has 5 output file(s)"},
		{[]string{"quantize", "--shards", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "--shards lists the plan's shards: it needs --dry-run"},
		{[]string{"plan", "--parts", "3", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "it needs --shards"},
		{[]string{"plan", "--shards", "--parts", "0", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "the number of parts is 1 or more"},
		{[]string{"verify"}, 2, "need the file"},
		{[]string{"verify", "--imatrix", "x.dat", out + ".gguf"}, 2, "--imatrix describe a quantize run"},
		{[]string{"verify", "--repack", model, out, "Q4_0_R8"}, 2, "--repack writes no plan"},
		{[]string{"verify", out + "-00001-of-00005.gguf"}, 1, "FAILED: 5 problem(s)"},
		{[]string{"quantize", "--only-shards", "7/7", "--split-max-size", "1M", model, out, "Q8_0"}, 0, "--only-shards 7/7: no shard to write (the plan has 5 shard(s)"},
		{[]string{"plan", "--shards", "--only-shards", "2/3", "--parts", "4", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "--parts 4 and --only-shards 2/3"},
		{[]string{"quantize", "--only-shards", "9223372036854775807", "--split-max-size", "1M", model, out, "Q8_0"}, 2, "a shard set has at most 65535 files"},
		// A billion parts: one line for those past the shards (it ran out
		// of memory building a line for each).
		{[]string{"plan", "--shards", "--summary", "--parts", "1000000000", "--split-max-size", "1M", model, out, "Q8_0"}, 0, "6/1000000000 to 1000000000/1000000000: no shards (more parts than shards)"},
	} {
		code, stdout, stderr := runGquant(tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("gquant %s: status %d, want %d with %q:\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.want, stdout, stderr)
		}
	}
	if files, _ := filepath.Glob(out + "*"); len(files) > 0 {
		t.Errorf("wrote %v", files)
	}

	text := mustGquant(t, "plan", "--shards", "--parts", "3", "--split-max-size", "1M", model, out, "Q8_0", "4")
	for _, want := range []string{"shards (work: estimated time of one thread of ", "1 token_embd.weight (q8_0)", "2 blk.0.attn_norm.weight (copied)",
		"parts of --only-shards K/3", "  1/3  shard", "  3/3  shard", "on 4 threads"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan --shards lacks %q:\n%s", want, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("plan --shards: a line ends in spaces: %q", line)
		}
	}
	var doc struct {
		Schema string `json:"schema"`
		Parts  int    `json:"parts"`
		Shards []struct {
			Index, Part int
			Written     bool
			Work        float64 `json:"work_seconds"`
			InputBytes  int64   `json:"input_bytes"`
			Tensors     []struct{ Index int }
		} `json:"shards"`
		Tensors []json.RawMessage `json:"tensors"`
	}
	js := mustGquant(t, "plan", "--shards", "--json", "--only-shards", "2/3", "--split-max-size", "1M", model, out, "Q8_0")
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "gquant.plan/1" || doc.Parts != 3 || len(doc.Shards) != 5 {
		t.Fatalf("plan --shards --json: schema %q, parts %d, %d shards:\n%s", doc.Schema, doc.Parts, len(doc.Shards), js)
	}
	next, tensors := 1, 0
	for _, s := range doc.Shards {
		if s.Work <= 0 || s.InputBytes <= 0 || s.Written != (s.Part == 2) {
			t.Errorf("shard %d: work %v, input %d, written %v in part %d", s.Index, s.Work, s.InputBytes, s.Written, s.Part)
		}
		for _, tt := range s.Tensors {
			if tt.Index != next {
				t.Errorf("shard %d: tensor %d, want %d", s.Index, tt.Index, next)
			}
			next++
		}
		tensors += len(s.Tensors)
	}
	if tensors != len(doc.Tensors) {
		t.Errorf("the shards list %d tensors, the plan %d", tensors, len(doc.Tensors))
	}

	// verify --json of a set with a part missing.
	mustGquant(t, "quantize", "--only-shards", "1/2", "--split-max-size", "1M", model, out, "Q8_0")
	code, js, stderr := runGquant("verify", "--json", "--split-max-size", "1M", model, out, "Q8_0")
	var v struct {
		Schema string
		OK     bool
		Plan   bool
		Count  int
		Files  []struct {
			Present bool
			Header  string
			Sidecar string
		}
	}
	if err := json.Unmarshal([]byte(js), &v); err != nil || code != 1 {
		t.Fatalf("verify --json: status %d, %v:\n%s%s", code, err, js, stderr)
	}
	present := 0
	for _, f := range v.Files {
		if f.Present {
			present++
			if f.Header != "ok" || f.Sidecar != "ok" {
				t.Errorf("a file of part 1: header %q, sidecar %q", f.Header, f.Sidecar)
			}
		}
	}
	if v.Schema != "gquant.verify/1" || v.OK || !v.Plan || v.Count != 5 || present == 0 || present == 5 {
		t.Errorf("verify --json: %+v", v)
	}
}

// With --keep-split the outputs are one shard per input shard, and
// --only-shards picks among them: shard 2 alone is the reference's.
func TestOnlyShardsKeepSplit(t *testing.T) {
	chdirE2E(t)
	dir := t.TempDir()
	run, outputs := e2eArgs(t, "keep-split", filepath.Join(dir, "out.gguf"))
	_, _, stderr := runGquant(append([]string{"quantize", "--only-shards", "2"}, run...)...)
	if !strings.Contains(stderr, "--only-shards 2: 1 of 2 shard(s)") {
		t.Errorf("no summary line in:\n%s", stderr)
	}
	sameFileBytes(t, filepath.Join(dir, "out-00002-of-00002.gguf"), golden.Path(t, "e2e", outputs[1]))
	if got := keys(readDir(t, dir)); !slices.Equal(got, []string{"out-00002-of-00002.gguf", "out-00002-of-00002.gguf.gquant.json"}) {
		t.Errorf("wrote %v", got)
	}
}

// verify --inputs re-hashes the input tensors against the sidecars: a set
// made from a copy of the model whose data differs fails, where the plain
// check (the same headers, bytes as recorded) passes; without the quantize
// command line it is a usage error.
func TestVerifyInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	mustGquant(t, "quantize", "--split-max-tensors", "30", tinyModel, out, "Q8_0")
	if code, stdout, stderr := runGquant("verify", "--inputs", "--split-max-tensors", "30", tinyModel, out, "Q8_0"); code != 0 || !strings.Contains(stdout, "input tensors as recorded") {
		t.Errorf("the set's own input: status %d\n%s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1000] ^= 1 // a tensor's data, the header as it was
	other := filepath.Join(dir, "other.gguf")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mustGquant(t, "verify", "--split-max-tensors", "30", other, out, "Q8_0")
	if code, stdout, stderr := runGquant("verify", "--inputs", "--split-max-tensors", "30", other, out, "Q8_0"); code != 1 || !strings.Contains(stdout, "was made from other input data") {
		t.Errorf("another input: status %d\n%s%s", code, stdout, stderr)
	}
	// Without sidecars nothing of the input is checked, and the report says so.
	sidecars, _ := filepath.Glob(out + "-*.gquant.json")
	for _, p := range sidecars {
		os.Remove(p)
	}
	if code, stdout, _ := runGquant("verify", "--inputs", "--split-max-tensors", "30", tinyModel, out, "Q8_0"); !strings.Contains(stdout, "nor the input tensors (--inputs) are checked") {
		t.Errorf("--inputs without sidecars: status %d\n%s", code, stdout)
	}
	if code, _, stderr := runGquant("verify", "--inputs", out+"-00001-of-00003.gguf"); code != 2 || !strings.Contains(stderr, "give its whole quantize command line") {
		t.Errorf("--inputs without a plan: status %d\n%s", code, stderr)
	}
}
