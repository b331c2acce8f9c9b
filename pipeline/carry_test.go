package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/gguf"
)

// copyModel copies the model at src to each of dsts (files a test may
// change or truncate) and returns its bytes.
func copyModel(t *testing.T, src string, dsts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dsts {
		if err := os.WriteFile(d, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// CarrySidecars refuses records that do not describe the output's tensors
// and treats a sidecar of another size as none.
func TestCarrySidecarsChecks(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.gguf"), filepath.Join(dir, "out.gguf")
	src := copyModel(t, "../testdata/tiny-deepseek2-bf16.gguf", in, out)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	recs := make([]TensorRecord, len(m.Tensors))
	for i, ti := range m.Tensors {
		recs[i] = TensorRecord{Name: ti.Name, Shape: ti.Shape, InputType: ti.Type.String(), Input: hashString(1),
			Type: ti.Type.String(), Copied: true, Offset: m.Shards[0].DataOffset + ti.Offset, Size: ti.Size, Output: hashString(2)}
	}
	sc := &Sidecar{Schema: SidecarSchema, File: "in.gguf", Size: int64(len(src)), Tensors: recs}
	if err := writeSidecar(in, sc); err != nil {
		t.Fatal(err)
	}
	if missing, _, err := CarrySidecars(m, []string{out}); err != nil || len(missing) != 0 {
		t.Fatalf("carry: %v, missing %v", err, missing)
	}
	got, err := ReadSidecar(out)
	if err != nil || len(got.Tensors) != len(recs) || got.File != "out.gguf" || got.Tensors[3].Offset != recs[3].Offset || got.Tensors[3].Output != recs[3].Output {
		t.Fatalf("carried sidecar %+v, %v", got, err)
	}

	recs[3].Type = "q8_0"
	if err := writeSidecar(in, sc); err != nil {
		t.Fatal(err)
	}
	if _, _, err := CarrySidecars(m, []string{out}); !errors.Is(err, ErrSidecar) {
		t.Fatalf("a record of another type: %v", err)
	}

	sc.Size++
	if err := writeSidecar(in, sc); err != nil {
		t.Fatal(err)
	}
	missing, removed, err := CarrySidecars(m, []string{out})
	if err != nil || len(missing) != 1 || len(removed) != 1 {
		t.Fatalf("a sidecar of another size: %v, missing %v", err, missing)
	}
	if _, err := os.Stat(SidecarPath(out)); !os.IsNotExist(err) {
		t.Fatalf("the output's earlier sidecar is still there: %v", err)
	}
}
