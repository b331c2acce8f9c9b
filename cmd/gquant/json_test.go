package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// jsonDoc runs a command that prints one JSON document and decodes it,
// checking what every document has: exit 0, nothing on stderr, the schema
// named, a warnings array.
func jsonDoc(t *testing.T, schema string, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := runStreams(args...)
	if code != 0 || stderr != "" {
		t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%q: stdout is not one JSON document: %v\n%s", args, err, stdout)
	}
	if doc["schema"] != schema {
		t.Errorf("%q: schema %v, want %s", args, doc["schema"], schema)
	}
	if _, ok := doc["warnings"].([]any); !ok {
		t.Errorf("%q: no warnings array: %v", args, doc["warnings"])
	}
	return doc
}

// index returns the "index" of element i of the array at key.
func index(t *testing.T, doc map[string]any, key string, i int) float64 {
	t.Helper()
	arr, ok := doc[key].([]any)
	if !ok || i >= len(arr) {
		t.Fatalf("%s: no element %d", key, i)
	}
	return arr[i].(map[string]any)["index"].(float64)
}

func TestJSONDocuments(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	q4km := golden.Path(t, "e2e", "out-q4_k_m.gguf")
	dir := t.TempDir()

	doc := jsonDoc(t, "gquant.inspect/1", "inspect", "--json", model)
	if index(t, doc, "tensors", 0) != 1 || index(t, doc, "tensors", 73) != 74 || index(t, doc, "shards", 0) != 1 {
		t.Error("inspect: tensors and shards are not numbered from 1")
	}
	full := jsonDoc(t, "gquant.inspect/1", "inspect", "--json", "--full", model)
	for _, kv := range full["metadata"].([]any) {
		m := kv.(map[string]any)
		if m["len"] != nil && m["len"].(float64) > 8 && len(m["values"].([]any)) != int(m["len"].(float64)) {
			t.Errorf("--full: %s has %d of %v values", m["key"], len(m["values"].([]any)), m["len"])
		}
	}
	if code, _, stderr := runStreams("inspect", "--full", model); code != 2 || !strings.Contains(stderr, "--full lists whole arrays in the JSON document: it needs --json") {
		t.Errorf("--full without --json: exit %d, %q", code, stderr)
	}

	prefix := filepath.Join(dir, "s", "part")
	doc = jsonDoc(t, "gquant.split/1", "split", "--json", "--dry-run", "--split-max-tensors", "40", model, prefix)
	if doc["written"] != false || len(doc["shards"].([]any)) != 2 || index(t, doc, "shards", 1) != 2 || doc["tensors"].(float64) != 74 {
		t.Errorf("split --dry-run: %v", doc)
	}
	doc = jsonDoc(t, "gquant.split/1", "split", "--json", "--split-max-tensors", "40", model, prefix)
	shard1 := prefix + "-00001-of-00002.gguf"
	if doc["written"] != true || doc["shards"].([]any)[0].(map[string]any)["path"] != shard1 {
		t.Errorf("split: %v", doc)
	}
	merged := filepath.Join(dir, "merged.gguf")
	doc = jsonDoc(t, "gquant.merge/1", "merge", "--json", shard1, merged)
	if st, _ := os.Stat(merged); doc["written"] != true || st == nil || int64(doc["bytes"].(float64)) != st.Size() || len(doc["shards"].([]any)) != 2 {
		t.Errorf("merge: %v", doc)
	}
	sameFileBytes(t, merged, model)

	repacked := filepath.Join(dir, "r.gguf")
	doc = jsonDoc(t, "gquant.repack/1", "repack", "--json", "--dry-run", q4km, repacked)
	ft := doc["file_type"].(map[string]any)
	if doc["written"] != false || ft["from"] != "Q4_K_M" || ft["to"] != "Q4_K_R4" || index(t, doc, "tensors", 0) != 1 || doc["converted"].(float64) == 0 {
		t.Errorf("repack --dry-run: %v", doc)
	}
	if _, err := os.Stat(repacked); err == nil {
		t.Error("repack --dry-run wrote the output")
	}
	doc = jsonDoc(t, "gquant.repack/1", "repack", "--json", q4km, repacked)
	if doc["written"] != true || doc["outputs"].([]any)[0].(map[string]any)["tensors"].(float64) != 74 {
		t.Errorf("repack: %v", doc)
	}
	sameFileBytes(t, repacked, golden.Path(t, "e2e", "out-q4_k_m-repacked.gguf"))

	// plan: warnings are objects with kind and tensor.
	code, stdout, _ := runStreams("plan", "--json", "--custom-q", `output\.weight=q8_0`, model, filepath.Join(dir, "o.gguf"), "Q4_K_M")
	var plan struct {
		Schema  string `json:"schema"`
		Tensors []struct {
			Index int    `json:"index"`
			Name  string `json:"name"`
		} `json:"tensors"`
		Warnings []struct{ Kind, Tensor, Message string } `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); code != 0 || err != nil || plan.Schema != "gquant.plan/1" {
		t.Fatalf("plan --json: exit %d, %v", code, err)
	}
	if plan.Tensors[4].Index != 5 || len(plan.Warnings) != 1 || plan.Warnings[0].Kind != "rule-unanchored" ||
		!strings.Contains(plan.Warnings[0].Message, "probably matches tensors you did not mean") {
		t.Errorf("plan --json: tensor 5 %+v, warnings %+v", plan.Tensors[4], plan.Warnings)
	}
}

// TestJSONErrorDocument: a command run with --json that fails before its
// report prints gquant.error/1 on stdout with the message of stderr, so a
// script reading stdout always gets one JSON document; a failure whose
// report was printed (verify's problems) keeps that report alone; without
// --json stdout stays empty.
func TestJSONErrorDocument(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.gguf")
	out := filepath.Join(dir, "out.gguf")
	for _, tc := range []struct {
		args    []string
		status  int
		command string
		error   string
	}{
		{[]string{"quantize", "--json", missing, out, "Q4_K_M"}, 1, "gquant quantize", "missing.gguf: no such file or directory"},
		{[]string{"quantize", model, out, "Q4_K_M", "--json=true", "--imatirx", "x"}, 2, "gquant quantize", "did you mean --imatrix?"},
		{[]string{"quantize", "--json", "--dry-run", model, out, "Q9_Z"}, 2, "gquant quantize", "Q9_Z"},
		{[]string{"plan", "--json", "--imatrix", missing, model, out, "IQ2_XXS"}, 1, "gquant plan", "missing.gguf"},
		{[]string{"inspect", "--json", missing}, 1, "gquant inspect", "no such file or directory"},
		{[]string{"merge", "--json", missing, out}, 1, "gquant merge", "missing.gguf"},
		{[]string{"split", "--json", model}, 2, "gquant split", "want IN and PREFIX"},
		{[]string{"plan", "--json", model, out, "IQ2_XXS"}, 1, "gquant plan", "importance matrix needed"},
		{[]string{"repack", "--json", missing, out}, 1, "gquant repack", "missing.gguf"},
		{[]string{"repack", "--json", "--dry-run", "--pattern", "nomatch", model, out}, 1, "gquant repack", "matches no tensor"}, // printed its table as text
		{[]string{"fit", "calibrate", "--json"}, 2, "gquant fit calibrate", "need the model"},
	} {
		code, stdout, stderr := runStreams(tc.args...)
		var doc struct {
			Schema, Command, Error string
			Status                 int
			Details                []string
			Warnings               []any
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Errorf("%q: stdout is not one JSON document: %v\n%s", tc.args, err, stdout)
			continue
		}
		if code != tc.status || doc.Status != code || doc.Schema != "gquant.error/1" || doc.Command != tc.command ||
			!strings.Contains(doc.Error, tc.error) || doc.Details == nil || doc.Warnings == nil {
			t.Errorf("%q: exit %d, document %+v", tc.args, code, doc)
		}
		if !strings.Contains(stderr, tc.command+": "+doc.Error) {
			t.Errorf("%q: the error %q is not stderr's:\n%s", tc.args, doc.Error, stderr)
		}
	}

	// verify's own document says what is wrong; nothing is added (a refused
	// plan's document: TestPlanChecksOutputs).
	code, stdout, _ := runStreams("verify", "--json", missing)
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); code != 1 || err != nil || doc["schema"] != "gquant.verify/1" || doc["ok"] != false {
		t.Errorf("verify of a missing file: exit %d, %v, %.200s", code, err, stdout)
	}
	// Without --json, and for a command without it, stdout stays empty.
	for _, args := range [][]string{{"quantize", missing, out, "Q4_K_M"}, {"hash", "--json", model}} {
		if code, stdout, _ := runStreams(args...); code == 0 || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q", args, code, stdout)
		}
	}
}
