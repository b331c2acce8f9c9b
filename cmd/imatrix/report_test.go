package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/internal/golden"
)

// jsonDoc decodes a command's JSON output and checks the fields every
// report has: the schema and a warnings array of {kind, tensor, message}.
func jsonDoc(t *testing.T, schema, out string) map[string]json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	var got string
	if err := json.Unmarshal(doc["schema"], &got); err != nil || got != schema {
		t.Errorf("schema %s, want %q", doc["schema"], schema)
	}
	var ws []map[string]any
	if err := json.Unmarshal(doc["warnings"], &ws); err != nil || ws == nil {
		t.Errorf("warnings %s: want an array (%v)", doc["warnings"], err)
	}
	for _, w := range ws {
		if len(w) != 3 || w["kind"] == nil || w["tensor"] == nil || w["message"] == nil {
			t.Errorf("warning %v: want kind, tensor and message", w)
		}
	}
	return doc
}

func warningsOf(t *testing.T, raw json.RawMessage) []cli.Warning {
	t.Helper()
	var ws []cli.Warning
	if err := json.Unmarshal(raw, &ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestCheckJSONAndSummary(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	dat := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	status, out, errOut := runCmd(t, "check", "--json", "--model", model, dat)
	if status != 0 || errOut != "" {
		t.Fatalf("check --json: status %d, stderr %q", status, errOut)
	}
	doc := jsonDoc(t, "gquant.imatrix-check/1", out)
	if string(doc["errors"]) != "[]" || string(doc["failed"]) != "false" {
		t.Errorf("errors %s failed %s, want [] and false", doc["errors"], doc["failed"])
	}
	ws := warningsOf(t, doc["warnings"])
	if len(ws) != 9 {
		t.Fatalf("%d warnings, want 9 (expert 5 of the 9 expert tensors)", len(ws))
	}
	for _, w := range ws {
		if w.Kind != imatrix.KindEmpty || !strings.HasSuffix(w.Tensor, "_exps.weight") || !strings.HasPrefix(w.Message, "expert 5 of 8 has no data:") {
			t.Errorf("warning %+v", w)
		}
	}
	// --strict makes the warnings fail, JSON or not.
	if status, _, _ := runCmd(t, "check", "--json", "--strict", "--model", model, dat); status != 1 {
		t.Errorf("--json --strict: status %d, want 1", status)
	}

	// Text: nine warnings of one kind are one line, --verbose shows each.
	count := func(out string) int { return strings.Count(out, "has no data") }
	status, out, _ = runCmd(t, "check", "--model", model, dat)
	if status != 0 || count(out) != 1 || !strings.Contains(out, "[and 8 more empty-matrix warnings like it: --verbose lists each]") {
		t.Errorf("check: status %d, %d no-data lines:\n%s", status, count(out), out)
	}
	status, out, _ = runCmd(t, "check", "--verbose", "--model", model, dat)
	if status != 0 || count(out) != 9 || strings.Contains(out, "more empty-matrix") {
		t.Errorf("check --verbose: status %d, %d no-data lines:\n%s", status, count(out), out)
	}
}

func TestInspectJSON(t *testing.T) {
	status, out, errOut := runCmd(t, "inspect", "--json", golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	doc := jsonDoc(t, "gquant.imatrix-inspect/1", out)
	ws := warningsOf(t, doc["warnings"])
	if len(ws) != 9 || ws[0].Kind != imatrix.KindEmpty || ws[0].Message != "expert 5 of 8 has no data" {
		t.Errorf("%d warnings: %+v", len(ws), ws)
	}
	// A full file: no warnings, and still an array.
	_, out, _ = runCmd(t, "inspect", "--json", golden.Path(t, "e2e", "tiny-ds2.full.imatrix.dat"))
	if doc := jsonDoc(t, "gquant.imatrix-inspect/1", out); string(doc["warnings"]) != "[]" {
		t.Errorf("full file: warnings %s", doc["warnings"])
	}
}

// writeDat writes m as a .dat file in dir.
func writeDat(t *testing.T, dir, name string, m *imatrix.Matrix) string {
	t.Helper()
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Expert entries whose expert count cannot be inferred: one warning per
// entry with --verbose, else one line.
func TestConvertWarningSummary(t *testing.T) {
	dir := t.TempDir()
	m := &imatrix.Matrix{Chunks: 1}
	for i := range 6 {
		m.Entries = append(m.Entries, imatrix.Entry{Name: fmt.Sprintf("blk.%d.ffn_up_exps.weight", i), Sums: []float32{1, 2, 3, 4, 5, 6, 7}, Counts: []float64{1}})
		m.Entries = append(m.Entries, imatrix.Entry{Name: fmt.Sprintf("blk.%d.attn_q.weight", i), Sums: []float32{1, 2, 3, 4}, Counts: []float64{1}})
	}
	in := writeDat(t, dir, "odd.dat", m)
	for _, tc := range []struct {
		verbose bool
		lines   int
	}{{false, 1}, {true, 6}} {
		args := []string{"convert", in, filepath.Join(dir, fmt.Sprint(tc.verbose, ".gguf"))}
		if tc.verbose {
			args = append(args, "--verbose")
		}
		status, _, errOut := runCmd(t, args...)
		if n := strings.Count(errOut, "expert count unknown"); status != 0 || n != tc.lines {
			t.Errorf("verbose %v: status %d, %d warning lines, want %d:\n%s", tc.verbose, status, n, tc.lines, errOut)
		}
	}
}
