package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// writeHeaderOnly writes a sparse file with md and tensors.
func writeHeaderOnly(t *testing.T, path string, md gguf.Metadata, tensors []gguf.TensorInfo) {
	t.Helper()
	w, err := gguf.Create(path, md, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SkipRemaining(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// CheckExisting names the first difference between an existing file and
// the output a plan would write (issue 16, item 7), down to a type of the
// same size, a shape, a split key.
func TestCheckExisting(t *testing.T) {
	dir := t.TempDir()
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}, {Key: "general.file_type", Value: gguf.Uint32Value(7)},
		{Key: "quantize.imatrix.file", Value: gguf.StringValue("imatrix.dat")}}
	planned := Output{Metadata: md, Tensors: []Tensor{
		{Name: "a.weight", Shape: []int64{256, 16}, Type: formats.Q8_0},
		{Name: "b.weight", Shape: []int64{256, 8}, Type: formats.Q8_0},
	}}
	infos := func(mod func([]gguf.TensorInfo)) []gguf.TensorInfo {
		ts := []gguf.TensorInfo{{Name: "a.weight", Shape: []int64{256, 16}, Type: formats.Q8_0}, {Name: "b.weight", Shape: []int64{256, 8}, Type: formats.Q8_0}}
		if mod != nil {
			mod(ts)
		}
		return ts
	}
	size, err := gguf.FileSize(md, infos(nil))
	if err != nil {
		t.Fatal(err)
	}
	md2 := md.Clone()
	md2.Set("general.file_type", gguf.Uint32Value(8))
	renamed := md.Clone() // the same length: the tensors stay where they were
	renamed.Set("general.architecture", gguf.StringValue("llamb"))
	withSplit := md.Clone()
	withSplit.Set(gguf.KeySplitCount, gguf.Uint16Value(1))
	// A value of another length (an imatrix path spelt otherwise on one
	// machine of a job array) moves the data and changes the file size:
	// the key is the cause to name, not the sizes.
	longer := md.Clone()
	longer.Set("quantize.imatrix.file", gguf.StringValue(strings.Repeat("./", 40)+"imatrix.dat"))
	for _, tc := range []struct {
		name    string
		md      gguf.Metadata
		tensors []gguf.TensorInfo
		want    string // "" for a match
	}{
		{"same", md, infos(nil), ""},
		{"same-size type", md, infos(func(ts []gguf.TensorInfo) { ts[0].Type = formats.Q8_0_R8 }), "tensor a.weight is q8_0_r8, the plan has q8_0"},
		{"shape", md, infos(func(ts []gguf.TensorInfo) { ts[0].Shape, ts[1].Shape = []int64{256, 8}, []int64{256, 16} }), "tensor a.weight has shape [256 8]"},
		{"name", md, infos(func(ts []gguf.TensorInfo) { ts[1].Name = "c.weight" }), "tensor 1 is c.weight"},
		{"order", md, infos(func(ts []gguf.TensorInfo) { ts[0].Name, ts[1].Name = "b.weight", "a.weight" }), "tensor 0 is b.weight"},
		{"file type", md2, infos(nil), "general.file_type is 8, the plan has 7"},
		{"split key", withSplit, infos(nil), "split.count is 1, the plan has absent"},
		{"other metadata", renamed, infos(nil), `general.architecture is "llamb", the plan has "llama"`},
		{"longer metadata", longer, infos(nil), `quantize.imatrix.file is "././`},
		{"type of another size", md, infos(func(ts []gguf.TensorInfo) { ts[1].Type = formats.Q4_0 }), "tensor b.weight is q4_0, the plan has q8_0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".gguf")
			writeHeaderOnly(t, path, tc.md, tc.tensors)
			err := CheckExisting(path, planned, size)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("a matching file refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	// A file cut short, its header whole, is told by its size.
	cut := filepath.Join(dir, "truncated.gguf")
	writeHeaderOnly(t, cut, md, infos(nil))
	if err := os.Truncate(cut, size-100); err != nil {
		t.Fatal(err)
	}
	if err := CheckExisting(cut, planned, size); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, the plan has %d", size-100, size)) {
		t.Errorf("a truncated file: %v", err)
	}
	if err := CheckExisting(dir, planned, size); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
