// Package vendoredtest checks the byte-for-byte promise on the small subset of
// the golden data kept in the repository (testdata/golden, see its
// README.md), so that a clone without ../shared/golden still checks it. Where
// ../shared/golden is present, it also checks that the subset is a faithful
// copy; `go test ./internal/vendoredtest -run TestVendoredIsACopy -vendor`
// makes it again from ../shared/golden.
package vendoredtest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
)

var vendor = flag.Bool("vendor", false, "write testdata/golden again from ../shared/golden")

// kernelCases are the vendored lines of kernels/manifest.tsv: a type of each
// family, plain and with the importance matrix, and an interleaved one.
var kernelCases = []string{
	"q8_0/plain", "q4_K/plain", "q4_K/imat", "q4_k_r4/imat", "iq2_xxs/imat",
	"iq4_ks/plain", "iq4_ks/imat", "iq1_bn/plain",
}

// The e2e run is an excerpt of the recipe run of golden/e2e/COMMANDS.md
// (llama-quantize --imatrix tiny-ds2.imatrix.dat --custom-q "$custom"
// tiny-ds2-bf16.gguf out-recipe.gguf IQ2_K_R4): the input's metadata with
// three of its tensors, and the reference's output metadata with the same
// three tensors. Each tensor's type comes from a rule and its bytes depend
// on nothing else, so quantizing the excerpt gives the excerpt of the output.
var e2eTensors = []string{"blk.1.attn_norm.weight", "blk.1.attn_output.weight", "blk.1.ffn_down_shexp.weight"}

const (
	e2eCustom  = `token_embd\.weight=q8_0,output\.weight=q6_K,blk\.0\..*=q8_0,blk\.[1-3]\.ffn_down_exps\.weight=iq3_k_r4,blk\.[1-3]\.ffn_(gate|up)_exps\.weight=iq2_k_r4,blk\.[1-3]\.attn_.*=q8_0,blk\.[1-3]\.ffn_.*shexp\.weight=iq4_ks`
	e2eImatrix = "tiny-ds2.imatrix.dat"
)

func dir(elem ...string) string {
	return filepath.Join(append([]string{golden.Vendored()}, elem...)...)
}

func readFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(dir(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVendoredKernels: one QuantizeRows call per vendored case gives the
// reference's bytes.
func TestVendoredKernels(t *testing.T) {
	cases := golden.ReadManifest(t, dir("kernels"))
	if len(cases) != len(kernelCases) {
		t.Fatalf("%d vendored kernel cases, want %d", len(cases), len(kernelCases))
	}
	input := golden.F32(readFile(t, "kernels", "input.f32"))
	weights := golden.F32(readFile(t, "kernels", "imatrix.f32"))
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			typ, err := formats.ParseType(c.Type)
			if err != nil {
				t.Fatal(err)
			}
			var im []float32
			if c.Imatrix {
				im = weights
			}
			got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, im)
			if err != nil {
				t.Fatal(err)
			}
			if want := readFile(t, "kernels", c.File); !bytes.Equal(got, want) {
				share, first := golden.BlockShare(got, want, typ.TypeSize()*typ.Interleave())
				t.Fatalf("differs from the reference's bytes: %.4f of blocks identical (%s)", share, first)
			}
		})
	}
}

// TestVendoredE2E quantizes the excerpt of the recipe run and compares the
// whole file with the excerpt of the reference's output.
func TestVendoredE2E(t *testing.T) {
	in, err := gguf.Open(dir("e2e", "in.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	im, err := imatrix.Open(dir("e2e", e2eImatrix))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := recipes.ParseCustomQ(e2eCustom)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.gguf")
	cfg := pipeline.Config{Selection: recipes.Options{FileType: recipes.FileTypeIQ2_K_R4, Rules: rules},
		Imatrix: im, ImatrixPath: e2eImatrix, Output: out}
	plan, err := pipeline.Build(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), in, plan.Outputs, pipeline.Options{Threads: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := readFile(t, "e2e", "want.gguf")
	if !bytes.Equal(got, want) {
		t.Errorf("output (%d bytes) differs from the reference's excerpt (%d bytes)%s", len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf(" from byte %d", i)
		}
	}
	return ""
}

// TestVendoredIsACopy: with ../shared/golden present, every vendored file
// is the reference's: kernel files byte for byte, the e2e excerpts tensor by
// tensor and key by key, the importance matrix entry by entry for the
// tensors it is used for. With -vendor it writes them first.
func TestVendoredIsACopy(t *testing.T) {
	if !golden.Present() {
		t.Skip("../shared/golden is absent: nothing to compare the vendored copy with")
	}
	if *vendor {
		writeVendored(t)
	}
	for _, c := range golden.ReadManifest(t, dir("kernels")) {
		for _, f := range []string{c.File, "input.f32", "imatrix.f32"} {
			if !bytes.Equal(readFile(t, "kernels", f), golden.ReadFile(t, "kernels", f)) {
				t.Errorf("kernels/%s is not the golden file", f)
			}
		}
	}
	for _, pair := range [][2]string{{"in.gguf", "tiny-ds2-bf16.gguf"}, {"want.gguf", "out-recipe.gguf"}} {
		checkExcerpt(t, dir("e2e", pair[0]), golden.Path(t, "e2e", pair[1]))
	}
	small, err := imatrix.Open(dir("e2e", e2eImatrix))
	if err != nil {
		t.Fatal(err)
	}
	full, err := imatrix.Open(golden.Path(t, "e2e", e2eImatrix))
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Entries) != len(full.Entries) || small.Chunks != full.Chunks || strings.Join(small.Datasets, ",") != strings.Join(full.Datasets, ",") {
		t.Errorf("the vendored importance matrix does not keep the entry count, chunks and datasets")
	}
	for _, name := range e2eTensors {
		a, okA := small.Lookup(name)
		b, okB := full.Lookup(name)
		if okA != okB || okA && fmt.Sprint(a.Sums, a.Counts) != fmt.Sprint(b.Sums, b.Counts) {
			t.Errorf("importance data of %s differs from the golden file's", name)
		}
	}
}

// checkExcerpt compares an excerpt with its source: the same metadata, and
// each of its tensors with the source's type, shape and bytes.
func checkExcerpt(t *testing.T, excerpt, source string) {
	t.Helper()
	a, err := gguf.Open(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := gguf.Open(source)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fmt.Sprint(a.Metadata) != fmt.Sprint(b.Metadata) {
		t.Errorf("%s: metadata differs from %s", excerpt, source)
	}
	if len(a.Tensors) != len(e2eTensors) {
		t.Fatalf("%s: %d tensors, want %d", excerpt, len(a.Tensors), len(e2eTensors))
	}
	for i, ta := range a.Tensors {
		j := b.TensorIndex(ta.Name)
		if ta.Name != e2eTensors[i] || j < 0 {
			t.Fatalf("%s: tensor %d is %s", excerpt, i, ta.Name)
		}
		tb := b.Tensors[j]
		if ta.Type != tb.Type || fmt.Sprint(ta.Shape) != fmt.Sprint(tb.Shape) || !bytes.Equal(tensorBytes(t, a, i), tensorBytes(t, b, j)) {
			t.Errorf("%s: tensor %s differs from %s's", excerpt, ta.Name, source)
		}
	}
}

func tensorBytes(t *testing.T, m *gguf.Model, i int) []byte {
	t.Helper()
	b, err := io.ReadAll(m.TensorReader(i))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeVendored makes testdata/golden from ../shared/golden.
func writeVendored(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(dir("kernels"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir("e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := strings.SplitAfter(string(golden.ReadFile(t, "kernels", "manifest.tsv")), "\n")
	keep := []string{manifest[0]}
	for _, c := range golden.Kernels(t) {
		for _, name := range kernelCases {
			if c.Name() != name {
				continue
			}
			for _, line := range manifest[1:] {
				if f := strings.Split(line, "\t"); len(f) == 8 && f[5] == c.File {
					// No dequantizations: formats' own tests check those.
					f[7] = "-\n"
					keep = append(keep, strings.Join(f, "\t"))
				}
			}
			copyFile(t, golden.Path(t, "kernels", c.File), dir("kernels", c.File))
		}
	}
	if err := os.WriteFile(dir("kernels", "manifest.tsv"), []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, golden.Path(t, "kernels", "input.f32"), dir("kernels", "input.f32"))
	copyFile(t, golden.Path(t, "kernels", "imatrix.f32"), dir("kernels", "imatrix.f32"))

	writeExcerpt(t, golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"), dir("e2e", "in.gguf"))
	writeExcerpt(t, golden.Path(t, "e2e", "out-recipe.gguf"), dir("e2e", "want.gguf"))

	// The importance matrix keeps its entry count, chunks and dataset (they
	// are written to the output's metadata) but only the excerpt's data:
	// every other entry shrinks to one value.
	m, err := imatrix.Open(golden.Path(t, "e2e", e2eImatrix))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		if !contains(e2eTensors, e.Name) {
			e.Sums = e.Sums[:1]
		}
	}
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir("e2e", e2eImatrix), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeExcerpt(t *testing.T, source, excerpt string) {
	t.Helper()
	m, err := gguf.Open(source)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var infos []gguf.TensorInfo
	var idx []int
	for _, name := range e2eTensors {
		i := m.TensorIndex(name)
		if i < 0 {
			t.Fatalf("%s has no tensor %s", source, name)
		}
		ti := m.Tensors[i].TensorInfo
		infos = append(infos, gguf.TensorInfo{Name: ti.Name, Shape: ti.Shape, Type: ti.Type})
		idx = append(idx, i)
	}
	w, err := gguf.Create(excerpt, m.Metadata, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range idx {
		if err := w.WriteTensor(m.TensorReader(i)); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
