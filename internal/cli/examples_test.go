package cli

import (
	"slices"
	"testing"
)

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"gquant plan --place '.*=GPU' in.gguf out.gguf Q4_0", []string{"gquant", "plan", "--place", ".*=GPU", "in.gguf", "out.gguf", "Q4_0"}},
		{`gquant quantize --custom-q "a\"b=q8_0" x\ y`, []string{"gquant", "quantize", "--custom-q", `a"b=q8_0`, "x y"}},
		{"gquant hash model.gguf > model.manifest", []string{"gquant", "hash", "model.gguf"}},
		{"gquant inspect --json m.gguf | jq -r '.tensors[]'", []string{"gquant", "inspect", "--json", "m.gguf"}},
		{"source <(gquant completion bash)", []string{"gquant", "completion", "bash"}},
		{`gquant completion zsh > "${fpath[1]}/_gquant"`, []string{"gquant", "completion", "zsh"}},
		{"a '' b", []string{"a", "", "b"}},
	} {
		if got := shellWords(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
