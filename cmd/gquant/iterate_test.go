package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/pipeline"
)

// The cases of issue 20 ("change one rule, wait minutes not hours"):
// --reuse, --resume and --partial-requant's sidecar check.

// reusedCount reads "reused N of M tensors" from a run's notes.
func reusedCount(t *testing.T, stderr string) (n, of int) {
	t.Helper()
	m := regexp.MustCompile(`reused (\d+) of (\d+) tensors`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no reuse count in:\n%s", stderr)
	}
	n, _ = strconv.Atoi(m[1])
	of, _ = strconv.Atoi(m[2])
	return n, of
}

// e2eArgs returns the arguments of a golden run with OUT replaced by out.
func e2eArgs(t *testing.T, name, out string) (args []string, outputs []string) {
	t.Helper()
	for _, r := range e2eRuns {
		if r.name == name {
			for _, a := range r.args {
				args = append(args, strings.ReplaceAll(a, "OUT.gguf", out))
			}
			return args, r.outputs
		}
	}
	t.Fatalf("no golden run %s", name)
	return nil, nil
}

// TestReuseSameBytes makes an earlier output that differs from a golden
// run in two tensors, then runs the golden command line with --reuse of
// it: every other quantized tensor is copied, and the output is the
// reference's, byte for byte.
func TestReuseSameBytes(t *testing.T) {
	chdirE2E(t)
	tmp := t.TempDir()
	for _, tc := range []struct {
		name   string
		prev   []string // PREV for the earlier output's path
		reuse  string   // the file given to --reuse (PREV, or a shard of it)
		golden string   // the golden run
		split  string   // --split-max-size of the new run, "" for none
	}{
		{"plain type", []string{"--pure", "--custom-q", `blk\.1\.attn_output=q4_0,blk\.2\.ffn_up_exps=q4_0`, "tiny-ds2-bf16.gguf", "PREV.gguf", "Q8_0"},
			"PREV.gguf", "pure-q8_0", ""},
		{"imatrix IQ type", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", `blk\.1\.attn_q_b=q8_0,blk\.3\.ffn_down_exps=q8_0`, "tiny-ds2-bf16.gguf", "PREV.gguf", "IQ4_KS"},
			"PREV.gguf", "iq4_ks-imat", ""},
		{"recipe", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", `blk\.2\.attn_kv_b=q6_K,blk\.1\.ffn_up_shexp=q4_K`, "--recipe", "recipe.txt", "tiny-ds2-bf16.gguf", "PREV.gguf", "IQ2_K_R4"},
			"PREV.gguf", "recipe-file", ""},
		{"from shards", []string{"--pure", "--split-max-tensors", "30", "--custom-q", `blk\.0\.ffn_down=q4_0,blk\.3\.ffn_gate_exps=q4_0`, "tiny-ds2-bf16.gguf", "PREV", "Q8_0"},
			"PREV-00002-of-00003.gguf", "pure-q8_0", ""},
		{"to shards", []string{"--imatrix", "tiny-ds2.imatrix.dat", "--custom-q", `blk\.3\.attn_kv_b=q6_K,blk\.0\.ffn_up=q4_K,` + customRules, "tiny-ds2-bf16.gguf", "PREV.gguf", "IQ2_K_R4"},
			"PREV.gguf", "recipe", "2M"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "-"))
			os.Mkdir(dir, 0o755)
			prev := filepath.Join(dir, "PREV")
			args := []string{"quantize"}
			for _, a := range tc.prev {
				switch a {
				case "PREV.gguf":
					a = prev + ".gguf"
				case "PREV":
					a = prev
				}
				args = append(args, a)
			}
			mustGquant(t, args...)
			out := filepath.Join(dir, "out.gguf")
			run, outputs := e2eArgs(t, tc.golden, out)
			if tc.split != "" {
				out = filepath.Join(dir, "out")
				run, _ = e2eArgs(t, tc.golden, out)
				run = append([]string{"--split-max-size", tc.split}, run...)
				outputs = []string{"split/out-recipe-00001-of-00003.gguf", "split/out-recipe-00002-of-00003.gguf", "split/out-recipe-00003-of-00003.gguf"}
			}
			reuse := filepath.Join(dir, tc.reuse)
			code, stdout, stderr := runGquant(append([]string{"quantize", "--reuse", reuse}, run...)...)
			if code != 0 {
				t.Fatalf("status %d: %s%s", code, stdout, stderr)
			}
			n, of := reusedCount(t, stderr)
			if n != of-2 {
				t.Errorf("reused %d of %d tensors, want all but the 2 changed:\n%s", n, of, stderr)
			}
			var got []string
			if tc.split != "" {
				got, _ = filepath.Glob(out + "-*-of-*.gguf")
			} else {
				got = []string{out}
			}
			if len(got) != len(outputs) {
				t.Fatalf("wrote %v, want %d files", got, len(outputs))
			}
			for i, g := range got {
				sameFileBytes(t, g, golden.Path(t, "e2e", outputs[i]))
				if _, err := pipeline.ReadSidecar(g); err != nil {
					t.Errorf("%s: %v", g, err)
				}
			}
		})
	}
}

// editSidecar rewrites the sidecar of path through f.
func editSidecar(t *testing.T, path string, f func(*pipeline.Sidecar)) {
	t.Helper()
	sc, err := pipeline.ReadSidecar(path)
	if err != nil {
		t.Fatal(err)
	}
	f(sc)
	b, _ := json.Marshal(sc)
	if err := os.WriteFile(pipeline.SidecarPath(path), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// flipTensorByte changes one byte in the middle of a tensor's data in a
// GGUF file, in place.
func flipTensorByte(t *testing.T, path, tensor string) {
	t.Helper()
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	i := m.TensorIndex(tensor)
	if i < 0 {
		t.Fatalf("%s has no %s", path, tensor)
	}
	f, off := m.TensorFile(i)
	off += m.Tensors[i].Size / 2
	var b [1]byte
	f.ReadAt(b[:], off)
	m.Close()
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x21
	w.WriteAt(b[:], off)
	w.Close()
}

func copyFile(t *testing.T, dst, src string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReuseRefused: a tensor is reused only when every field of its record
// matches and the earlier bytes still hash to the record; in every case
// the output is the one a fresh run writes.
func TestReuseRefused(t *testing.T) {
	chdirE2E(t)
	tmp := t.TempDir()
	base := []string{"--pure", "tiny-ds2-bf16.gguf", "OUT", "Q4_0"}
	withArgs := func(extra []string, args []string) []string { return append(append([]string(nil), extra...), args...) }
	const victim = "blk.2.ffn_gate_exps.weight"
	modified := filepath.Join(tmp, "modified-bf16.gguf")
	copyFile(t, modified, "tiny-ds2-bf16.gguf")
	flipTensorByte(t, modified, victim)

	// converted counts the quantized tensors of the earlier output; a case's
	// reuse count is that minus what it refuses.
	for _, tc := range []struct {
		name    string
		prev    []string // flags of the earlier run (before base)
		args    []string // flags of the new run (before base)
		input   string   // the new run's input ("" for the tiny model)
		damage  func(prev string)
		refused int // tensors not reused, -1 for all
		says    string
	}{
		{"everything matches", nil, nil, "", nil, 0, ""},
		{"no sidecar", nil, nil, "", func(p string) { os.Remove(pipeline.SidecarPath(p)) }, -1, "no sidecar"},
		{"earlier bytes altered", nil, nil, "", func(p string) { flipTensorByte(t, p, victim) }, 1, victim + " in "},
		{"kernel version", nil, nil, "", func(p string) {
			editSidecar(t, p, func(sc *pipeline.Sidecar) {
				for i := range sc.Tensors {
					if sc.Tensors[i].Name == victim {
						sc.Tensors[i].Kernel = "ik_llama.cpp@8337e4cd+0"
					}
				}
			})
		}, 1, ""},
		{"kernel option", nil, []string{"--symmetric-q40"}, "", nil, -1, ""},
		{"other type", nil, []string{"--output-tensor-type", "q8_0"}, "", nil, 1, ""},
		{"importance data", nil, []string{"--imatrix", "tiny-ds2.imatrix.dat"}, "", nil, -2, ""},
		{"other importance data", []string{"--imatrix", "tiny-ds2.imatrix.dat"}, []string{"--imatrix", "tiny-ds2.full.imatrix.dat"}, "", nil, -2, ""},
		{"input bytes", nil, nil, modified, nil, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "-"))
			os.Mkdir(dir, 0o755)
			prev, fresh, out := filepath.Join(dir, "prev.gguf"), filepath.Join(dir, "fresh.gguf"), filepath.Join(dir, "out.gguf")
			mustGquant(t, append([]string{"quantize"}, withArgs(tc.prev, replaceOut(base, prev, ""))...)...)
			if tc.damage != nil {
				tc.damage(prev)
			}
			newArgs := withArgs(tc.args, replaceOut(base, fresh, tc.input))
			mustGquant(t, append([]string{"quantize"}, newArgs...)...)
			code, stdout, stderr := runGquant(append([]string{"quantize", "--reuse", prev}, withArgs(tc.args, replaceOut(base, out, tc.input))...)...)
			if code != 0 {
				t.Fatalf("status %d: %s%s", code, stdout, stderr)
			}
			sameFileBytes(t, out, fresh)
			n, of := reusedCount(t, stderr)
			want := of - tc.refused
			switch tc.refused {
			case -1:
				want = 0
			case -2:
				// Only the tensors whose importance data is the same in
				// both runs (none, or equal slices).
				want = sameImatrix(t, prev, fresh)
				if want >= of {
					t.Fatalf("the case changes no importance data (%d of %d the same)", want, of)
				}
			}
			if n != want {
				t.Errorf("reused %d of %d, want %d:\n%s", n, of, want, stderr)
			}
			if tc.says != "" && !strings.Contains(stderr, tc.says) {
				t.Errorf("output does not say %q:\n%s", tc.says, stderr)
			}
		})
	}
}

// replaceOut puts out for OUT and input (if set) for the model.
func replaceOut(args []string, out, input string) []string {
	var r []string
	for _, a := range args {
		switch {
		case a == "OUT":
			a = out
		case input != "" && a == "tiny-ds2-bf16.gguf":
			a = input
		}
		r = append(r, a)
	}
	return r
}

// sameImatrix counts the quantized tensors whose records in the two
// sidecars have the same importance hash, type and input.
func sameImatrix(t *testing.T, a, b string) int {
	t.Helper()
	x, err := pipeline.ReadSidecar(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := pipeline.ReadSidecar(b)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]pipeline.TensorRecord{}
	for _, r := range x.Tensors {
		byName[r.Name] = r
	}
	n := 0
	for _, r := range y.Tensors {
		p := byName[r.Name]
		if !r.Copied && p.Imatrix == r.Imatrix && p.Type == r.Type && p.Input == r.Input {
			n++
		}
	}
	return n
}

// progressLines counts the complete tensors in the progress record of the
// temporary file of out (0 while there is none).
func progressLines(out string) int {
	temps, _ := gguf.TempFiles(out)
	for _, tf := range temps {
		if !strings.HasSuffix(tf.Path, ".progress") {
			continue
		}
		f, err := os.Open(tf.Path)
		if err != nil {
			return 0
		}
		n := 0
		for sc := bufio.NewScanner(f); sc.Scan(); {
			n++
		}
		f.Close()
		return max(n-1, 0)
	}
	return 0
}

// waitProgress waits until n tensors of out are complete.
func waitProgress(t *testing.T, cmd *exec.Cmd, out string, n int, output *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for progressLines(out) < n {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%d tensors not complete after 60 s: %s", n, output.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestResumeAfterKill kills a real quantize run (kill -9) when about half
// of its tensors are complete, and resumes it: the output is the one of an
// uninterrupted run. Then the same with Ctrl-C and --resume, which keeps
// the temporary file instead of removing it.
func TestResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeSlowModel(t, in)
	fresh := filepath.Join(dir, "fresh.gguf")
	mustGquant(t, "quantize", "--pure", in, fresh, "Q6_K", "1")
	out := filepath.Join(dir, "out.gguf")

	resume := func(t *testing.T, wantDone int) {
		t.Helper()
		code, stdout, stderr := runGquant("quantize", "--resume", "--pure", in, out, "Q6_K", "1")
		if code != 0 {
			t.Fatalf("resume: status %d: %s%s", code, stdout, stderr)
		}
		m := regexp.MustCompile(`resuming .* (\d+) of 8 tensors`).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("not resumed:\n%s", stderr)
		}
		if done, _ := strconv.Atoi(m[1]); done < wantDone {
			t.Errorf("resumed with %d tensors complete, at least %d were", done, wantDone)
		}
		sameFileBytes(t, out, fresh)
		if _, err := pipeline.ReadSidecar(out); err != nil {
			t.Error(err)
		}
		assertNoTemp(t, dir)
		os.Remove(out)
		os.Remove(pipeline.SidecarPath(out))
	}

	t.Run("kill -9", func(t *testing.T) {
		cmd, output := startChild(t, out, "quantize", "--pure", in, out, "Q6_K", "1")
		waitProgress(t, cmd, out, 4, output)
		cmd.Process.Kill()
		cmd.Wait()
		resume(t, 4)
	})
	t.Run("Ctrl-C with --resume", func(t *testing.T) {
		cmd, output := startChild(t, out, "quantize", "--resume", "--pure", in, out, "Q6_K", "1")
		waitProgress(t, cmd, out, 3, output)
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("exit %v, want 130: %s", err, output.String())
		}
		if !strings.Contains(output.String(), "temporary files kept") {
			t.Errorf("output %q", output.String())
		}
		if temps, _ := gguf.TempFiles(out); len(temps) != 2 {
			t.Fatalf("kept %v, want the temporary file and its progress record", temps)
		}
		resume(t, 3)
	})
	// --resume with another command (a typo in the type) refuses and keeps
	// the interrupted run's file; without --resume the run starts over.
	t.Run("another plan", func(t *testing.T) {
		cmd, output := startChild(t, out, "quantize", "--pure", in, out, "Q6_K", "1")
		waitProgress(t, cmd, out, 2, output)
		cmd.Process.Kill()
		cmd.Wait()
		before, _ := gguf.TempFiles(out)
		stderr := failGquant(t, []string{"cannot be resumed", "nothing was removed"}, "quantize", "--resume", "--pure", in, out, "Q8_0", "1")
		if after, _ := gguf.TempFiles(out); len(after) != len(before) || len(after) == 0 {
			t.Fatalf("temporary files %v, before %v: %s", after, before, stderr)
		}
		mustGquant(t, "quantize", "--pure", in, out, "Q8_0", "1")
		want := filepath.Join(dir, "q8.gguf")
		mustGquant(t, "quantize", "--pure", in, want, "Q8_0", "1")
		sameFileBytes(t, out, want)
		assertNoTemp(t, dir)
	})
}

// A run stopped while it renamed its finished shards into place is
// resumed by the same command with --resume: the shards it completed (with
// the sidecars that say they are this plan's) are kept, the others written;
// a kept shard whose bytes changed since is refused as an existing output
// (--force), not replaced unasked. It used to refuse every existing shard.
func TestResumeKeepsCompletedShards(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeSlowModel(t, in)
	args := func(out string, more ...string) []string {
		return append(append([]string{"quantize"}, more...), "--pure", "--split-max-tensors", "3", in, out, "Q8_0", "1")
	}
	fresh := filepath.Join(dir, "fresh.gguf")
	mustGquant(t, args(fresh)...)
	out := filepath.Join(dir, "out.gguf")
	mustGquant(t, args(out)...)
	shard := func(prefix string, i int) string { return gguf.ShardPath(strings.TrimSuffix(prefix, ".gguf"), i-1, 3) }
	last := shard(out, 3)
	os.Remove(last)
	os.Remove(pipeline.SidecarPath(last))
	code, stdout, stderr := runGquant(args(out, "--resume")...)
	if code != 0 || strings.Count(stderr, "kept (completed by the interrupted run; --resume)") != 2 {
		t.Fatalf("status %d: %q %q", code, stdout, stderr)
	}
	for i := 1; i <= 3; i++ {
		sameFileBytes(t, shard(out, i), shard(fresh, i))
	}
	assertNoTemp(t, dir)

	b, err := os.ReadFile(shard(out, 1))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(shard(out, 1), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(last)
	os.Remove(pipeline.SidecarPath(last))
	stderr = failGquant(t, []string{"exists (pass --force to replace it)"}, args(out, "--resume")...)
	if !strings.Contains(stderr, "not kept (--resume)") {
		t.Errorf("the changed shard is not reported: %s", stderr)
	}
	fileUnchanged(t, shard(out, 1), b)
}

// TestPartialRequantTrustsSidecars: a shard with a sidecar is kept only if
// the sidecar has the plan's records and the input and the shard's bytes
// still hash to them; a shard without one is kept on its header, saying so.
func TestPartialRequantTrustsSidecars(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	shards := filepath.Join(dir, "in")
	mustGquant(t, "split", "--split-max-tensors", "40", in, shards)
	first, second := shards+"-00001-of-00002.gguf", shards+"-00002-of-00002.gguf"
	pristineIn, _ := os.ReadFile(second)
	out := filepath.Join(dir, "out")
	s1, s2 := out+"-00001-of-00002.gguf", out+"-00002-of-00002.gguf"
	mustGquant(t, "quantize", "--keep-split", first, out, "Q8_0")
	want := map[string][]byte{}
	for _, p := range []string{s1, s2, pipeline.SidecarPath(s1), pipeline.SidecarPath(s2)} {
		want[p], _ = os.ReadFile(p)
	}
	name2 := func() string {
		m, err := gguf.Open(s2)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		return m.Tensors[len(m.Tensors)-1].Name
	}()
	for _, tc := range []struct {
		name    string
		damage  func()
		rewrite string // the shard written again ("" for none)
		says    string
	}{
		{"sidecars match", func() {}, "", s2 + " exists and matches the plan: kept (--partial-requant)\n"},
		{"bytes changed in place", func() { flipTensorByte(t, s2, name2) }, s2, "the bytes of " + name2 + " are not the ones its sidecar recorded"},
		{"other kernels", func() {
			editSidecar(t, s1, func(sc *pipeline.Sidecar) { sc.Tensors[1].Kernel = "older" })
		}, s1, "was made by kernels older"},
		{"other importance data", func() {
			editSidecar(t, s1, func(sc *pipeline.Sidecar) { sc.Tensors[1].Imatrix = "0123456789abcdef" })
		}, s1, "made with other importance data"},
		{"input changed", func() { flipTensorByte(t, second, name2) }, s2, name2 + " was made from another input tensor"},
		{"no sidecar", func() { os.Remove(pipeline.SidecarPath(s2)) }, "", s2 + " exists and matches the plan: kept (--partial-requant; it has no sidecar, so only its header was checked)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for p, b := range want {
				os.WriteFile(p, b, 0o644)
			}
			os.WriteFile(second, pristineIn, 0o644)
			tc.damage()
			before1, _ := os.Stat(s1)
			before2, _ := os.Stat(s2)
			_, stdout, stderr := runGquant("quantize", "--keep-split", "--partial-requant", first, out, "Q8_0")
			if !strings.Contains(stderr, tc.says) {
				t.Errorf("output does not say %q:\n%s%s", tc.says, stdout, stderr)
			}
			for _, c := range []struct {
				path   string
				before os.FileInfo
			}{{s1, before1}, {s2, before2}} {
				now, _ := os.Stat(c.path)
				rewritten := !os.SameFile(c.before, now)
				if rewritten != (c.path == tc.rewrite) {
					t.Errorf("%s rewritten: %v", c.path, rewritten)
				}
			}
			if tc.name != "input changed" {
				fileUnchanged(t, s1, want[s1])
				fileUnchanged(t, s2, want[s2])
			}
			if _, err := pipeline.ReadSidecar(s2); err != nil && tc.rewrite == s2 {
				t.Errorf("rewritten shard has no sidecar: %v", err)
			}
		})
	}
	os.WriteFile(second, pristineIn, 0o644)
}

// --partial-requant says an output is kept only once its bytes were
// checked: a file whose header matches but whose bytes were changed is
// announced as written again, never as kept.
func TestPartialRequantNoteAfterBytes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.gguf")
	mustGquant(t, "quantize", tinyModel, out, "Q8_0")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-100] ^= 0x40 // the last tensor's data
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runGquant("quantize", "--partial-requant", tinyModel, out, "Q8_0")
	if code != 0 || strings.Contains(stderr, "kept (--partial-requant)") || !strings.Contains(stderr, "written again (--partial-requant)") {
		t.Errorf("status %d:\n%s%s", code, stdout, stderr)
	}
}
