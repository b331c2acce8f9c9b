package pipeline

import (
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/recipes"
)

func openGolden(t *testing.T) (*gguf.Model, *imatrix.Matrix) {
	t.Helper()
	m, err := gguf.Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	im, err := imatrix.Open(golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	return m, im
}

// Expert 5 has no calibration data in tiny-ds2.imatrix.dat. For q4_K, whose
// reference kernel fails on an all-zero slice, the slice becomes uniform
// importance, with one warning per tensor; for q6_K it stays as it is.
func TestZeroImportanceSlices(t *testing.T) {
	m, im := openGolden(t)
	plan, err := Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeQ4_K_M}, Imatrix: im, ImatrixPath: "x.dat", Output: t.TempDir() + "/o.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	warned := map[string]int{}
	for _, w := range plan.Warnings {
		if name, _, ok := strings.Cut(w, ": "); ok && strings.Contains(w, "uniform importance") {
			warned[name]++
		}
	}
	checked := 0
	for _, tp := range plan.Outputs[0].Tensors {
		if !strings.Contains(tp.Name, "_exps.") || !tp.hasImatrix() {
			continue
		}
		ne0 := int(tp.Shape[0])
		data := importanceData(t, tp)
		slice := data[5*ne0 : 6*ne0]
		switch tp.Type {
		case formats.Q4_K:
			checked++
			for _, v := range slice {
				if v != 1 {
					t.Fatalf("%s: expert 5 importance %v, want uniform 1", tp.Name, v)
				}
			}
			if warned[tp.Name] != 1 {
				t.Errorf("%s: %d warnings, want one", tp.Name, warned[tp.Name])
			}
			// Other experts keep their data.
			if data[0] == 1 && data[1] == 1 {
				t.Errorf("%s: expert 0 was replaced too", tp.Name)
			}
		case formats.Q6_K:
			for _, v := range slice {
				if v != 0 {
					t.Fatalf("%s (q6_K): expert 5 importance changed to %v", tp.Name, v)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no q4_K expert tensor in the plan")
	}
	// The row-interleaved types guard zero blocks in their kernels (the
	// reference's QHelper), which write finite bytes from the data as it
	// is: llama-quantize's Q4_K_R4 and IQ2_XS_R4 outputs of this model, as
	// gquant writes them without the substitution, matched byte for byte.
	for _, ft := range []recipes.FileType{recipes.FileTypeQ4_K_R4, recipes.FileTypeIQ2_XS_R4} {
		plan, err := Build(m, Config{Selection: recipes.Options{FileType: ft}, Imatrix: im, ImatrixPath: "x.dat", Output: t.TempDir() + "/o.gguf"})
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, tp := range plan.Outputs[0].Tensors {
			if !strings.Contains(tp.Name, "_exps.") || !tp.hasImatrix() || tp.Type.Interleave() == 1 {
				continue
			}
			ne0 := int(tp.Shape[0])
			for _, v := range importanceData(t, tp)[5*ne0 : 6*ne0] {
				if v != 0 {
					t.Fatalf("%s (%s): expert 5 importance changed to %v", tp.Name, tp.Type, v)
				}
			}
			kept++
		}
		if kept == 0 {
			t.Errorf("%v: no interleaved expert tensor in the plan", ft)
		}
	}
	// q5_K writes NaN scales for such a slice, where llama-quantize stops
	// ("quantized data validation failed"): the run re-quantizes those
	// rows with uniform importance (checkOutput), and the plan says so
	// before, per tensor.
	q5, err := Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeQ5_K_M}, Imatrix: im, ImatrixPath: "x.dat", Output: t.TempDir() + "/o.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	said := 0
	for _, w := range q5.Warnings {
		if strings.Contains(w, "([5]) with blocks of zero, tiny or huge importance: rows whose q5_K encoding is then not finite") {
			said++
		}
		if strings.Contains(w, "q6_K encoding") {
			t.Errorf("a warning for q6_K, which handles such blocks: %s", w)
		}
	}
	if said == 0 {
		t.Errorf("Q5_K_M plan: no warning of the expert without data:\n%s", strings.Join(q5.Warnings, "\n"))
	}
	// The shared entry itself is untouched.
	e, _ := im.Lookup("blk.1.ffn_up_exps.weight")
	if e.Mean()[5*256] != 0 {
		t.Error("the imatrix entry was modified")
	}
}

// attn_v_b without its own entry borrows attn_kv_b's ne0 values for every head.
func TestMLAImportanceForEveryHead(t *testing.T) {
	m, im := openGolden(t)
	im.Filter(nil, []string{"attn_v_b"})
	plan, err := Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeQ8_0}, Imatrix: im, Output: t.TempDir() + "/o.gguf"})
	if err != nil {
		t.Fatal(err)
	}
	kvb, _ := im.Lookup("blk.1.attn_kv_b.weight")
	want := kvb.Mean()
	for _, tp := range plan.Outputs[0].Tensors {
		if tp.Name != "blk.1.attn_v_b.weight" {
			continue
		}
		ne0 := int(tp.Shape[0])
		data := importanceData(t, tp)
		heads := len(data) / ne0
		if heads != int(tp.Shape[2]) || len(want) != ne0 {
			t.Fatalf("importance for %d heads of %d, entry has %d values", heads, ne0, len(want))
		}
		for h := 0; h < heads; h++ {
			for i := 0; i < ne0; i++ {
				if data[h*ne0+i] != want[i] {
					t.Fatalf("head %d column %d differs", h, i)
				}
			}
		}
		return
	}
	t.Fatal("blk.1.attn_v_b.weight not in the plan")
}

// The dataset key of a GGUF importance matrix that lists several (a merge)
// is the first, as mainline llama-quantize (the reader of that format)
// records it; gquant joined them. --hide-imatrix hides it.
func TestConfigKeysDataset(t *testing.T) {
	m := &imatrix.Matrix{Format: imatrix.FormatGGUF, Chunks: 3, Datasets: []string{"wiki.txt", "code.txt"},
		Entries: []imatrix.Entry{{Name: "blk.0.ffn_up.weight", Sums: []float32{1}, Counts: []float64{1}}}}
	for _, tc := range []struct {
		hide bool
		want string
	}{{false, "wiki.txt"}, {true, "top_secret"}} {
		var got string
		for _, kv := range ConfigKeys(Config{Imatrix: m, ImatrixPath: "im.gguf", HideImatrix: tc.hide}) {
			if kv.Key == "quantize.imatrix.dataset" {
				got, _ = kv.Value.Text()
			}
		}
		if got != tc.want {
			t.Errorf("hide %v: dataset %q, want %q", tc.hide, got, tc.want)
		}
	}
}
