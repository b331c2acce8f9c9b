package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/recipes"
)

// The reference runs of ../shared/golden/e2e/COMMANDS.md, as gquant command
// lines. custom and customIQ are recipe.txt and recipe-iq.txt in one-line form.
const (
	customRules   = `token_embd\.weight=q8_0,output\.weight=q6_K,blk\.0\..*=q8_0,blk\.[1-3]\.ffn_down_exps\.weight=iq3_k_r4,blk\.[1-3]\.ffn_(gate|up)_exps\.weight=iq2_k_r4,blk\.[1-3]\.attn_.*=q8_0,blk\.[1-3]\.ffn_.*shexp\.weight=iq4_ks`
	customIQRules = `^token_embd\.weight$=iq4_xs,^output\.weight$=iq4_nl,^blk\.0\.ffn_(gate|up|down)\.weight$=iq3_s,^blk\.[1-3]\.ffn_down_exps\.weight$=iq3_xxs,^blk\.[1-3]\.ffn_(gate|up)_exps\.weight$=iq2_xxs,^blk\.[1-3]\.ffn_.*_shexp\.weight$=iq2_s,attn_k_b=q8_0,^blk\.\d+\.attn_.*=iq4_xs_r8`
)

// e2eRun is one reference run: our output must equal the reference's byte
// for byte. On a difference the test says which metadata keys and tensors
// differ.
type e2eRun struct {
	name    string
	args    []string // after "quantize"; OUT is replaced by the temp output
	outputs []string // golden files, relative to e2e/
	log     string   // the reference's log, relative to e2e/ ("": not compared)
}

var e2eRuns = []e2eRun{
	{"pure-q8_0", []string{"--pure", "tiny-ds2-bf16.gguf", "OUT.gguf", "Q8_0", "2"}, []string{"out-pure-q8_0.gguf"}, "log-pure.txt"},
	{"q4_k_m", []string{"tiny-ds2-bf16.gguf", "OUT.gguf", "Q4_K_M", "2"}, []string{"out-q4_k_m.gguf"}, "log-q4km.txt"},
	{"iq2_k-imat", []string{"--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ2_K", "2"}, []string{"out-iq2_k-imat.gguf"}, "log-iq2k.txt"},
	{"iq4_ks-imat", []string{"--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ4_KS", "2"}, []string{"out-iq4_ks-imat.gguf"}, "log-iq4ks.txt"},
	{"recipe", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", customRules, "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ2_K_R4", "2"}, []string{"out-recipe.gguf"}, "log-recipe.txt"},
	{"recipe-file", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--recipe", "recipe.txt", "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ2_K_R4", "2"}, []string{"out-recipe.gguf"}, "log-recipe.txt"},
	{"iq2_xs-imat", []string{"--imatrix", "tiny-ds2.full.imatrix.dat", "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ2_XS", "2"}, []string{"out-iq2_xs-imat.gguf"}, "log-iq2_xs-imat.txt"},
	{"recipe-iq", []string{"--imatrix", "tiny-ds2.full.imatrix.dat", "--custom-q", customIQRules, "tiny-ds2-bf16.gguf", "OUT.gguf", "IQ3_S", "2"}, []string{"out-recipe-iq.gguf"}, "log-recipe-iq.txt"},
	{"repack", []string{"--repack", "out-q4_k_m.gguf", "OUT.gguf", "Q4_K_R4", "2"}, []string{"out-q4_k_m-repacked.gguf"}, ""},
	{"keep-split", []string{"--keep-split", "--imatrix", "tiny-ds2.imatrix.dat", "split/tiny-ds2-bf16-00001-of-00002.gguf", "OUT.gguf", "IQ4_KS", "2"},
		[]string{"split/out-iq4_ks-00001-of-00002.gguf", "split/out-iq4_ks-00002-of-00002.gguf"}, "log-keepsplit.txt"},
}

// chdirE2E makes the golden e2e folder the working directory, so relative
// names (recorded in quantize.imatrix.file) are those of COMMANDS.md.
func chdirE2E(t *testing.T) {
	t.Helper()
	t.Chdir(golden.Path(t, "e2e"))
}

func TestQuantizeGoldenRuns(t *testing.T) {
	dir := golden.Path(t, "e2e")
	tmp := t.TempDir()
	for _, r := range e2eRuns {
		t.Run(r.name, func(t *testing.T) {
			chdirE2E(t)
			out := filepath.Join(tmp, r.name+".gguf")
			args := []string{"quantize"}
			for _, a := range r.args {
				if a == "OUT.gguf" {
					a = out
				}
				args = append(args, a)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if r.log != "" {
				checkRunLog(t, filepath.Join(dir, r.log), stdout.String(), stderr.String())
			}
			var got []string
			if len(r.outputs) == 1 {
				got = []string{out}
			} else {
				for i := range r.outputs {
					got = append(got, gguf.ShardPath(strings.TrimSuffix(out, ".gguf"), i, len(r.outputs)))
				}
			}
			same, total := 0, 0
			for i, want := range r.outputs {
				s, n := compareGGUF(t, got[i], filepath.Join(dir, want))
				same += s
				total += n
			}
			if same != total {
				t.Errorf("%d of %d tensors identical", same, total)
			}
			for i, want := range r.outputs {
				a, _ := os.ReadFile(got[i])
				b, _ := os.ReadFile(filepath.Join(dir, want))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from the reference byte for byte", want)
				}
			}
		})
	}
}

// compareGGUF checks metadata (keys, order, values) and tensor names, order
// and types exactly, and returns how many tensors have identical bytes.
func compareGGUF(t *testing.T, gotPath, wantPath string) (same, total int) {
	t.Helper()
	got, err := gguf.Open(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	want, err := gguf.Open(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	if len(got.Metadata) != len(want.Metadata) {
		t.Errorf("%s: %d metadata keys, want %d", gotPath, len(got.Metadata), len(want.Metadata))
	}
	for i := range min(len(got.Metadata), len(want.Metadata)) {
		g, w := got.Metadata[i], want.Metadata[i]
		if g.Key != w.Key || !g.Value.Equal(w.Value) {
			t.Errorf("metadata %d: %s = %v, want %s = %v", i, g.Key, g.Value, w.Key, w.Value)
		}
	}
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("%d tensors, want %d", len(got.Tensors), len(want.Tensors))
	}
	for i, wt := range want.Tensors {
		gt := got.Tensors[i]
		if gt.Name != wt.Name || gt.Type != wt.Type {
			t.Errorf("tensor %d: %s %s, want %s %s", i, gt.Name, gt.Type, wt.Name, wt.Type)
			continue
		}
		a := make([]byte, gt.Size)
		b := make([]byte, wt.Size)
		got.TensorReader(i).ReadAt(a, 0)
		want.TensorReader(i).ReadAt(b, 0)
		if bytes.Equal(a, b) {
			same++
		} else {
			t.Logf("tensor %s (%s): bytes differ", gt.Name, gt.Type)
		}
	}
	return same, len(want.Tensors)
}

func TestQuantizeShardedInputSameAsSingle(t *testing.T) {
	chdirE2E(t)
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "single.gguf"), filepath.Join(tmp, "sharded.gguf")
	for _, c := range [][]string{
		{"quantize", "--pure", "tiny-ds2-bf16.gguf", a, "Q8_0"},
		{"quantize", "--pure", "split/tiny-ds2-bf16-00002-of-00002.gguf", b, "Q8_0"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, stderr.String())
		}
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if !bytes.Equal(x, y) {
		t.Error("quantizing the two-shard input differs from quantizing the single file")
	}
}

// Quantizing straight to shards gives the same shard files as quantizing to
// one file and splitting it with the same limit.
func TestQuantizeToShardsEqualsSplit(t *testing.T) {
	chdirE2E(t)
	tmp := t.TempDir()
	one := filepath.Join(tmp, "one.gguf")
	for _, c := range [][]string{
		{"quantize", "--pure", "tiny-ds2-bf16.gguf", one, "Q8_0"},
		{"quantize", "--pure", "--split-max-size", "2M", "tiny-ds2-bf16.gguf", filepath.Join(tmp, "direct"), "Q8_0"},
		{"split", "--split-max-size", "2M", one, filepath.Join(tmp, "after")},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, stderr.String())
		}
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "after-*-of-*.gguf"))
	if len(matches) < 2 {
		t.Fatalf("split made %d shards", len(matches))
	}
	for _, a := range matches {
		d := strings.Replace(a, "after-", "direct-", 1)
		x, _ := os.ReadFile(a)
		y, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs from %s", filepath.Base(d), filepath.Base(a))
		}
	}
}

// TestQuantizeReferenceDigests runs the file types of
// testdata/reference-digests.tsv on the repository's tiny model, without an
// importance matrix, and compares each output's SHA-256 with that of
// llama-quantize's (the file says how they were made). It needs no
// ../shared, so every clone checks these runs.
func TestQuantizeReferenceDigests(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "reference-digests.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	model, err := filepath.Abs(filepath.Join("..", "..", "testdata", "tiny-deepseek2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	sc := bufio.NewScanner(f)
	runs := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ft, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		runs++
		t.Run(ft, func(t *testing.T) {
			out := filepath.Join(tmp, ft+".gguf")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"quantize", model, out, ft, "2"}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
				t.Errorf("output SHA-256 %s, llama-quantize's %s", got, want)
			}
			// The token embeddings cannot take a row-interleaved type; the
			// reference says so on stdout, and so must we.
			if ft, _, err := recipes.ParseFileType(ft); err != nil {
				t.Error(err)
			} else if d, _ := ft.DefaultType(); d.IsInterleaved() {
				note := fmt.Sprintf("\n============ Token embeddings cannot be quantized with row-interleaved quants\n---> Changed %s to %s\n", d, d.Base())
				if !strings.Contains(stdout.String(), note) {
					t.Errorf("stdout lacks the reference's %q", note)
				}
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if runs == 0 {
		t.Fatal("no runs in testdata/reference-digests.tsv")
	}
}

// TestUndoARMRepack: the ARM repacks of q4_0 hold q4_0 rows rearranged, so
// repack --undo of a Q4_0_4_4, Q4_0_4_8 or Q4_0_8_8 file is the Q4_0 file
// of the same model, byte for byte (general.file_type included).
func TestUndoARMRepack(t *testing.T) {
	model := filepath.Join("..", "..", "testdata", "tiny-deepseek2-bf16.gguf")
	tmp := t.TempDir()
	quantize := func(ft string) string {
		out := filepath.Join(tmp, ft+".gguf")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"quantize", model, out, ft, "2"}, &stdout, &stderr); code != 0 {
			t.Fatalf("quantize %s: exit %d: %s", ft, code, stderr.String())
		}
		return out
	}
	want, err := os.ReadFile(quantize("Q4_0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range []string{"Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8"} {
		undone := filepath.Join(tmp, ft+"-undone.gguf")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"repack", "--undo", quantize(ft), undone}, &stdout, &stderr); code != 0 {
			t.Fatalf("repack --undo %s: exit %d: %s", ft, code, stderr.String())
		}
		if got, err := os.ReadFile(undone); err != nil || !bytes.Equal(got, want) {
			t.Errorf("repack --undo of %s is not the Q4_0 file (%v)", ft, err)
		}
	}
}
