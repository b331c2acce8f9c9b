package ggufhash

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/splitter"
)

// The manifests in testdata were written by llama-gguf-hash built from
// ik_llama.cpp 8337e4cd's examples/gguf-hash (the reference's own copy, linked
// against the reference build's ggml objects), with mainline llama.cpp's
// --xxh3 added as mainline has it (the same code as its --xxh64 with
// XXH3_64bits; ik's copy predates it), as
//
//	llama-gguf-hash --all --uuid ../testdata/tiny-deepseek2-bf16.gguf
//
// run in this folder, and for the shard sets (cut by gquant split
// --split-max-tensors 20 into tiny-*, and --split-max-tensors 30
// --no-tensor-first-split into tiny0-*) once per shard, in shard order, in
// the shards' folder.
const tinyModel = "../testdata/tiny-deepseek2-bf16.gguf"

// manifestText runs HashModel and returns its lines as `gquant hash` prints
// them.
func manifestText(t *testing.T, m *gguf.Model, opts Options) string {
	t.Helper()
	var b strings.Builder
	err := HashModel(m, opts, func(r *Result) error {
		for _, k := range r.Sums.Kinds().List() {
			b.WriteString(r.Line(k) + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filterLines keeps the lines for which keep is true. llama-gguf-hash prints
// each kind in a block of its own, so its output for fewer kinds, or without
// the per-tensor lines, is exactly these lines of its --all --uuid output.
func filterLines(text string, keep func(kind, name string) bool) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && keep(f[0], f[2]) {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestHashModelMatchesLlamaGGUFHash(t *testing.T) {
	m, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref := readFile(t, "testdata/tiny-deepseek2-bf16.all-uuid.manifest")
	for _, tc := range []struct {
		name string
		opts Options
		keep func(kind, name string) bool
	}{
		{"all+uuid", Options{Kinds: AllHashes | KindsOf(UUID)}, func(string, string) bool { return true }},
		{"default", Options{}, func(k, _ string) bool { return k == "xxh64" }},
		{"sha256+uuid no-layer", Options{Kinds: KindsOf(SHA256, UUID), NoTensors: true},
			func(k, n string) bool { return (k == "sha256" || k == "uuid") && !strings.Contains(n, ":") }},
		{"xxh3 small chunks", Options{Kinds: KindsOf(XXH3), ChunkSize: 1000},
			func(k, _ string) bool { return k == "xxh3" }},
		{"all in 64 KiB + 1 chunks", Options{Kinds: AllHashes, ChunkSize: 64<<10 + 1},
			func(k, _ string) bool { return k != "uuid" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := filterLines(ref, tc.keep)
			if got := manifestText(t, m, tc.opts); got != want {
				t.Errorf("manifest differs from llama-gguf-hash's:\n%s", firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + g[i] + "\n want " + w[i]
		}
	}
	return "got " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}

// TestHashModelShardSets hashes shard sets, given any shard: the output is
// llama-gguf-hash's for each shard in turn, including a first shard without
// tensors (its file digests are those of no bytes).
func TestHashModelShardSets(t *testing.T) {
	src, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, tc := range []struct {
		prefix, manifest string
		limits           splitter.Limits
	}{
		{"tiny", "tiny-split20.all-uuid.manifest", splitter.Limits{MaxTensors: 20}},
		{"tiny0", "tiny0-split30-first-empty.all-uuid.manifest", splitter.Limits{MaxTensors: 30, MetadataOnlyFirst: true}},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			dir := t.TempDir()
			plan, err := splitter.Split(src, filepath.Join(dir, tc.prefix), tc.limits, nil)
			if err != nil {
				t.Fatal(err)
			}
			paths := plan.Paths(filepath.Join(dir, tc.prefix))
			m, err := gguf.Open(paths[len(paths)-1])
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			got := strings.ReplaceAll(manifestText(t, m, Options{Kinds: AllHashes | KindsOf(UUID)}), dir+string(filepath.Separator), "")
			if want := readFile(t, filepath.Join("testdata", tc.manifest)); got != want {
				t.Errorf("manifest differs from llama-gguf-hash's:\n%s", firstDiff(got, want))
			}
		})
	}
}

// stream returns n bytes of a xorshift64 sequence from seed.
func stream(n int, seed uint64) []byte {
	p := make([]byte, (n+7)&^7)
	s := seed
	for i := 0; i < len(p); i += 8 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		binary.LittleEndian.PutUint64(p[i:], s)
	}
	return p[:n]
}

// bigShape is a bf16 tensor of 4 GiB + 128 KiB, like the 7 GiB expert
// tensors of DeepSeek-R1 in bf16.
var bigShape = []int64{65536, 32769}

// writeBigModel writes a sparse model: two small tensors, then one of
// bigShape whose first MiB is data and the rest a hole (zeros). It takes 1
// MiB of disk where the file system has holes.
func writeBigModel(t testing.TB, path string) {
	infos := []gguf.TensorInfo{
		{Name: "a.weight", Shape: []int64{300}, Type: formats.F32},
		{Name: "c.weight", Shape: []int64{7}, Type: formats.F32},
		{Name: "big.weight", Shape: bigShape, Type: formats.BF16},
	}
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, p := range [][]byte{stream(1200, 1), stream(28, 2), stream(1<<20, 3)} {
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SkipRemaining(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSHA1Span checks the one deliberate oddity: llama-gguf-hash's sha1 (and
// so its uuid) sees only the first size mod 2^32 bytes of a tensor, because
// its SHA-1 code takes lengths as uint32_t. The expected lines came from
// llama-gguf-hash --sha1 --uuid on the file writeBigModel writes (named
// big.gguf); only 128 KiB of the big tensor are read.
func TestSHA1Span(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.gguf")
	writeBigModel(t, path)
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const want = `sha1      ce4b8cb4d6cd356fad7d6af5193cb2f9e12a7a33  big.gguf:a.weight
sha1      dc749f99979ab9bd493ce814bee4f0243fb9cb7a  big.gguf:c.weight
sha1      2711903842a500459c5f461023fa04dcc1973ba4  big.gguf:big.weight
sha1      e4be31dab5dc39e8eab2a9105a4b38a23a3b23e0  big.gguf
uuid      f5cede3c-fa7b-5c9b-8e4b-e9557fb13bcc  big.gguf
`
	got := strings.ReplaceAll(manifestText(t, m, Options{Kinds: KindsOf(SHA1, UUID)}), dir+string(filepath.Separator), "")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The same, from first principles: SHA-1 of the tensor's first 128 KiB.
	span := sha1Span(m.Tensors[2].Size)
	if span != 128<<10 {
		t.Fatalf("span %d", span)
	}
	sum := sha1.Sum(stream(int(span), 3))
	if !strings.Contains(got, hex.EncodeToString(sum[:])+"  big.gguf:big.weight") {
		t.Errorf("big.weight's sha1 is not that of its first %d bytes", span)
	}
}

// TestTensorHasher writes tensors in pieces of many sizes and checks the
// digests against the reference manifest, and the size checks.
func TestTensorHasher(t *testing.T) {
	m, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref := readFile(t, "testdata/tiny-deepseek2-bf16.all-uuid.manifest")
	h := NewTensorHasher(AllHashes, 0)
	for i, tn := range m.Tensors[:12] {
		data := make([]byte, tn.Size)
		if _, err := m.TensorReader(i).ReadAt(data, 0); err != nil {
			t.Fatal(err)
		}
		for _, piece := range []int{1, 63, 4096, len(data)} {
			if piece == 1 && len(data) > 1<<16 {
				continue
			}
			h.Reset(tn.Size)
			for p := data; len(p) > 0; {
				k := min(piece, len(p))
				if _, err := h.Write(p[:k]); err != nil {
					t.Fatal(err)
				}
				p = p[k:]
			}
			s, err := h.Sum()
			if err != nil {
				t.Fatal(err)
			}
			r := Result{File: tinyModel, Tensor: tn.Name, Sums: s}
			for _, k := range AllHashes.List() {
				if !strings.Contains(ref, r.Line(k)+"\n") {
					t.Errorf("%s in pieces of %d: %q is not in the manifest", tn.Name, piece, r.Line(k))
				}
			}
			if s.XXH64() != xxhash.Sum64(data) {
				t.Errorf("XXH64() = %x, want %x", s.XXH64(), xxhash.Sum64(data))
			}
		}
	}

	h = NewTensorHasher(KindsOf(XXH64), 10)
	if _, err := h.Write(make([]byte, 11)); !errors.Is(err, ErrSize) {
		t.Errorf("11 bytes into a 10-byte tensor: %v", err)
	}
	h.Write(make([]byte, 9))
	if _, err := h.Sum(); !errors.Is(err, ErrSize) {
		t.Errorf("Sum after 9 of 10 bytes: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewTensorHasher took UUID")
		}
	}()
	NewTensorHasher(KindsOf(UUID), 1)
}

func TestKinds(t *testing.T) {
	all := AllHashes | KindsOf(UUID)
	if got := all.String(); got != "xxh64,xxh3,sha1,sha256,uuid" {
		t.Errorf("List order %s", got)
	}
	var names []string
	for _, k := range all.ByStrength() {
		names = append(names, k.String())
	}
	if got := strings.Join(names, " "); got != "sha256 sha1 xxh64 xxh3 uuid" {
		t.Errorf("ByStrength %s", got)
	}
	for _, k := range all.List() {
		if p, ok := ParseKind(k.String()); !ok || p != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, p, ok)
		}
	}
	if _, ok := ParseKind("XXH64"); ok {
		t.Error("kind names are case-sensitive in llama-gguf-hash")
	}
	if got := Kind(9).String(); got != "Kind(9)" {
		t.Error(got)
	}
}

// TestHashModelEmitError stops at the first error of emit.
func TestHashModelEmitError(t *testing.T) {
	m, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	stop := errors.New("stop")
	calls := 0
	err = HashModel(m, Options{ChunkSize: 4096}, func(*Result) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Errorf("err %v after %d calls", err, calls)
	}
}

// TestHashModelShrunkFile reports a file cut short after it was opened.
func TestHashModelShrunkFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	data, err := os.ReadFile(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.Truncate(path, int64(len(data))/2); err != nil {
		t.Fatal(err)
	}
	err = HashModel(m, Options{}, func(*Result) error { return nil })
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("did the file shrink")) {
		t.Errorf("err = %v", err)
	}
}
