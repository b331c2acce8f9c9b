package mediumtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// mediumRun is one reference run of ../shared/models/medium/README.md, made
// in that folder as
//
//	llama-quantize [--imatrix medium.imatrix.dat] medium-bf16.gguf out-NAME.gguf TYPE 2
type mediumRun struct {
	name     string // the manifest is reference/out-NAME.manifest.json
	fileType string // TYPE
	imatrix  bool
}

var mediumRuns = []mediumRun{
	{"q4_k_m", "Q4_K_M", false},
	{"iq4_ks-imat", "IQ4_KS", true},
	{"iq3_xxs-imat", "IQ3_XXS", true},
	{"iq1_s-imat", "IQ1_S", true},
	{"iq2_kt-imat", "IQ2_KT", true},
}

// imatrixName is the importance matrix as the runs name it, relative to the
// medium folder; the reference records this name in quantize.imatrix.file.
const imatrixName = "medium.imatrix.dat"

// mediumKnownDiffs lists, per run, the tensors whose bytes still differ from
// the reference's; their name, type, shape and size must match all the same.
// Everything not listed must be identical, and a listed tensor that becomes
// identical fails the test until it is taken out of the table. Empty as of
// 5b75bd1: the last two (IQ3_XXS's blk.3.attn_q_a.weight, iq2_s with an
// imatrix, and IQ2_KT's blk.3.ffn_gate_shexp.weight, iq4_k) went with the
// kernel fixes of issue 15 (baf7660, 7aa31ef).
var mediumKnownDiffs = map[string][]string{}

// checkKnownDiffs turns what compareFile found in one run into errors: every
// problem, every differing tensor not in known (the run's entry of
// mediumKnownDiffs), and every tensor of known that no longer differs.
func checkKnownDiffs(run string, d *fileDiff, known []string) []string {
	var errs []string
	for _, p := range d.Problems {
		errs = append(errs, run+": "+p)
	}
	for _, name := range d.Differ {
		if !slices.Contains(known, name) {
			errs = append(errs, run+": tensor "+name+": bytes differ from the reference (sha256)")
		}
	}
	for _, name := range known {
		if !slices.Contains(d.Differ, name) && !slices.ContainsFunc(d.Problems, func(p string) bool {
			return strings.HasPrefix(p, "tensor "+name+":") || strings.HasPrefix(p, "tensor "+name+" ")
		}) {
			errs = append(errs, run+": tensor "+name+" is now identical to the reference: take it out of mediumKnownDiffs")
		}
	}
	return errs
}

// The manifests agree with the run table: output names, file types, the
// importance matrix name, and the tensors of mediumKnownDiffs.
func TestManifestsMatchRunTable(t *testing.T) {
	dir := mediumDir(t)
	runs := map[string]bool{}
	for _, r := range mediumRuns {
		runs[r.name] = true
		m, err := readManifest(filepath.Join(dir, "reference", "out-"+r.name+".manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if p := m.Files[0].Path; p != "out-"+r.name+".gguf" {
			t.Errorf("%s: the manifest describes %s", r.name, p)
		}
		ft, _, err := recipes.ParseFileType(r.fileType)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(m.KV["general.file_type"]); got != strconv.Itoa(int(ft)) {
			t.Errorf("%s: general.file_type %s, want %d (%s)", r.name, got, ft, r.fileType)
		}
		file, ok := m.KV["quantize.imatrix.file"]
		if ok != r.imatrix || (ok && string(file) != `"`+imatrixName+`"`) {
			t.Errorf("%s: quantize.imatrix.file %s, run with imatrix %v", r.name, file, r.imatrix)
		}
		for _, name := range mediumKnownDiffs[r.name] {
			if _, ok := m.Tensors[name]; !ok {
				t.Errorf("%s: mediumKnownDiffs names %s, which the run does not write", r.name, name)
			}
		}
	}
	for run := range mediumKnownDiffs {
		if !runs[run] {
			t.Errorf("mediumKnownDiffs names run %s, which is not in mediumRuns", run)
		}
	}
	all, _ := filepath.Glob(filepath.Join(dir, "reference", "*.manifest.json"))
	if len(all) != len(mediumRuns) {
		t.Errorf("%d manifests in reference/, %d runs in mediumRuns", len(all), len(mediumRuns))
	}
}

// The array digests of the tokenizer (copied unchanged from the vocabulary
// file into every output) are those of the manifests: checks arrayDigest,
// pyFloat and pyString on 32000 real strings, floats and integers.
func TestArrayDigestOfVocabulary(t *testing.T) {
	dir := mediumDir(t)
	vocab, err := gguf.Open(filepath.Join(dir, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	m, err := readManifest(filepath.Join(dir, "reference", "out-q4_k_m.manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"} {
		v, ok := vocab.Metadata.Lookup(key)
		if !ok {
			t.Fatalf("%s not in the vocabulary file", key)
		}
		if p := compareValue(v, m.KV[key]); p != "" {
			t.Errorf("%s: %s", key, p)
		}
	}
}

func TestPyFloat(t *testing.T) {
	// Python 3: [json.dumps(v) for v in ...], float32 values widened.
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {10000, "10000.0"}, {-1000, "-1000.0"},
		{float64(float32(1e-6)), "9.999999974752427e-07"}, {float64(float32(-1e-5)), "-9.999999747378752e-06"},
		{1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {1.5e-5, "1.5e-05"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
		{123456789012345678, "1.2345678901234568e+17"}, {-2.5, "-2.5"}, {0.1, "0.1"},
		{float64(float32(0.1)), "0.10000000149011612"}, {5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	} {
		if got := pyFloat(tc.f); got != tc.want {
			t.Errorf("pyFloat(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestPyString(t *testing.T) {
	// Python 3: json.dumps('a"b\\\n\r\t\b\f\x01 ~\x7fé\u2581😀')
	const want = `"a\"b\\\n\r\t\b\f\u0001 ~\u007f\u00e9\u2581\ud83d\ude00"`
	if got := pyString("a\"b\\\n\r\t\b\f\x01 ~\x7fé\u2581😀"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// describe writes the manifest of a GGUF file, for the tests of compareFile.
func describe(t *testing.T, path string) *manifest {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	model, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	m := &manifest{KV: map[string]json.RawMessage{}, Tensors: map[string]manifestTensor{}}
	f := manifestFile{NTensors: len(model.Tensors), Path: filepath.Base(path), Size: st.Size()}
	for _, kv := range model.Metadata {
		f.KVOrder = append(f.KVOrder, kv.Key)
		if kv.Value.Type() == gguf.TypeArray {
			d, _ := arrayDigest(kv.Value)
			b, _ := json.Marshal(manifestArray{ArrayType: uint32(kv.Value.ElemType()), N: kv.Value.Len(), SHA: d})
			m.KV[kv.Key] = b
		} else {
			s, _ := pyJSON(kv.Value)
			m.KV[kv.Key] = json.RawMessage(s)
		}
	}
	m.Files = []manifestFile{f}
	for i, tn := range model.Tensors {
		b := make([]byte, tn.Size)
		if _, err := model.TensorReader(i).ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		m.TensorOrder = append(m.TensorOrder, tn.Name)
		m.Tensors[tn.Name] = manifestTensor{NBytes: tn.Size, NE: tn.Shape, SHA256: hex.EncodeToString(sum[:]),
			Type: uint32(tn.Type), TypeName: tn.Type.String()}
	}
	return m
}

// compareFile finds each kind of difference and names what differs.
func TestCompareFileNamesEachDifference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out-small.gguf")
	md := gguf.Metadata{
		{Key: "general.architecture", Value: gguf.StringValue("deepseek2")},
		{Key: "general.file_type", Value: gguf.Uint32Value(15)},
		{Key: "deepseek2.rope.freq_base", Value: gguf.Float32Value(10000)},
		{Key: "deepseek2.expert_weights_norm", Value: gguf.BoolValue(true)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue([]string{"<unk>", "é", `"q"`})},
		{Key: "tokenizer.ggml.scores", Value: gguf.ArrayValue([]float32{0, -1.5, 1e-7})},
	}
	tensors := []gguf.TensorInfo{
		{Name: "blk.0.attn_norm.weight", Shape: []int64{32}, Type: formats.F32},
		{Name: "blk.1.ffn_up_exps.weight", Shape: []int64{32, 2, 2}, Type: formats.Q8_0},
	}
	w, err := gguf.Create(path, md, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range w.Tensors() {
		b := make([]byte, ti.Size)
		for i := range b {
			b[i] = byte(i * 7)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	d, err := compareFile(path, describe(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Problems) != 0 || len(d.Differ) != 0 {
		t.Fatalf("the file's own manifest: %+v", d)
	}
	for _, tc := range []struct {
		name   string
		change func(m *manifest)
		want   string // in the one problem reported, or the differing tensor
	}{
		{"size", func(m *manifest) { m.Files[0].Size++ }, "file size"},
		{"int", func(m *manifest) { m.KV["general.file_type"] = json.RawMessage("16") }, "metadata general.file_type: u32 15, want 16"},
		{"int-as-float", func(m *manifest) { m.KV["general.file_type"] = json.RawMessage("15.0") }, "general.file_type"},
		{"float", func(m *manifest) { m.KV["deepseek2.rope.freq_base"] = json.RawMessage("10000.5") }, "deepseek2.rope.freq_base"},
		{"bool", func(m *manifest) { m.KV["deepseek2.expert_weights_norm"] = json.RawMessage("false") }, "expert_weights_norm"},
		{"string", func(m *manifest) { m.KV["general.architecture"] = json.RawMessage(`"llama"`) }, `want "llama"`},
		{"array-digest", func(m *manifest) {
			m.KV["tokenizer.ggml.tokens"] = json.RawMessage(`{"array_type": 8, "n": 3, "sha": "0000000000000000"}`)
		}, "tokenizer.ggml.tokens: array"},
		{"array-type", func(m *manifest) {
			m.KV["tokenizer.ggml.scores"] = json.RawMessage(`{"array_type": 12, "n": 3, "sha": "0000000000000000"}`)
		}, "want 3 f64"},
		{"key-order", func(m *manifest) {
			o := m.Files[0].KVOrder
			o[1], o[2] = o[2], o[1]
		}, "metadata key order"},
		{"key-missing", func(m *manifest) {
			m.Files[0].KVOrder = append(m.Files[0].KVOrder, "general.name")
			m.KV["general.name"] = json.RawMessage(`"x"`)
		}, "metadata key general.name is missing"},
		{"key-extra", func(m *manifest) {
			m.Files[0].KVOrder = slices.Delete(m.Files[0].KVOrder, 3, 4)
			delete(m.KV, "deepseek2.expert_weights_norm")
		}, "deepseek2.expert_weights_norm is not in the reference"},
		{"tensor-order", func(m *manifest) { m.TensorOrder[0], m.TensorOrder[1] = m.TensorOrder[1], m.TensorOrder[0] }, "tensor order"},
		{"tensor-type", func(m *manifest) {
			x := m.Tensors["blk.1.ffn_up_exps.weight"]
			x.Type, x.TypeName = 12, "q4_K"
			m.Tensors["blk.1.ffn_up_exps.weight"] = x
		}, "tensor blk.1.ffn_up_exps.weight: type q8_0 (8), want q4_K (12)"},
		{"tensor-shape", func(m *manifest) {
			x := m.Tensors["blk.1.ffn_up_exps.weight"]
			x.NE = []int64{32, 4}
			m.Tensors["blk.1.ffn_up_exps.weight"] = x
		}, "shape [32 2 2], want [32 4]"},
		{"tensor-bytes", func(m *manifest) {
			x := m.Tensors["blk.0.attn_norm.weight"]
			x.SHA256 = strings.Repeat("0", 64)
			m.Tensors["blk.0.attn_norm.weight"] = x
		}, "blk.0.attn_norm.weight"},
	} {
		m := describe(t, path)
		tc.change(m)
		d, err := compareFile(path, m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		all := append(slices.Clone(d.Problems), d.Differ...)
		if len(all) != 1 || !strings.Contains(all[0], tc.want) {
			t.Errorf("%s: reported %q, want one report containing %q", tc.name, all, tc.want)
		}
	}
}

func TestCheckKnownDiffs(t *testing.T) {
	known := map[string][]string{"iq3_xxs-imat": {"blk.3.attn_q_a.weight"}}
	for _, tc := range []struct {
		run  string
		d    fileDiff
		want []string
	}{
		{"q4_k_m", fileDiff{}, nil},
		{"iq3_xxs-imat", fileDiff{Differ: []string{"blk.3.attn_q_a.weight"}}, nil},
		{"iq3_xxs-imat", fileDiff{}, []string{"now identical"}},
		{"iq3_xxs-imat", fileDiff{Differ: []string{"blk.3.attn_q_a.weight", "output.weight"}}, []string{"output.weight: bytes differ"}},
		{"iq3_xxs-imat", fileDiff{Problems: []string{"tensor blk.3.attn_q_a.weight: type q8_0 (8), want iq2_s (22)"}},
			[]string{"type q8_0"}},
		{"q4_k_m", fileDiff{Problems: []string{"metadata x: y"}}, []string{"q4_k_m: metadata x: y"}},
	} {
		got := checkKnownDiffs(tc.run, &tc.d, known[tc.run])
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s %+v: %q, want %q", tc.run, tc.d, got, tc.want)
		}
	}
}
