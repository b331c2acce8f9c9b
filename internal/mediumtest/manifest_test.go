package mediumtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
)

// manifest is one *.manifest.json of ../shared/models/medium/reference: what
// the reference wrote in one run, without the bytes.
type manifest struct {
	Files       []manifestFile             `json:"files"`
	KV          map[string]json.RawMessage `json:"kv"` // scalars as json.dumps wrote them, arrays as manifestArray
	TensorOrder []string                   `json:"tensor_order"`
	Tensors     map[string]manifestTensor  `json:"tensors"`
}

type manifestFile struct {
	KVOrder  []string `json:"kv_order"`
	NTensors int      `json:"n_tensors"`
	Path     string   `json:"path"`
	Size     int64    `json:"size"`
}

type manifestTensor struct {
	NBytes   int64   `json:"nbytes"`
	NE       []int64 `json:"ne"`
	SHA256   string  `json:"sha256"`
	Type     uint32  `json:"type"`
	TypeName string  `json:"type_name"`
}

// manifestArray stands for an array value: its element type (the GGUF value
// type id), length and arrayDigest.
type manifestArray struct {
	ArrayType uint32 `json:"array_type"`
	N         int    `json:"n"`
	SHA       string `json:"sha"`
}

// strictUnmarshal decodes JSON and fails on fields we do not know: a field
// added to the manifests (per-expert hashes, say) must be compared too, not
// passed over.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// readManifest reads and checks a manifest: one file (the runs here are not
// split), and the key and tensor lists agree with the maps.
func readManifest(path string) (*manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := strictUnmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(m.Files) != 1 {
		return nil, fmt.Errorf("%s: %d files; only single-file runs are compared", path, len(m.Files))
	}
	f := m.Files[0]
	if f.NTensors != len(m.TensorOrder) || len(m.Tensors) != len(m.TensorOrder) {
		return nil, fmt.Errorf("%s: n_tensors %d, %d in tensor_order, %d in tensors", path, f.NTensors, len(m.TensorOrder), len(m.Tensors))
	}
	for _, name := range m.TensorOrder {
		if _, ok := m.Tensors[name]; !ok {
			return nil, fmt.Errorf("%s: tensor %s of tensor_order has no entry", path, name)
		}
	}
	if len(f.KVOrder) != len(m.KV) {
		return nil, fmt.Errorf("%s: %d keys in kv_order, %d in kv", path, len(f.KVOrder), len(m.KV))
	}
	for _, k := range f.KVOrder {
		if _, ok := m.KV[k]; !ok {
			return nil, fmt.Errorf("%s: key %s of kv_order has no value", path, k)
		}
	}
	return &m, nil
}

// fileDiff is what compareFile found.
type fileDiff struct {
	// Problems each name a metadata key or tensor and what differs, except
	// tensor bytes.
	Problems []string
	// Differ lists the tensors (name, type, shape and size right) whose bytes
	// have another sha256 than the reference's.
	Differ []string
}

// compareFile compares the GGUF file at path with a manifest: file size,
// metadata keys, their order and values, tensor names and order, and each
// tensor's type, shape, size and sha256. It reads one tensor at a time
// through a fixed buffer.
func compareFile(path string, m *manifest) (*fileDiff, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	model, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	d := &fileDiff{}
	ref := m.Files[0]
	if st.Size() != ref.Size {
		d.Problems = append(d.Problems, fmt.Sprintf("file size %d, want %d", st.Size(), ref.Size))
	}

	var keys []string
	for _, kv := range model.Metadata {
		keys = append(keys, kv.Key)
	}
	d.Problems = append(d.Problems, compareOrder("metadata key", keys, ref.KVOrder)...)
	for _, kv := range model.Metadata {
		raw, ok := m.KV[kv.Key]
		if !ok {
			continue // reported by compareOrder
		}
		if p := compareValue(kv.Value, raw); p != "" {
			d.Problems = append(d.Problems, "metadata "+kv.Key+": "+p)
		}
	}

	var names []string
	for _, t := range model.Tensors {
		names = append(names, t.Name)
	}
	d.Problems = append(d.Problems, compareOrder("tensor", names, m.TensorOrder)...)
	buf := make([]byte, 1<<20)
	for i, t := range model.Tensors {
		want, ok := m.Tensors[t.Name]
		if !ok {
			continue // reported by compareOrder
		}
		var what []string
		if uint32(t.Type) != want.Type || t.Type.String() != want.TypeName {
			what = append(what, fmt.Sprintf("type %s (%d), want %s (%d)", t.Type, uint32(t.Type), want.TypeName, want.Type))
		}
		if !slices.Equal(t.Shape, want.NE) {
			what = append(what, fmt.Sprintf("shape %v, want %v", t.Shape, want.NE))
		}
		if t.Size != want.NBytes {
			what = append(what, fmt.Sprintf("%d bytes, want %d", t.Size, want.NBytes))
		}
		if len(what) > 0 {
			d.Problems = append(d.Problems, "tensor "+t.Name+": "+strings.Join(what, ", "))
			continue
		}
		h := sha256.New()
		if _, err := io.CopyBuffer(h, model.TensorReader(i), buf); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", path, t.Name, err)
		}
		if hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
			d.Differ = append(d.Differ, t.Name)
		}
	}
	return d, nil
}

// compareOrder describes how got differs from want as a list: what is
// missing, what is extra, and where the order of the common items first
// departs from want's.
func compareOrder(what string, got, want []string) []string {
	if slices.Equal(got, want) {
		return nil
	}
	var out []string
	var common, wantCommon []string
	for _, g := range got {
		if slices.Contains(want, g) {
			common = append(common, g)
		} else {
			out = append(out, fmt.Sprintf("%s %s is not in the reference", what, g))
		}
	}
	for _, w := range want {
		if slices.Contains(got, w) {
			wantCommon = append(wantCommon, w)
		} else {
			out = append(out, fmt.Sprintf("%s %s is missing", what, w))
		}
	}
	for i := range common {
		if common[i] != wantCommon[i] {
			out = append(out, fmt.Sprintf("%s order: %s where the reference has %s (%s %d of %d)", what, common[i], wantCommon[i], what, i, len(common)))
			break
		}
	}
	return out
}

// compareValue compares our value with the manifest's JSON for it and
// describes the difference ("" if none).
func compareValue(v gguf.Value, raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var want manifestArray
		if err := strictUnmarshal(raw, &want); err != nil {
			return fmt.Sprintf("reference value %s: %v", raw, err)
		}
		if v.Type() != gguf.TypeArray {
			return fmt.Sprintf("%s %v, want an array of %s", v.Type(), v, gguf.ValueType(want.ArrayType))
		}
		if uint32(v.ElemType()) != want.ArrayType || v.Len() != want.N {
			return fmt.Sprintf("array of %d %s, want %d %s", v.Len(), v.ElemType(), want.N, gguf.ValueType(want.ArrayType))
		}
		got, ok := arrayDigest(v)
		if !ok {
			return "an array of arrays, which the manifest format does not describe"
		}
		if got != want.SHA {
			return fmt.Sprintf("array %v has digest %s, want %s", v, got, want.SHA)
		}
		return ""
	case len(raw) > 0 && raw[0] == '"':
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			return fmt.Sprintf("reference value %s: %v", raw, err)
		}
		if got, ok := v.Text(); !ok || got != want {
			return fmt.Sprintf("%s %v, want %q", v.Type(), v, want)
		}
		return ""
	}
	got, ok := pyJSON(v)
	if !ok || got != string(raw) {
		return fmt.Sprintf("%s %v, want %s", v.Type(), v, raw)
	}
	return ""
}

// mediumDir is ../shared/models/medium, beside the golden folder: skipped
// where absent outside CI, as golden.Dir does.
func mediumDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(golden.Dir(t)), "models", "medium")
	if _, err := os.Stat(filepath.Join(dir, "reference")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("medium model folder missing in CI: %v", err)
		}
		t.Skipf("medium model folder not found: %v", err)
	}
	return dir
}
