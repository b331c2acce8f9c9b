package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/splitter"
)

// The tests of issue 20 at the package's level: sidecars, reuse, resume.
// The command-line cases (byte-identical to the reference's outputs, a
// real kill -9) are in cmd/gquant/iterate_test.go.

// q4kmConfig is Q4_K_M with the tiny model's importance matrix, writing out.
func q4kmConfig(t *testing.T, out string) (*gguf.Model, Config) {
	m, im := openGolden(t)
	return m, Config{Selection: recipes.Options{FileType: recipes.FileTypeQ4_K_M}, Imatrix: im,
		ImatrixPath: "tiny-ds2.imatrix.dat", Output: out}
}

// runConfig plans cfg and runs it with opt.
func runConfig(t *testing.T, ctx context.Context, m *gguf.Model, cfg Config, opt Options) (*Plan, error) {
	t.Helper()
	plan, err := Build(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return plan, Run(ctx, m, plan.Outputs, opt)
}

func xxh(t *testing.T, r io.Reader) string {
	t.Helper()
	d := xxhash.New()
	if _, err := io.Copy(d, r); err != nil {
		t.Fatal(err)
	}
	return hashString(d.Sum64())
}

// TestSidecarRecords checks every field of every record of a Q4_K_M run
// (quantized tensors with and without importance data, copied f32 ones)
// against the input, the output and the plan.
func TestSidecarRecords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.gguf")
	m, cfg := q4kmConfig(t, out)
	plan, err := runConfig(t, context.Background(), m, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ReadSidecar(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	st, _ := os.Stat(out)
	if sc.Schema != SidecarSchema || sc.File != "out.gguf" || sc.Size != st.Size() || len(sc.Tensors) != len(got.Tensors) {
		t.Fatalf("sidecar %s %s %d with %d tensors; file of %d bytes with %d", sc.Schema, sc.File, sc.Size, len(sc.Tensors), st.Size(), len(got.Tensors))
	}
	copied, withImatrix := 0, 0
	for i, r := range sc.Tensors {
		pt := plan.Outputs[0].Tensors[i]
		src := m.Tensors[pt.Source]
		gt := got.Tensors[i]
		if r.Name != gt.Name || r.Type != gt.Type.String() || r.InputType != src.Type.String() || r.Offset != got.Shards[0].DataOffset+gt.Offset || r.Size != gt.Size {
			t.Errorf("%d: record %+v does not describe %s (%s at %d)", i, r, gt.Name, gt.Type, gt.Offset)
		}
		if want := xxh(t, m.TensorReader(pt.Source)); r.Input != want {
			t.Errorf("%s: input hash %s, want %s", r.Name, r.Input, want)
		}
		if want := xxh(t, got.TensorReader(i)); r.Output != want {
			t.Errorf("%s: output hash %s, want %s", r.Name, r.Output, want)
		}
		switch {
		case r.Copied:
			copied++
			if r.Kernel != "" || r.Imatrix != "" || r.Input != r.Output {
				t.Errorf("copied %s: %+v", r.Name, r)
			}
		case r.Kernel != quantize.KernelVersion:
			t.Errorf("%s: kernel %q", r.Name, r.Kernel)
		case (r.Imatrix != "") != pt.hasImatrix() || r.Imatrix != hashImatrix(importanceData(t, pt)):
			t.Errorf("%s: importance hash %q, has data %v", r.Name, r.Imatrix, pt.hasImatrix())
		case r.Imatrix != "":
			withImatrix++
		}
	}
	if copied == 0 || withImatrix == 0 {
		t.Errorf("%d copied tensors, %d with importance data: the case covers too little", copied, withImatrix)
	}
	// The schema's field names, as the README documents them.
	raw, _ := os.ReadFile(SidecarPath(out))
	for _, key := range []string{`"schema": "gquant.sidecar/1"`, `"file"`, `"size"`, `"tensors"`, `"name"`, `"shape"`, `"input_type"`,
		`"input_xxh64"`, `"imatrix_xxh64"`, `"type"`, `"copied"`, `"kernel"`, `"offset"`, `"xxh64"`, `"header_xxh64"`, `"set_xxh64"`} {
		if !bytes.Contains(raw, []byte(key)) {
			t.Errorf("sidecar has no %s", key)
		}
	}
}

// notes collects Options.Notes.
type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, s)
}

func (n *notes) String() string { return strings.Join(n.lines, "\n") }

// TestReuseRewindsAlteredTensor alters one byte near the end of an earlier
// output's tensor that spans several byte pieces: its first pieces are
// written before the hash can tell, then rewound, and the tensor is
// quantized; the result is a fresh run's.
func TestReuseRewindsAlteredTensor(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.gguf")
	m, cfg := q4kmConfig(t, fresh)
	opt := Options{PieceWeights: 1 << 12} // byte pieces of 16 KiB
	if _, err := runConfig(t, context.Background(), m, cfg, opt); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(fresh)
	prev := filepath.Join(dir, "prev.gguf")
	os.WriteFile(prev, want, 0o644)
	sc, err := ReadSidecar(fresh)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(SidecarPath(prev), must(json.Marshal(sc)), 0o644)
	// The largest quantized tensor.
	var victim TensorRecord
	for _, r := range sc.Tensors {
		if !r.Copied && r.Size > victim.Size {
			victim = r
		}
	}
	if victim.Size < 4*16<<10 {
		t.Fatalf("largest tensor %s has %d bytes: not several pieces", victim.Name, victim.Size)
	}
	b, _ := os.ReadFile(prev)
	b[victim.Offset+victim.Size-3] ^= 0x40
	os.WriteFile(prev, b, 0o644)

	var n notes
	reuse, err := OpenReuse([]string{prev}, n.add)
	if err != nil {
		t.Fatal(err)
	}
	defer reuse.Close()
	out := filepath.Join(dir, "out.gguf")
	cfg.Output = out
	opt.Reuse, opt.Notes = reuse, n.add
	if _, err := runConfig(t, context.Background(), m, cfg, opt); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Error("output differs from a fresh run")
	}
	quantized := 0
	for _, r := range sc.Tensors {
		if !r.Copied {
			quantized++
		}
	}
	for _, w := range []string{victim.Name + " in " + prev + " is not the tensor its sidecar recorded",
		"reused " + strconv.Itoa(quantized-1) + " of " + strconv.Itoa(quantized) + " tensors"} {
		if !strings.Contains(n.String(), w) {
			t.Errorf("notes do not say %q:\n%s", w, n.String())
		}
	}
	// The new output's sidecar is a fresh run's.
	again, _ := os.ReadFile(SidecarPath(out))
	var sc2 Sidecar
	json.Unmarshal(again, &sc2)
	sc2.File = sc.File
	if !bytes.Equal(must(json.Marshal(sc2)), must(json.Marshal(sc))) {
		t.Error("sidecar differs from a fresh run's")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestResumeAfterCancel stops a run with Keep at about half its tensors,
// and resumes it: the bytes are a fresh run's. Then the cases where a kept
// file must not be trusted: a complete tensor altered in it, another plan.
func TestResumeAfterCancel(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.gguf")
	m, cfg := q4kmConfig(t, fresh)
	if _, err := runConfig(t, context.Background(), m, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(fresh)
	out := filepath.Join(dir, "out.gguf")
	cfg.Output = out

	// stopAtHalf runs cfg with Keep until half the tensors are finished.
	stopAtHalf := func() *Plan {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		plan, err := runConfig(t, ctx, m, cfg, Options{Keep: true, Threads: 1, Progress: cancelAtHalf(cancel)})
		if err != context.Canceled {
			t.Fatalf("interrupted run: %v", err)
		}
		temps, _ := gguf.TempFiles(out)
		if len(temps) != 2 {
			t.Fatalf("kept %v, want the temporary file and its progress record", temps)
		}
		return plan
	}
	resume := func(plan *Plan) (*Resumable, string) {
		t.Helper()
		var n notes
		res, err := FindResumable(context.Background(), m, plan.Outputs, n.add)
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(context.Background(), m, plan.Outputs, Options{Resume: res, Keep: true}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want) {
			t.Error("resumed output differs from a fresh run")
		}
		if sc, err := ReadSidecar(out); err != nil || len(sc.Tensors) != len(plan.Outputs[0].Tensors) {
			t.Errorf("sidecar after resume: %v", err)
		}
		if temps, _ := gguf.TempFiles(out); len(temps) != 0 {
			t.Errorf("left behind: %v", temps)
		}
		os.Remove(out)
		return res[0], n.String()
	}

	plan := stopAtHalf()
	r, said := resume(plan)
	n := len(plan.Outputs[0].Tensors)
	if r == nil || r.Done < n/2 || r.Done > n/2+4 {
		t.Fatalf("resumed %v of %d tensors; notes %s", r != nil, n, said)
	}
	if !strings.Contains(said, "resuming "+out) {
		t.Errorf("notes: %s", said)
	}

	// A complete tensor altered in the kept file: resumed from there.
	plan = stopAtHalf()
	temps, _ := gguf.TempFiles(out)
	_, recs, err := readJournal(journalPath(temps[0].Path))
	if err != nil || len(recs) < 3 {
		t.Fatalf("progress record: %v, %d records", err, len(recs))
	}
	f, _ := os.OpenFile(temps[0].Path, os.O_RDWR, 0)
	f.WriteAt([]byte{0xff, 0xfe}, recs[2].Offset)
	f.Close()
	r, said = resume(plan)
	if r == nil {
		t.Fatalf("not resumed; notes %s", said)
	}
	if r.Done != 2 || !strings.Contains(said, recs[2].Name+": its bytes in the temporary file are not the recorded ones") {
		t.Errorf("resumed at %d, want 2; notes %s", r.Done, said)
	}

	// Another plan: refused, the file kept (a typo must not cost the
	// interrupted run's work).
	stopAtHalf()
	other := cfg
	other.Selection.FileType = recipes.FileTypeQ5_K_M
	plan2, err := Build(m, other)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := gguf.TempFiles(out)
	var nn notes
	res, err := FindResumable(context.Background(), m, plan2.Outputs, nn.add)
	if !errors.Is(err, ErrNotResumable) || res != nil || !strings.Contains(nn.String(), "cannot be resumed") {
		t.Errorf("other plan: %v %+v; notes %s", err, res, nn.String())
	}
	if temps, _ := gguf.TempFiles(out); len(temps) != len(before) || len(temps) == 0 {
		t.Errorf("temporary files %v, before %v", temps, before)
	}

	// The same header, but the first tensor made with other importance
	// data (another imatrix of the same name): refused as well, not
	// started over from tensor 0.
	plan3, err := Build(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := &plan3.Outputs[0].Tensors[0]
	t0.Imatrix = make([]float32, t0.Shape[0])
	for i := range t0.Imatrix {
		t0.Imatrix[i] = 1
	}
	nn = notes{}
	res, err = FindResumable(context.Background(), m, plan3.Outputs, nn.add)
	if !errors.Is(err, ErrNotResumable) || res != nil || !strings.Contains(nn.String(), t0.Name+" was made with other importance data") {
		t.Errorf("other importance data: %v %+v; notes %s", err, res, nn.String())
	}
	if temps, _ := gguf.TempFiles(out); len(temps) != len(before) {
		t.Errorf("temporary files %v, before %v", temps, before)
	}
}

// TestResumeIgnoresTornRecord: a progress record cut in its last line (a
// crash while it was written) counts the lines before it.
func TestResumeIgnoresTornRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.progress")
	rec := TensorRecord{Name: "a", Input: hashString(1), Output: hashString(2)}
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(progressHeader{Schema: progressSchema, File: "x.gguf", Size: 10})
	json.NewEncoder(&b).Encode(rec)
	line := must(json.Marshal(rec))
	b.Write(line[:len(line)/2])
	os.WriteFile(path, b.Bytes(), 0o644)
	hdr, recs, err := readJournal(path)
	if err != nil || hdr.File != "x.gguf" || len(recs) != 1 {
		t.Errorf("%+v %v %v", hdr, recs, err)
	}
}

// TestReadSidecarRefuses: other schemas and malformed hashes are errors,
// a missing sidecar is os.ErrNotExist.
func TestReadSidecarRefuses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	if _, err := ReadSidecar(out); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
	for _, s := range []string{`{"schema":"gquant.sidecar/2"}`, `{"schema":"gquant.sidecar/1","tensors":[{"input_xxh64":"12","xxh64":"0000000000000000"}]}`, `not json`} {
		os.WriteFile(SidecarPath(out), []byte(s), 0o644)
		if _, err := ReadSidecar(out); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

// BesideBytes, which the free-space check adds to an output's size, bounds
// what a run writes beside it: its progress record at its largest and its
// sidecar (a run that passed the check stopped on its last record when the
// file system had room for the output alone).
func TestBesideBytesBoundsRecords(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	m, cfg := q4kmConfig(t, out)
	var journal int64
	plan, err := runConfig(t, context.Background(), m, cfg, Options{Threads: 2, Progress: func(Event) {
		paths, _ := filepath.Glob(filepath.Join(dir, ".o.gguf.tmp-*.progress"))
		for _, p := range paths {
			if st, err := os.Stat(p); err == nil {
				journal = max(journal, st.Size())
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(SidecarPath(out))
	if err != nil {
		t.Fatal(err)
	}
	bound := BesideBytes(plan.Outputs[0])
	if used := journal + st.Size(); journal == 0 || used+3*(64<<10) > bound || bound > 8*used+3*(64<<10) {
		t.Errorf("progress record %d and sidecar %d bytes; BesideBytes %d", journal, st.Size(), bound)
	}
}

// TestReusePartialSet: --reuse of a shard set some of whose shards are
// missing (a machine of a job array holds its own part) reuses the
// tensors of the shards present, and the output is a fresh run's.
func TestReusePartialSet(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.gguf")
	m, cfg := q4kmConfig(t, fresh)
	if _, err := runConfig(t, context.Background(), m, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(fresh)
	prev := cfg
	prev.Output = filepath.Join(dir, "prev")
	prev.Split = &splitter.Limits{MaxTensors: 30}
	plan, err := runConfig(t, context.Background(), m, prev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Outputs) != 3 {
		t.Fatalf("%d shards, want 3", len(plan.Outputs))
	}
	if err := os.Remove(plan.Outputs[0].Path); err != nil {
		t.Fatal(err)
	}
	// Named by a shard present, or by the one missing: every machine of
	// a job array has the same command line, which names one shard.
	for _, named := range []string{plan.Outputs[1].Path, plan.Outputs[0].Path} {
		r, err := OpenReuse([]string{named}, nil)
		if err != nil {
			t.Fatalf("a set without its first shard, named by %s: %v", filepath.Base(named), err)
		}
		if got := r.Paths(); len(got) != 2 || got[0] != plan.Outputs[1].Path || got[1] != plan.Outputs[2].Path {
			t.Errorf("named by %s, reads %v, want the two shards present", filepath.Base(named), got)
		}
		r.Close()
	}
	// None of the set present: a wrong path is an error naming it.
	if r, err := OpenReuse([]string{filepath.Join(dir, "other-00001-of-00003.gguf")}, nil); err == nil || !strings.Contains(err.Error(), "other-00001-of-00003.gguf") {
		r.Close()
		t.Errorf("a set none of whose shards exists: %v", err)
	}
	var n notes
	reuse, err := OpenReuse([]string{plan.Outputs[1].Path}, n.add)
	if err != nil {
		t.Fatal(err)
	}
	defer reuse.Close()
	cfg.Output = filepath.Join(dir, "out.gguf")
	if _, err := runConfig(t, context.Background(), m, cfg, Options{Reuse: reuse, Notes: n.add}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg.Output); !bytes.Equal(got, want) {
		t.Error("output differs from a fresh run")
	}
	for _, w := range []string{"1 of its 3 shards are missing: reusing from the 2 present", "reused "} {
		if !strings.Contains(n.String(), w) {
			t.Errorf("notes do not say %q:\n%s", w, n.String())
		}
	}
	if strings.Contains(n.String(), "reused 0 of") {
		t.Errorf("nothing reused:\n%s", n.String())
	}
}

// The rows written with uniform importance (the importance fallback) are
// in the sidecar's records, and a run that reuses or resumes those tensors
// reports them again, as a fresh run does.
func TestFallbackSurvivesReuseAndResume(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.gguf")
	m, cfg := q4kmConfig(t, fresh)
	cfg.Selection.FileType = recipes.FileTypeQ5_K_M // q5_K experts: NaN scales for expert 5
	reported := func(opt Options, run func(Options) error) map[string]string {
		t.Helper()
		got := map[string]string{}
		opt.Progress = func(ev Event) {
			if ev.Fallback != nil {
				got[ev.Name] = fmt.Sprint(ev.Fallback.Rows)
			}
		}
		if err := run(opt); err != nil {
			t.Fatal(err)
		}
		return got
	}
	plain := func(opt Options) error { _, err := runConfig(t, context.Background(), m, cfg, opt); return err }
	want := reported(Options{}, plain)
	if len(want) == 0 {
		t.Fatal("no fallback in a fresh Q5_K_M run with an expert without data")
	}
	sc, err := ReadSidecar(fresh)
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, r := range sc.Tensors {
		if r.Fallback != nil {
			recorded++
			if fmt.Sprint(r.Fallback.Rows) != want[r.Name] || r.Fallback.Reason == "" {
				t.Errorf("%s: record %+v, reported %s", r.Name, r.Fallback, want[r.Name])
			}
		}
	}
	if recorded != len(want) {
		t.Errorf("%d records with a fallback, %d reported", recorded, len(want))
	}

	reuse, err := OpenReuse([]string{fresh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reuse.Close()
	cfg.Output = filepath.Join(dir, "reused.gguf")
	if got := reported(Options{Reuse: reuse}, plain); !maps.Equal(got, want) {
		t.Errorf("reused: %v, want %v", got, want)
	}

	// Stopped at half, then resumed: the tensors complete before the stop
	// are reported from their records.
	cfg.Output = filepath.Join(dir, "resumed.gguf")
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := runConfig(t, ctx, m, cfg, Options{Keep: true, Threads: 1, Progress: cancelAtHalf(cancel)}); err != context.Canceled {
		t.Fatalf("interrupted run: %v", err)
	}
	cancel()
	plan, err := Build(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := FindResumable(context.Background(), m, plan.Outputs, nil)
	if err != nil || res[0] == nil {
		t.Fatalf("resumable: %v %v", err, res)
	}
	got := reported(Options{Resume: res}, func(opt Options) error { return Run(context.Background(), m, plan.Outputs, opt) })
	if !maps.Equal(got, want) {
		t.Errorf("resumed: %v, want %v", got, want)
	}
}

// Two runs of the same output with --resume (a part started twice by
// mistake, a retry while the first still runs) both find the temporary
// file a killed run left; the first to continue it renames it to a name of
// its own. The other, finding it gone after it listed it, neither fails
// as if it could not continue it (with advice to start over) nor resumes
// it: nothing is left for it to continue, and the run's output checks
// then stop it at the file being written.
func TestFindResumableTempTakenOver(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	m, cfg := q4kmConfig(t, out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plan, err := runConfig(t, ctx, m, cfg, Options{Keep: true, Threads: 1, Progress: cancelAtHalf(cancel)})
	if err != context.Canceled {
		t.Fatalf("interrupted run: %v", err)
	}
	tmp := keptTemp(t, out)
	for _, tc := range []struct {
		name  string
		taken func()
	}{
		// gguf.Resume renames the file first, and its progress record
		// goes only once the new one is written.
		{"renamed, record still there", func() { os.Rename(tmp, tmp+"-taken") }},
		{"renamed, record gone", func() { os.Rename(tmp, tmp+"-taken"); os.Remove(journalPath(tmp)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record, _ := os.ReadFile(journalPath(tmp))
			defer func() {
				os.Rename(tmp+"-taken", tmp)
				os.WriteFile(journalPath(tmp), record, 0o644)
			}()
			testHookTempsListed = tc.taken
			defer func() { testHookTempsListed = nil }()
			var n notes
			res, err := FindResumable(context.Background(), m, plan.Outputs, n.add)
			switch {
			case err != nil:
				t.Errorf("FindResumable: %v; notes:\n%s", err, n.String())
			case res[0] != nil:
				t.Errorf("FindResumable resumes %s, which is gone", res[0].Temp)
			case !strings.Contains(n.String(), "is gone: another run took it over"):
				t.Errorf("notes:\n%s", n.String())
			}
		})
	}
}

// cancelAtHalf is a Progress that calls cancel once half the tensors are
// finished: an interrupted run, for the tests of --resume.
func cancelAtHalf(cancel context.CancelFunc) func(Event) {
	finished := 0
	return func(ev Event) {
		if ev.Finished {
			if finished++; finished == ev.Count/2 {
				cancel()
			}
		}
	}
}

// keptTemp returns the temporary file an interrupted run kept for out
// (not its progress record).
func keptTemp(tb testing.TB, out string) string {
	tb.Helper()
	temps, _ := gguf.TempFiles(out)
	for _, f := range temps {
		if !strings.HasSuffix(f.Path, ".progress") {
			return f.Path
		}
	}
	tb.Fatalf("kept %v, want a temporary file", temps)
	return ""
}
