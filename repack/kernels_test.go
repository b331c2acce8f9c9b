package repack

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// repackDirectShare is the share of identical interleaved blocks (one
// block of the interleaved type across its 4 or 8 rows) between the repack
// of the reference's <base> kernel output and its direct <target> output
// (golden/kernels, 16 rows x 1024 columns), and undoDirectShare the share of
// identical base blocks between the undo of the direct output and the base
// output, for the pairs that do not reach 1. q2_K/plain: without an imatrix
// the reference's q2_K looks for ternary rows over the whole quantization
// call and the 16-row q2_K call finds none, while the q2_k_r4 quantizer,
// which works row by row, finds rows 6 and 14 ternary and encodes them
// exactly; so the two row groups holding them (8 of 16 interleaved blocks)
// and those two rows (8 of 64 base blocks) differ.
var (
	repackDirectShare = map[string]float64{"q2_K/plain": 0.5}
	undoDirectShare   = map[string]float64{"q2_K/plain": 0.875}
)

// kernelModel writes a one-tensor GGUF model (1024 x rows of typ, holding
// data) and returns its path.
func kernelModel(t *testing.T, dir, name string, typ formats.Type, rows int64, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	infos := []gguf.TensorInfo{{Name: "blk.0.ffn_down.weight", Shape: []int64{1024, rows}, Type: typ}}
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.WriteTensor(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// tensorData returns the type and bytes of a one-tensor model's tensor.
func tensorData(t *testing.T, path string) (formats.Type, []byte) {
	t.Helper()
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, err := io.ReadAll(m.TensorReader(0))
	if err != nil {
		t.Fatal(err)
	}
	return m.Tensors[0].Type, b
}

// TestKernelPairs runs every repackable pair through whole files: the
// reference's base kernel output, repacked, must be its direct output of
// the interleaved type, and undo must give the base bytes back (from our
// repack exactly; from the reference's direct output as far as the two
// quantizations agree).
func TestKernelPairs(t *testing.T) {
	kdir := golden.Path(t, "kernels")
	for _, base := range formats.RepackableTypes() {
		target, _ := formats.RepackTarget(base)
		for _, variant := range []string{"plain", "imat"} {
			name := base.String() + "/" + variant
			t.Run(name, func(t *testing.T) {
				baseFile := filepath.Join(kdir, base.String()+"."+variant+".bin")
				directFile := filepath.Join(kdir, target.String()+"."+variant+".bin")
				baseBytes, err1 := os.ReadFile(baseFile)
				direct, err2 := os.ReadFile(directFile)
				if err1 != nil || err2 != nil {
					// The reference quantizes some types only with an imatrix.
					t.Skipf("no golden pair (%v; %v)", err1, err2)
				}
				if !formats.CanInterleave(target) {
					t.Skipf("no interleaver for %s yet", target)
				}
				const rows = 16
				dir := t.TempDir()
				in := kernelModel(t, dir, "base.gguf", base, rows, baseBytes)
				out := filepath.Join(dir, "repacked.gguf")
				convertFile(t, in, out, Options{})
				typ, got := tensorData(t, out)
				if typ != target {
					t.Fatalf("repacked to %s, want %s", typ, target)
				}
				blockBytes := target.TypeSize() * target.Interleave()
				if target.RowMeta() > 0 {
					rs, _ := target.RowSize(1024)
					blockBytes = int(rs) * target.Interleave()
				}
				share, first := golden.BlockShare(got, direct, blockBytes)
				want, listed := repackDirectShare[name]
				if !listed {
					want = 1
				}
				if share != want {
					t.Errorf("repack vs direct %s: identical blocks %.4f, expected %.4f (%s)", target, share, want, first)
				}

				back := filepath.Join(dir, "back.gguf")
				convertFile(t, out, back, Options{Undo: true})
				typ, gotBase := tensorData(t, back)
				if typ != base || !bytes.Equal(gotBase, baseBytes) {
					t.Errorf("undo of the repack: %s, bytes equal %v; want %s and the base bytes", typ, bytes.Equal(gotBase, baseBytes), base)
				}

				// Undo of the reference's direct output.
				directModel := kernelModel(t, dir, "direct.gguf", target, rows, direct)
				backDirect := filepath.Join(dir, "back-direct.gguf")
				convertFile(t, directModel, backDirect, Options{Undo: true})
				_, gotBase = tensorData(t, backDirect)
				baseBlock := base.TypeSize()
				if base.RowMeta() > 0 {
					rs, _ := base.RowSize(1024)
					baseBlock = int(rs)
				}
				share, first = golden.BlockShare(gotBase, baseBytes, baseBlock)
				want, listed = undoDirectShare[name]
				if !listed {
					want = 1
				}
				if share != want {
					t.Errorf("undo of direct %s vs %s: identical blocks %.4f, expected %.4f (%s)", target, base, share, want, first)
				}
			})
		}
	}
}
