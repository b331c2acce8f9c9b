package main

import (
	"strings"
	"testing"

	"github.com/gquant/gquant/pipeline"
)

// The line of each file in verify's text report says only what was
// checked: a file present but unreadable (cut short into its header or
// its data) had no sidecar check, and its line says no "sidecar" state.
func TestVerifyTextFileLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		file pipeline.FileCheck
		want string
	}{
		{"unreadable", pipeline.FileCheck{Path: "out-00002-of-00002.gguf", Index: 2, Present: true, Bytes: 300, Problems: []string{"gguf: unexpected end of file"}},
			"  2/2  out-00002-of-00002.gguf  FAILED  300 bytes, 0 tensors\n"},
		{"checked", pipeline.FileCheck{Path: "out-00002-of-00002.gguf", Index: 2, Present: true, Bytes: 900, Tensors: 3, Sidecar: "differs", Hashed: 1, Problems: []string{"x"}},
			"  2/2  out-00002-of-00002.gguf  FAILED  900 bytes, 3 tensors, sidecar differs (1 tensors re-hashed)\n"},
		{"missing", pipeline.FileCheck{Path: "out-00002-of-00002.gguf", Index: 2, Problems: []string{"missing"}},
			"  2/2  out-00002-of-00002.gguf  MISSING\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &pipeline.SetCheck{Count: 2, Files: []pipeline.FileCheck{tc.file}}
			b := &strings.Builder{}
			if err := writeVerifyText(b, "out-00001-of-00002.gguf", false, c, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("report:\n%s\nwant the line %q", b.String(), tc.want)
			}
		})
	}
}
