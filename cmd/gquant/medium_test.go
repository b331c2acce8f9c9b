//go:build medium

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The run logs of the medium model (../shared/models/medium/reference)
// line for line: fallbacks to iq4_nl and q5_0/q8_0 on rows of 1408, missing
// importance data for attn_kv_b, the size summary and the fallback count.
// GQUANT_MEDIUM_MODEL names the bf16 model (mk_medium_model.py writes it);
// about a minute per run on two cores.
//
//	GQUANT_MEDIUM_MODEL=/path/medium-bf16.gguf go test -tags medium -run TestMediumRunLogs -timeout 30m ./cmd/gquant
func TestMediumRunLogs(t *testing.T) {
	model := os.Getenv("GQUANT_MEDIUM_MODEL")
	if model == "" {
		t.Skip("GQUANT_MEDIUM_MODEL is not set")
	}
	model, _ = filepath.Abs(model)
	ref := filepath.Join("..", "..", "..", "shared", "models", "medium")
	ref, _ = filepath.Abs(ref)
	if _, err := os.Stat(filepath.Join(ref, "medium.imatrix.dat")); err != nil {
		t.Skip("no ../shared/models/medium")
	}
	dir := t.TempDir()
	// The reference ran in one folder: the names it logged are relative.
	for src, name := range map[string]string{model: "medium-bf16.gguf", filepath.Join(ref, "medium.imatrix.dat"): "medium.imatrix.dat"} {
		if err := os.Symlink(src, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, typ := range []string{"q4_k_m", "iq4_ks-imat", "iq3_xxs-imat", "iq1_s-imat"} {
		t.Run(typ, func(t *testing.T) {
			ft, imat := strings.CutSuffix(typ, "-imat")
			args := []string{"quantize"}
			if imat {
				args = append(args, "--imatrix", "medium.imatrix.dat")
			}
			out := "out-" + typ + ".gguf"
			args = append(args, "medium-bf16.gguf", out, strings.ToUpper(ft), "2")
			code, stdout, stderr := runStreams(args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			os.Remove(out)
			checkRunLog(t, filepath.Join(ref, "reference", "log-"+typ+".txt"), stdout, stderr)
		})
	}
}
