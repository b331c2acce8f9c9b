package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/recipes"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r  io.ReaderAt
	mu sync.Mutex
	n  int64
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

func (c *countingReader) take() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

// A plan built from an imatrix index (imatrix.OpenIndex) holds no
// importance vectors, and its run reads each tensor's importance data from
// the file once, a matrix at a time, however many pieces a matrix is cut
// into, and writes the bytes a run from the whole matrix writes.
func TestPlanFromIndex(t *testing.T) {
	m, whole := openGolden(t)
	raw, err := os.ReadFile(golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	extra := formats.Q4_0
	for _, tc := range []struct {
		name    string
		ft      recipes.FileType
		exclude []string
		extra   *formats.Type
	}{
		{name: "q4_K_M, uniform slices", ft: recipes.FileTypeQ4_K_M},
		{name: "iq2_xxs", ft: recipes.FileTypeIQ2_XXS},
		{name: "q8_0, attn_v_b from attn_kv_b, extra output", ft: recipes.FileTypeQ8_0, exclude: []string{"attn_v_b"}, extra: &extra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cr := &countingReader{r: bytes.NewReader(raw)}
			idx, err := imatrix.ReadIndex(cr, int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			idx.Filter(nil, tc.exclude)
			w := *whole
			w.Entries = append([]imatrix.Entry(nil), whole.Entries...)
			w.Filter(nil, tc.exclude)
			outs := map[string][]byte{}
			for _, src := range []struct {
				name string
				m    *imatrix.Matrix
			}{{"whole", &w}, {"index", idx}} {
				out := filepath.Join(dir, src.name+".gguf")
				cfg := Config{Selection: recipes.Options{FileType: tc.ft}, Imatrix: src.m, ImatrixPath: "tiny-ds2.imatrix.dat", Output: out, ExtraOutput: tc.extra}
				plan, err := Build(m, cfg)
				if err != nil {
					t.Fatal(err)
				}
				cr.take()
				var want int64 // bytes of importance data the run needs
				with, repeats := 0, 0
				for _, pt := range plan.Outputs[0].Tensors {
					if pt.Imatrix != nil {
						t.Fatalf("%s: the plan holds %d importance values", pt.Name, len(pt.Imatrix))
					}
					is := pt.importance
					if is == nil {
						continue
					}
					if src.m == idx && is.entry.Sums != nil {
						t.Fatalf("%s: an index entry holds its values", pt.Name)
					}
					with++
					if is.repeat {
						repeats++
						want += 4 * is.ne0
					} else {
						want += 4 * is.ne0 * is.mats
					}
				}
				if with == 0 || tc.exclude != nil && repeats == 0 {
					t.Fatalf("%d tensors with importance data, %d of them repeating one vector: the case covers too little", with, repeats)
				}
				if err := Run(context.Background(), m, plan.Outputs, Options{Threads: 2, PieceWeights: 1 << 12}); err != nil {
					t.Fatal(err)
				}
				if got := cr.take(); src.m == idx && got != want {
					t.Errorf("the run read %d bytes of importance data, its %d tensors with data need %d", got, with, want)
				}
				if outs[src.name], err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
				sw, err1 := os.ReadFile(SidecarPath(out))
				if err1 != nil {
					t.Fatal(err1)
				}
				outs[src.name+" sidecar"] = bytes.ReplaceAll(sw, []byte(src.name+".gguf"), nil)
			}
			if !bytes.Equal(outs["whole"], outs["index"]) {
				t.Error("the outputs differ")
			}
			if !bytes.Equal(outs["whole sidecar"], outs["index sidecar"]) {
				t.Error("the sidecars differ")
			}
		})
	}
}

// A run whose importance matrix file can no longer be read fails, naming
// the tensor and the matrix, and leaves no output.
func TestPlanFromIndexReadError(t *testing.T) {
	m, _ := openGolden(t)
	im, err := imatrix.OpenIndex(golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "o.gguf")
	plan, err := Build(m, Config{Selection: recipes.Options{FileType: recipes.FileTypeQ4_K_M}, Imatrix: im, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	im.Close()
	err = Run(context.Background(), m, plan.Outputs, Options{Threads: 2})
	if err == nil || !strings.Contains(err.Error(), "importance data of matrix 0") || !errors.Is(err, os.ErrClosed) {
		t.Fatalf("error %v, want one about reading the importance data", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output left behind: %v", err)
	}
}
