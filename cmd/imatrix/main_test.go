package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
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

// runCmd runs the command line and returns its exit status and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	status, out, errOut := runCmd(t, args...)
	if status != 0 {
		t.Fatalf("imatrix %s: status %d\n%s%s", strings.Join(args, " "), status, out, errOut)
	}
	return out
}

func mustOpen(t *testing.T, path string) *imatrix.Matrix {
	t.Helper()
	m, err := imatrix.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameMeans fails unless a and b hold the same entries with bit-identical
// per-column means.
func sameMeans(t *testing.T, a, b *imatrix.Matrix) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("%d entries vs %d", a.Len(), b.Len())
	}
	for _, e := range a.Entries {
		f, ok := b.Lookup(e.Name)
		if !ok {
			t.Fatalf("%s missing", e.Name)
		}
		x, y := e.Mean(), f.Mean()
		if len(x) != len(y) {
			t.Fatalf("%s: %d values vs %d", e.Name, len(x), len(y))
		}
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("%s[%d]: mean %v vs %v", e.Name, i, x[i], y[i])
			}
		}
	}
}

func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	viaModel := filepath.Join(dir, "model.gguf")
	inferred := filepath.Join(dir, "inferred.imatrix")
	back := filepath.Join(dir, "back.dat")
	mustRun(t, "convert", src, viaModel, "--model", model)
	mustRun(t, "convert", src, inferred, "--to", "gguf")
	mustRun(t, "convert", viaModel, back)

	orig := mustOpen(t, src)
	for _, path := range []string{viaModel, inferred, back} {
		m := mustOpen(t, path)
		sameMeans(t, orig, m)
		if m.Chunks != orig.Chunks || strings.Join(m.Datasets, "|") != strings.Join(orig.Datasets, "|") {
			t.Errorf("%s: chunks %d datasets %q, want %d %q", path, m.Chunks, m.Datasets, orig.Chunks, orig.Datasets)
		}
	}
	g := mustOpen(t, viaModel)
	if g.Format != imatrix.FormatGGUF || mustOpen(t, back).Format != imatrix.FormatDat {
		t.Fatalf("formats %s", g.Format)
	}
	// The model and the inference agree on the expert layout; attn_k_b and
	// attn_v_b are per-head only with the model.
	gi := mustOpen(t, inferred)
	for name, want := range map[string][2]int{
		"blk.1.ffn_up_exps.weight":   {8, 8},
		"blk.3.ffn_down_exps.weight": {8, 8},
		"blk.2.attn_v_b.weight":      {2, 1},
		"blk.0.ffn_down.weight":      {1, 1},
	} {
		e, _ := g.Lookup(name)
		f, _ := gi.Lookup(name)
		if e.Matrices() != want[0] || f.Matrices() != want[1] {
			t.Errorf("%s: %d matrices with --model, %d inferred; want %v", name, e.Matrices(), f.Matrices(), want)
		}
	}

	// Quantizing with the GGUF copy gives the same tensors as with the .dat.
	// Q4_K_M covers q4_K (with expert 5's empty slices), q5_K, q6_K and
	// q8_0; IMATRIX_LONG=1 adds i-quant file types (minutes on a busy
	// machine).
	in, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	types := []string{"Q4_K_M"}
	if os.Getenv("IMATRIX_LONG") != "" {
		types = append(types, "IQ4_KS", "IQ2_K", "IQ2_XS")
	}
	for _, ftName := range types {
		t.Run(ftName, func(t *testing.T) {
			ft, _, err := recipes.ParseFileType(ftName)
			if err != nil {
				t.Fatal(err)
			}
			outs := map[string]string{}
			for _, im := range []string{src, viaModel} {
				out := filepath.Join(dir, ftName+"-"+filepath.Base(im)+".gguf")
				plan, err := pipeline.Build(in, pipeline.Config{Selection: recipes.Options{FileType: ft},
					Imatrix: mustOpen(t, im), ImatrixPath: im, Output: out})
				if err != nil {
					t.Fatal(err)
				}
				for _, tp := range plan.Tensors {
					if tp.Quantize && !quantize.Supported(tp.Type) {
						t.Skipf("no quantizer for %s yet", tp.Type)
					}
				}
				if err := pipeline.Run(context.Background(), in, plan.Outputs, pipeline.Options{Threads: 2}); err != nil {
					t.Fatal(err)
				}
				outs[im] = out
			}
			sameQuantized(t, outs[src], outs[viaModel])
		})
	}
}

// sameQuantized compares two quantized models: the same metadata apart from
// the quantize.imatrix.* keys, the same tensors with the same bytes.
func sameQuantized(t *testing.T, a, b string) {
	t.Helper()
	ma, err := gguf.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ma.Close()
	mb, err := gguf.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	keys := func(md gguf.Metadata) []gguf.KV {
		var out []gguf.KV
		for _, kv := range md {
			if !strings.HasPrefix(kv.Key, "quantize.imatrix.") {
				out = append(out, kv)
			}
		}
		return out
	}
	ka, kb := keys(ma.Metadata), keys(mb.Metadata)
	if len(ka) != len(kb) {
		t.Fatalf("%d metadata keys vs %d", len(ka), len(kb))
	}
	for i := range ka {
		if ka[i].Key != kb[i].Key || !ka[i].Value.Equal(kb[i].Value) {
			t.Fatalf("metadata %s differs", ka[i].Key)
		}
	}
	if len(ma.Tensors) != len(mb.Tensors) {
		t.Fatalf("%d tensors vs %d", len(ma.Tensors), len(mb.Tensors))
	}
	for i, ta := range ma.Tensors {
		tb := mb.Tensors[i]
		if ta.Name != tb.Name || ta.Type != tb.Type {
			t.Fatalf("tensor %d: %s %s vs %s %s", i, ta.Name, ta.Type, tb.Name, tb.Type)
		}
		da, _ := io.ReadAll(ma.TensorReader(i))
		db, _ := io.ReadAll(mb.TensorReader(i))
		if !bytes.Equal(da, db) {
			t.Fatalf("tensor %s (%s): bytes differ", ta.Name, ta.Type)
		}
	}
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	full := golden.Path(t, "e2e", "tiny-ds2.full.imatrix.dat")
	self := filepath.Join(dir, "self.dat")
	mustRun(t, "merge", src, src, "-o", self)
	sameMeans(t, mustOpen(t, src), mustOpen(t, self))
	if m := mustOpen(t, self); m.Chunks != 200 || len(m.Datasets) != 1 {
		t.Errorf("self merge: chunks %d datasets %q", m.Chunks, m.Datasets)
	}
	// Two different files, one through GGUF: the call-weighted mean, per
	// expert; expert 5 only has data in the full file.
	g := filepath.Join(dir, "full.gguf")
	mustRun(t, "convert", full, g, "--model", golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	both := filepath.Join(dir, "both.gguf")
	mustRun(t, "merge", src, g, "-o", both)
	a, b, m := mustOpen(t, src), mustOpen(t, full), mustOpen(t, both)
	if m.Chunks != a.Chunks+b.Chunks {
		t.Errorf("chunks %d", m.Chunks)
	}
	for _, e := range a.Entries {
		f, _ := b.Lookup(e.Name)
		got, _ := m.Lookup(e.Name)
		mean := got.Mean()
		for i := range e.Sums {
			want := float32((float64(e.Sums[i]) + float64(f.Sums[i])) / (e.Counts[0] + f.Counts[0]))
			if mean[i] != want {
				t.Fatalf("%s[%d]: merged mean %v, want %v", e.Name, i, mean[i], want)
			}
		}
	}
	// Per-expert counts folded into a .dat keep every mean.
	bothDat := filepath.Join(dir, "both.dat")
	mustRun(t, "convert", both, bothDat)
	sameMeans(t, m, mustOpen(t, bothDat))
	if status, _, errOut := runCmd(t, "merge", src, "-o", src); status != 1 || !strings.Contains(errOut, "is the input") {
		t.Errorf("merge over an input: status %d %q", status, errOut)
	}
}

// A .dat file records one dataset name: a merge of GGUF files written as
// .dat keeps the last (as llama-imatrix writes it), says so, and its
// 'wrote' line counts the one written (it counted every input's).
func TestMergeToDatDatasets(t *testing.T) {
	dir := t.TempDir()
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	g := filepath.Join(dir, "a.gguf")
	mustRun(t, "convert", src, g, "--model", golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	out := filepath.Join(dir, "both.dat")
	status, stdout, stderr := runCmd(t, "merge", g, g, "-o", out)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if !strings.Contains(stdout, "chunks, 1 datasets)") {
		t.Errorf("wrote line %q: want 1 dataset, what the .dat holds", stdout)
	}
	if !strings.Contains(stderr, `a .dat file records one dataset: "synthetic-calibration.txt", the last`) || !strings.Contains(stderr, "the 1 other(s) are not recorded") {
		t.Errorf("no note of the dataset left out: %q", stderr)
	}
	if m := mustOpen(t, out); len(m.Datasets) != 1 {
		t.Errorf("datasets %q", m.Datasets)
	}
	// GGUF to GGUF keeps both, and says nothing.
	both := filepath.Join(dir, "both.gguf")
	status, stdout, stderr = runCmd(t, "merge", g, g, "-o", both)
	if status != 0 || !strings.Contains(stdout, "2 datasets)") || strings.Contains(stderr, "records one dataset") {
		t.Errorf("to GGUF: status %d %q %q", status, stdout, stderr)
	}
}

func TestCheckCommand(t *testing.T) {
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	check := func(t *testing.T, file string, args ...string) (int, map[string][]imatrix.Finding) {
		t.Helper()
		status, out, errOut := runCmd(t, append([]string{"check", "--json", "--model", model, file}, args...)...)
		var res checkResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("status %d, output %q %q: %v", status, out, errOut, err)
		}
		byKind := map[string][]imatrix.Finding{}
		for _, f := range res.Findings {
			byKind[f.Kind] = append(byKind[f.Kind], f.Finding)
		}
		return status, byKind
	}
	// Expert 5 has no data in every expert tensor, and that is the only gap.
	for _, ft := range []string{"", "IQ4_KS", "IQ2_XS"} {
		status, kinds := check(t, golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"), strings.Fields(ft)...)
		if status != 0 {
			t.Errorf("%s: status %d", ft, status)
		}
		empty := kinds[imatrix.KindEmpty]
		if len(empty) != 9 {
			t.Errorf("%s: %d tensors with empty experts, want 9: %v", ft, len(empty), empty)
		}
		for _, f := range empty {
			if !strings.Contains(f.Tensor, "_exps.") || len(f.Matrices) != 1 || f.Matrices[0] != 5 || f.Of != 8 {
				t.Errorf("%s: %+v", ft, f)
			}
		}
		for kind, fs := range kinds {
			if kind != imatrix.KindEmpty && kind != imatrix.KindNotNeeded && kind != imatrix.KindFallback {
				t.Errorf("%s: unexpected %s findings %v", ft, kind, fs)
			}
		}
	}
	status, kinds := check(t, golden.Path(t, "e2e", "tiny-ds2.full.imatrix.dat"), "IQ2_XS")
	if status != 0 || len(kinds) != 1 || len(kinds[imatrix.KindNotNeeded]) != 1 {
		t.Errorf("full file: status %d findings %v", status, kinds)
	}
	if status, out, _ := runCmd(t, "check", "--strict", "--model", model, golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")); status != 1 || !strings.Contains(out, "FAIL (--strict)") {
		t.Errorf("--strict with warnings: status %d, output:\n%s", status, out)
	}
	// A recipe that cannot be read is no usage error: exit 1, as for a
	// missing importance matrix; one that cannot be parsed is (exit 2).
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("exps=q9_9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		recipe string
		status int
	}{{filepath.Join(t.TempDir(), "nope.txt"), 1}, {bad, 2}} {
		if status, _, errOut := runCmd(t, "check", "--recipe", tc.recipe, "--model", model, golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")); status != tc.status {
			t.Errorf("--recipe %s: status %d, want %d: %s", tc.recipe, status, tc.status, errOut)
		}
	}

	// A file computed with standard attention: no attn_k_b / attn_v_b data.
	// attn_v_b borrows attn_kv_b's for each head; attn_k_b has none, which
	// IQ2_XS refuses.
	m := mustOpen(t, golden.Path(t, "e2e", "tiny-ds2.full.imatrix.dat"))
	m.Filter(nil, []string{"attn_k_b", "attn_v_b"})
	std := filepath.Join(t.TempDir(), "std.dat")
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(std, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	status, kinds = check(t, std, "IQ2_XS")
	if status != 0 || len(kinds[imatrix.KindMLA]) != 4 || len(kinds[imatrix.KindNoData]) != 4 {
		t.Errorf("standard-attention file: status %d findings %v", status, kinds)
	}
	for _, f := range kinds[imatrix.KindNoData] {
		if !strings.HasSuffix(f.Tensor, "attn_k_b.weight") || !strings.Contains(f.Message, "MLA") {
			t.Errorf("no data: %+v", f)
		}
	}
	// Without its data, IQ2_XS refuses ffn_up_exps.
	m.Filter(nil, []string{"blk.2.ffn_up_exps"})
	buf.Reset()
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(std, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	status, kinds = check(t, std, "IQ2_XS")
	refused := kinds[imatrix.KindRefused]
	if status != 1 || len(refused) != 1 || refused[0].Tensor != "blk.2.ffn_up_exps.weight" {
		t.Errorf("missing ffn_up_exps: status %d refused %v", status, refused)
	}
	status, out, _ := runCmd(t, "check", "--model", model, std, "IQ2_XS")
	if status != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, "refuses iq2_xs") {
		t.Errorf("text output, status %d:\n%s", status, out)
	}
}

func TestInspectAndStats(t *testing.T) {
	src := golden.Path(t, "e2e", "tiny-ds2.imatrix.dat")
	out := mustRun(t, "inspect", src)
	for _, want := range []string{"legacy .dat", "50 entries", "100 chunks", "synthetic-calibration.txt", "8 experts inferred", "12.5%"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	var rep inspectReport
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "--json", src)), &rep); err != nil {
		t.Fatal(err)
	}
	gaps := 0
	for _, tr := range rep.Tensors {
		if len(tr.Empty) > 0 {
			gaps++
			if tr.Matrices != 8 || tr.Empty[0] != 5 || tr.MatricesBy != "inferred" {
				t.Errorf("%+v", tr)
			}
		}
	}
	if gaps != 9 || rep.Experts != 8 || rep.Chunks != 100 {
		t.Errorf("inspect --json: %d gaps, %d experts, %d chunks", gaps, rep.Experts, rep.Chunks)
	}

	svg := filepath.Join(t.TempDir(), "chart.svg")
	out = mustRun(t, "stats", src, "--svg", svg)
	if !strings.Contains(out, "×") || !strings.Contains(out, "no data: 5") {
		t.Errorf("stats output:\n%s", out)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	model := golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")
	raw := golden.ReadFile(t, "e2e", "tiny-ds2.imatrix.dat")
	trunc := filepath.Join(dir, "trunc.dat")
	if err := os.WriteFile(trunc, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		file string
		want string
	}{
		{[]string{"inspect", model}, model, "not an importance-matrix file"},
		{[]string{"check", "--model", model, model}, model, "deepseek2 model"},
		{[]string{"inspect", trunc}, trunc, "malformed"},
		{[]string{"stats", trunc}, trunc, "malformed"},
		{[]string{"convert", trunc, filepath.Join(dir, "x.gguf")}, trunc, "malformed"},
		{[]string{"merge", golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"), trunc, "-o", filepath.Join(dir, "m.dat")}, trunc, "malformed"},
	} {
		status, _, errOut := runCmd(t, tc.args...)
		if status != 1 || !strings.Contains(errOut, tc.file) || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: status %d, %q", tc.args, status, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.gguf")); err == nil {
		t.Error("a failed convert left an output")
	}
	for _, args := range [][]string{{"inspect"}, {"convert", "a"}, {"merge", "a"}, {"check", "a"}, {"convert", "a", "b", "--to", "xml"}, {"nosuch"}} {
		if status, _, _ := runCmd(t, args...); status != 2 {
			t.Errorf("%v: status %d, want 2", args, status)
		}
	}
}

// convert and merge report the entries and chunks of the file they wrote,
// which a conversion changes: a .dat from a GGUF file leaves out entries
// without data and counts chunks of its chunk size, a GGUF file from a
// .dat counts the largest call count. They reported the input's.
func TestWroteLineIsTheOutput(t *testing.T) {
	dir := t.TempDir()
	src := &imatrix.Matrix{Format: imatrix.FormatGGUF, Chunks: 99, ChunkSize: 4, Entries: []imatrix.Entry{
		{Name: "blk.0.attn_q.weight", Sums: []float32{1, 2}, Counts: []float64{41}},
		{Name: "blk.0.attn_k.weight", Sums: []float32{0, 0}, Counts: []float64{0}},
	}}
	in := filepath.Join(dir, "in.gguf")
	if err := imatrix.WriteGGUF(in, src, nil, 4, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"convert", in, filepath.Join(dir, "a.dat")}, "a.dat"},
		{[]string{"convert", filepath.Join(dir, "a.dat"), filepath.Join(dir, "b.gguf")}, "b.gguf"},
		{[]string{"merge", in, "-o", filepath.Join(dir, "c.dat")}, "c.dat"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: status %d: %s", tc.args, code, stderr.String())
		}
		m, err := imatrix.Open(filepath.Join(dir, tc.out))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("(%s, %d entries, %d chunks", m.Format, m.Len(), m.Chunks)
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("%v: %q, want %q", tc.args, stdout.String(), want)
		}
	}
}

// GGUF -> .dat divides token counts by the file's chunk size, or by
// --chunk-size where the file records none (it took 512 whatever the flag).
func TestConvertChunkSizeForGGUFWithout(t *testing.T) {
	dir := t.TempDir()
	// A GGUF file without imatrix.chunk_size: written by hand.
	md := gguf.Metadata{}
	md.Set("general.type", gguf.StringValue("imatrix"))
	in := filepath.Join(dir, "in.gguf")
	w, err := gguf.Create(in, md, []gguf.TensorInfo{
		{Name: "blk.0.attn_q.weight.counts", Type: formats.F32, Shape: []int64{1, 1}},
		{Name: "blk.0.attn_q.weight.in_sum2", Type: formats.F32, Shape: []int64{2, 1}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float32{4096, 8192, 4096} {
		if err := binary.Write(w, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		calls float64
	}{
		{nil, 8},
		{[]string{"--chunk-size", "4096"}, 1},
	} {
		out := filepath.Join(dir, fmt.Sprintf("out%v.dat", tc.calls))
		var stdout, stderr bytes.Buffer
		if code := run(append(append([]string{"convert"}, tc.flags...), in, out), &stdout, &stderr); code != 0 {
			t.Fatalf("status %d: %s", code, stderr.String())
		}
		m, err := imatrix.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if e := m.Entries[0]; e.Counts[0] != tc.calls || e.Mean()[0] != 2 {
			t.Errorf("%v: calls %v, means %v", tc.flags, e.Counts, e.Mean())
		}
	}
}

// Names and datasets from a hostile file: inspect's table keeps one aligned
// row per entry (a 0xff byte is the tabwriter's escape character, a tab or
// newline a cell or row: the row came out unaligned, with raw tabs), and
// the SVG of stats stays well-formed XML (control characters were written
// raw, which XML does not allow).
func TestOddNamesInspectAndSVG(t *testing.T) {
	dir := t.TempDir()
	m := &imatrix.Matrix{Format: imatrix.FormatDat, Chunks: 3, Datasets: []string{"evil\x01\x1b[31m<&>\xff"}, Entries: []imatrix.Entry{
		{Name: "blk.0.attn_q\x1b[2J\x01.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{3}},
		{Name: "blk.1.attn_q.weight\xff", Sums: []float32{1, 2, 3, 4}, Counts: []float64{3}},
		{Name: "blk.2.attn_q\tx\ny.weight", Sums: []float32{1, 2, 3, 4}, Counts: []float64{3}},
	}}
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "odd.dat")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCmd(t, "inspect", in)
	if status != 0 {
		t.Fatalf("inspect: status %d: %s", status, errOut)
	}
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "blk.") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 3 || strings.Contains(out, "\t") {
		t.Fatalf("inspect table:\n%s", out)
	}
	for _, r := range rows {
		if len(r) != len(rows[0]) || !strings.HasSuffix(r, "-") {
			t.Errorf("row not aligned with the others:\n%s", out)
		}
	}
	svg := filepath.Join(dir, "odd.svg")
	if status, _, errOut := runCmd(t, "stats", "--svg", svg, in); status != 0 {
		t.Fatalf("stats: status %d: %s", status, errOut)
	}
	raw, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(raw))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
	}
}

// GGUF -> .dat says what the conversion leaves out (an entry without any
// data) and fills in (an expert without data stored as importance 1).
func TestConvertWarnsNoData(t *testing.T) {
	dir := t.TempDir()
	src := &imatrix.Matrix{Format: imatrix.FormatGGUF, ChunkSize: 512, Entries: []imatrix.Entry{
		{Name: "blk.0.attn_k.weight", Sums: []float32{0, 0}, Counts: []float64{0}},
		{Name: "blk.0.ffn_up_exps.weight", Sums: []float32{1, 2, 0, 0}, Counts: []float64{0.4, 512}},
	}}
	in := filepath.Join(dir, "in.gguf")
	if err := imatrix.WriteGGUF(in, src, nil, 512, false); err != nil {
		t.Fatal(err)
	}
	status, _, errOut := runCmd(t, "convert", in, filepath.Join(dir, "out.dat"))
	if status != 0 || !strings.Contains(errOut, "blk.0.attn_k.weight: no data at all: left out of the .dat") ||
		!strings.Contains(errOut, "blk.0.ffn_up_exps.weight: 1 of 2 matrices without data: stored with importance 1") {
		t.Errorf("status %d:\n%s", status, errOut)
	}
}

// A finding about an entry whose name holds a newline is one line: the
// name made a line of its own ("ok all good" below a real finding).
func TestCheckNameWithNewline(t *testing.T) {
	m := mustOpen(t, golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	m.Entries = append(m.Entries, imatrix.Entry{Name: "blk.9.fake\nok all good: FAKE", Sums: []float32{1}, Counts: []float64{1}})
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nl.dat")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCmd(t, "check", "-v", "--model", golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"), path, "Q4_K_M")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "ok all good") {
			t.Fatalf("a name made a line of its own:\n%s", out)
		}
	}
	if !strings.Contains(out, `blk.9.fake\x0aok all good: FAKE`) {
		t.Errorf("the name is not shown escaped:\n%s", out)
	}
}
