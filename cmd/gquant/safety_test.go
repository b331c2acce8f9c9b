package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// The tests of this file are the cases of issue 16 ("never lose a file,
// never panic, never silently do the wrong thing"), one per item.

// mustGquant runs a command line that must succeed.
func mustGquant(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runGquant(args...)
	if code != 0 {
		t.Fatalf("gquant %s: status %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// failGquant runs a command line that must fail with every one of want in
// its error output.
func failGquant(t *testing.T, want []string, args ...string) string {
	t.Helper()
	code, stdout, stderr := runGquant(args...)
	if code == 0 {
		t.Fatalf("gquant %s: accepted\n%s%s", strings.Join(args, " "), stdout, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("gquant %s: error %q does not say %q", strings.Join(args, " "), stderr, w)
		}
	}
	return stderr
}

// Item 1: a model key of the wrong type is an error naming the key, the
// type wanted and the type found, in every command that reads it (it was a
// panic in Value.Elem).
func TestWrongTypedModelKey(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	x := filepath.Join(dir, "x.gguf")
	mustGquant(t, "quantize", "--override-kv", "deepseek2.block_count=str:3", in, x, "Q8_0")
	want := []string{"deepseek2.block_count", "str", "integer"}
	failGquant(t, want, "quantize", "--allow-requantize", x, filepath.Join(dir, "y.gguf"), "Q4_K_M")
	failGquant(t, want, "plan", "--allow-requantize", x, filepath.Join(dir, "y.gguf"), "Q4_K_M")
	assertNoTemp(t, dir)
}

// writeF32 writes a headerless float32 file of n values.
func writeF32(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i%7)-3))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileUnchanged fails unless path still holds want.
func fileUnchanged(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s was changed", path)
	}
}

// Item 2: no command writes over a file it reads, whatever the spelling
// (another path, a symbolic or hard link), and it refuses before any work.
func TestOutputIsNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	imat := filepath.Join(dir, "imat.dat")
	writeDat(t, imat, "unused.weight", []float32{1, 2})
	recipe := filepath.Join(dir, "r.txt")
	os.WriteFile(recipe, []byte("attn=q8_0\n"), 0o644)
	place := filepath.Join(dir, "p.txt")
	os.WriteFile(place, []byte(".*=CPU\n"), 0o644)
	f32 := filepath.Join(dir, "in.f32")
	writeF32(t, f32, 64)
	if err := os.Symlink(imat, filepath.Join(dir, "imat-link.dat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(recipe, filepath.Join(dir, "r-hard.txt")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	originals := map[string][]byte{}
	for _, p := range []string{imat, recipe, place, f32} {
		originals[p], _ = os.ReadFile(p)
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"imatrix", []string{"quantize", "--imatrix", imat, in, imat, "Q4_K_M"}, "imat.dat is the input"},
		{"imatrix via a link", []string{"quantize", "--force", "--imatrix", imat, in, filepath.Join(dir, "imat-link.dat"), "Q4_K_M"}, "imat-link.dat is the input"},
		{"imatrix spelled otherwise", []string{"quantize", "--force", "--imatrix", imat, in, filepath.Join(dir, "sub", "..", "imat.dat"), "Q4_K_M"}, "is the input"},
		{"recipe", []string{"quantize", "--recipe", recipe, in, recipe, "Q8_0"}, "r.txt is the input"},
		{"recipe via a hard link", []string{"quantize", "--force", "--recipe", recipe, in, filepath.Join(dir, "r-hard.txt"), "Q8_0"}, "is the input"},
		{"place file", []string{"quantize", "--force", "--place-file", place, in, place, "Q8_0"}, "p.txt is the input"},
		{"rows", []string{"rows", "quantize", "--force", "--type", "q8_0", "--cols", "32", f32, f32}, "in.f32 is the input"},
		{"rows importance", []string{"rows", "quantize", "--force", "--type", "q8_0", "--cols", "32", "--imatrix", f32, f32, f32}, "is the input"},
		{"model", []string{"quantize", "--force", in, in, "Q8_0"}, "is the input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failGquant(t, []string{tc.says}, tc.args...)
		})
	}
	for p, b := range originals {
		fileUnchanged(t, p, b)
	}
	assertNoTemp(t, dir)
}

// Item 3: one policy for every command that writes: an existing output is
// an error naming --force; --force replaces it; a read-only output is never
// replaced. Each case runs three times: without --force (refused), with it
// (replaced), and on a read-only file with it (refused).
func TestExistingOutputs(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	q8 := filepath.Join(dir, "q8.gguf")
	mustGquant(t, "quantize", in, q8, "Q8_0")
	shards := filepath.Join(dir, "shards")
	mustGquant(t, "split", "--split-max-tensors", "40", in, shards)
	f32 := filepath.Join(dir, "in.f32")
	writeF32(t, f32, 64)
	for _, tc := range []struct {
		name string
		args []string // OUT is the output; written is the file it checks
		out  string   // the file that exists (default OUT)
	}{
		{"quantize", []string{"quantize", in, "OUT", "Q8_0"}, ""},
		{"quantize --keep-split", []string{"quantize", "--keep-split", shards + "-00001-of-00002.gguf", "OUT", "Q8_0"}, "OUT-00002-of-00002.gguf"},
		{"quantize --split-max-tensors", []string{"quantize", "--split-max-tensors", "50", in, "OUT", "Q8_0"}, "OUT-00002-of-00002.gguf"},
		{"quantize --repack", []string{"quantize", "--repack", q8, "OUT", "Q8_0"}, ""},
		{"repack", []string{"repack", q8, "OUT"}, ""},
		{"split", []string{"split", "--split-max-tensors", "40", in, "OUT"}, "OUT-00002-of-00002.gguf"},
		{"merge", []string{"merge", shards + "-00002-of-00002.gguf", "OUT"}, ""},
		{"testmodel", []string{"testmodel", "--preset", "tiny-llama", "OUT"}, ""},
		{"rows quantize", []string{"rows", "quantize", "--type", "q8_0", "--cols", "32", f32, "OUT"}, ""},
		{"rows dequantize", []string{"rows", "dequantize", "--type", "f32", "--cols", "32", f32, "OUT"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			existing := out
			if tc.out != "" {
				existing = strings.ReplaceAll(tc.out, "OUT", out)
			}
			args := func(force bool) []string {
				var a []string
				for _, s := range tc.args {
					a = append(a, strings.ReplaceAll(s, "OUT", out))
				}
				if force {
					a = append(a[:1:1], append([]string{"--force"}, a[1:]...)...)
					if a[0] == "rows" {
						a = append([]string{"rows", a[2], "--force"}, a[3:]...)
					}
				}
				return a
			}
			old := []byte("an older output")
			if err := os.WriteFile(existing, old, 0o644); err != nil {
				t.Fatal(err)
			}
			failGquant(t, []string{existing, "exists", "--force"}, args(false)...)
			fileUnchanged(t, existing, old)
			mustGquant(t, args(true)...)
			if got, _ := os.ReadFile(existing); bytes.Equal(got, old) {
				t.Errorf("--force did not replace %s", existing)
			}
			if err := os.WriteFile(existing, old, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(existing, 0o444)
			failGquant(t, []string{existing, "read-only"}, args(true)...)
			fileUnchanged(t, existing, old)
			assertNoTemp(t, filepath.Dir(out))
		})
	}
}

// The sidecar an output gets beside it is checked like the output: a
// model named OUT.gquant.json was replaced by the sidecar of OUT.
// split carries sidecars too: it removed its input, named as a shard's
// sidecar, as an earlier sidecar of that shard.
func TestSidecarPathIsNotAnInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "o.gguf.gquant.json")
	copyFile(t, in, tinyModel)
	data, _ := os.ReadFile(in)
	out := filepath.Join(dir, "o.gguf")
	failGquant(t, []string{in + ", written beside " + out + ", is the input"}, "quantize", in, out, "Q8_0")
	fileUnchanged(t, in, data)
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}

	shard := filepath.Join(dir, "p-00001-of-00002.gguf")
	in = shard + ".gquant.json"
	copyFile(t, in, tinyModel)
	failGquant(t, []string{in + ", written beside " + shard + ", is the input"}, "split", "--split-max-tensors", "30", in, filepath.Join(dir, "p"))
	fileUnchanged(t, in, data)
}

// A failed commit keeps a complete output under its temporary name and
// says so; given as the input of the next run to the same output, it was
// removed as a stale temporary file (quantize, and quantize --resume).
func TestTemporaryNamedInputIsKept(t *testing.T) {
	for _, resume := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "m.gguf")
		in := filepath.Join(dir, ".m.gguf.tmp-999999-abc")
		copyFile(t, in, tinyModel)
		data, _ := os.ReadFile(in)
		args := []string{"quantize", in, out, "Q8_0"}
		if resume {
			args = append([]string{"quantize", "--resume"}, args[1:]...)
		}
		mustGquant(t, args...)
		fileUnchanged(t, in, data)
	}
}

// Item 5: outputs are checked before any tensor data is read: a directory
// as output, a missing directory where the command does not make it, a
// directory that is a file, and outputs larger than the free space (the
// error names the path and the bytes needed and free). quantize makes a
// missing directory, as llama-quantize does, but not in a dry run.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	failGquant(t, []string{dir, "is a directory"}, "quantize", "--force", in, dir, "Q8_0")
	mustGquant(t, "quantize", "--dry-run", in, filepath.Join(dir, "nope", "x.gguf"), "Q8_0")
	if _, err := os.Stat(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run made the output directory: %v", err)
	}
	made := filepath.Join(dir, "nope", "deeper", "x.gguf")
	mustGquant(t, "quantize", in, made, "Q8_0")
	if st, err := os.Stat(made); err != nil || st.Size() == 0 {
		t.Errorf("quantize into a missing directory: %v", err)
	}
	failGquant(t, []string{filepath.Join(made, "y.gguf"), "is not a directory"}, "quantize", in, filepath.Join(made, "y.gguf"), "Q8_0")
	// A name that can only be a directory's, under a missing directory: the
	// run quantized everything and then failed to rename, keeping the
	// whole temporary file.
	for _, out := range []string{"new/", "new/.", "new/x/.."} {
		out = filepath.Join(dir, "names") + "/" + out
		for _, cmd := range [][]string{{"quantize"}, {"plan"}, {"quantize", "--dry-run"}} {
			failGquant(t, []string{out, "it names a directory"}, append(cmd, in, out, "Q8_0")...)
		}
		failGquant(t, []string{out, "it names a directory"}, "repack", in, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "names")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused output's directory was made: %v", err)
	}
	// Every command that writes a file creates its missing directories,
	// as quantize does.
	rowsIn := filepath.Join(dir, "rows.f32")
	if err := os.WriteFile(rowsIn, make([]byte, 4*64), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"rows", "quantize", "--type", "q8_0", "--cols", "32", rowsIn, filepath.Join(dir, "rows", "a", "x")},
		{"testmodel", "--header-only", filepath.Join(dir, "testmodel", "a", "x.gguf")},
		{"split", "--split-max-tensors", "20", in, filepath.Join(dir, "split", "a", "m")},
		{"merge", filepath.Join(dir, "split", "a", "m-00001-of-00003.gguf"), filepath.Join(dir, "merge", "a", "x.gguf")},
	} {
		mustGquant(t, args...)
		if _, err := os.Stat(filepath.Join(dir, args[0], "a")); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}

	// A 1T-class model to Q8_0 (about 715 GB) and a full Kimi-K2 (2 TB):
	// the run stops at once, naming the bytes.
	free, ok := freeBytes(dir)
	if !ok || free > 600<<30 {
		t.Skip("cannot tell the free space, or more than 600 GiB free")
	}
	big := filepath.Join(dir, "r1.gguf")
	mustGquant(t, "testmodel", "--preset", "deepseek-r1", "--header-only", big)
	start := time.Now()
	stderr := failGquant(t, []string{"not enough free space", "out.gguf", "needs", "bytes", "free"}, "quantize", big, filepath.Join(dir, "out.gguf"), "Q8_0")
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the refusal took %v: %s", el, stderr)
	}
	failGquant(t, []string{"not enough free space", "k2.gguf", "needs"}, "testmodel", "--preset", "kimi-k2", filepath.Join(dir, "k2.gguf"))
	assertNoTemp(t, dir)
}

// freeBytes is the free space of dir as the check sees it.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// Item 14: outputs are created with 0666 and the umask decides.
func TestOutputsFollowUmask(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	f32 := filepath.Join(dir, "in.f32")
	writeF32(t, f32, 64)
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	out := filepath.Join(dir, "out.gguf")
	rows := filepath.Join(dir, "out.bin")
	mustGquant(t, "quantize", in, out, "Q8_0")
	mustGquant(t, "rows", "quantize", "--type", "q8_0", "--cols", "32", f32, rows)
	for _, p := range []string{out, rows} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v with umask 027, want 0640", p, st.Mode().Perm())
		}
	}
}

// childArgsEnv makes the test binary run one gquant command line (its
// arguments separated by US, 0x1f) and exit, so tests can signal a real process.
const childArgsEnv = "GQUANT_TEST_CHILD_ARGS"

// writeSlowModel writes a bf16 model that takes a few seconds to quantize
// to Q6_K on one thread: 8 matrices of 4096 x 1024.
func writeSlowModel(t *testing.T, path string) {
	t.Helper()
	var ts []gguf.TensorInfo
	for i := 0; i < 8; i++ {
		ts = append(ts, gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.ffn_up.weight", i), Shape: []int64{4096, 1024}, Type: formats.BF16})
	}
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}}, ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 2*4096)
	for i := 0; i < 4096; i++ {
		binary.LittleEndian.PutUint16(row[2*i:], formats.FP32ToBF16(float32(i%13-6)*0.01))
	}
	for i := 0; i < 8*1024; i++ {
		if _, err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// startChild starts gquant args in a child process and waits until it has
// created the temporary file of out.
func startChild(t *testing.T, out string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptRemovesTemporaryFiles$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\x1f"))
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		temps, _ := gguf.TempFiles(out)
		if len(temps) > 0 && temps[0].Size > 0 {
			return cmd, &output
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no temporary file of %s after 20 s: %s", out, output.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Item 4: SIGINT, SIGTERM and SIGHUP stop a quantize run with 130, 143 and
// 129, remove every temporary file and say what was left unwritten. After
// a kill -9 the next run on the same output removes the stale temporary
// file and says so.
func TestInterruptRemovesTemporaryFiles(t *testing.T) {
	if args := os.Getenv(childArgsEnv); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeSlowModel(t, in)
	for _, tc := range []struct {
		sig    syscall.Signal
		name   string
		status int
		args   []string // OUT for the output
	}{
		{syscall.SIGINT, "SIGINT", 130, []string{"quantize", "--pure", in, "OUT", "Q6_K", "1"}},
		{syscall.SIGTERM, "SIGTERM", 143, []string{"quantize", "--pure", in, "OUT", "Q6_K", "1"}},
		{syscall.SIGHUP, "SIGHUP", 129, []string{"quantize", "--pure", in, "OUT", "Q6_K", "1"}},
		{syscall.SIGINT, "SIGINT", 130, []string{"quantize", "--pure", "--split-max-tensors", "3", in, "OUT", "Q6_K", "1"}},
	} {
		t.Run(tc.name+" "+strings.Join(tc.args[:len(tc.args)-4], " "), func(t *testing.T) {
			out := filepath.Join(dir, "out.gguf")
			watch := out
			var args []string
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "OUT", out))
			}
			if slices.Contains(tc.args, "--split-max-tensors") {
				watch = filepath.Join(dir, "out-00001-of-00003.gguf")
			}
			cmd, output := startChild(t, watch, args...)
			cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.status {
				t.Fatalf("exit %v, want status %d: %s", err, tc.status, output.String())
			}
			for _, want := range []string{"interrupted by " + tc.name, "not written: " + watch, "temporary files removed"} {
				if !strings.Contains(output.String(), want) {
					t.Errorf("output %q does not say %q", output.String(), want)
				}
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}

	// The log's reader goes away (| head -1): the next write's SIGPIPE
	// stops the run like the others, where it killed the process and left
	// the temporary files.
	t.Run("closed pipe", func(t *testing.T) {
		out := filepath.Join(dir, "out.gguf")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptRemovesTemporaryFiles$")
		cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join([]string{"quantize", "--pure", in, out, "Q6_K", "1"}, "\x1f"))
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		// Up to the first tensor's line: the output is being written.
		var first string
		for br := bufio.NewReader(r); !strings.HasPrefix(first, "["); {
			if first, err = br.ReadString('\n'); err != nil {
				t.Fatalf("no tensor line: %v", err)
			}
		}
		r.Close()
		// Status 141, or killed by SIGPIPE after the cleanup (the line
		// saying what was not written meets the closed pipe): a shell sees
		// 141 either way.
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("exit %v, want status 141", err)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ee.ExitCode() != 141 && !(ok && ws.Signaled() && ws.Signal() == syscall.SIGPIPE) {
			t.Fatalf("exit %v, want status 141", err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("left behind: %v", entries)
		}
	})

	t.Run("kill -9", func(t *testing.T) {
		out := filepath.Join(dir, "out.gguf")
		cmd, _ := startChild(t, out, "quantize", "--pure", in, out, "Q6_K", "1")
		cmd.Process.Kill()
		cmd.Wait()
		temps, _ := gguf.TempFiles(out)
		// Beside it, its progress record (issue 20's --resume), removed with it.
		temps = slices.DeleteFunc(temps, func(t gguf.TempFile) bool { return strings.HasSuffix(t.Path, ".progress") })
		if len(temps) != 1 || temps[0].Live {
			t.Fatalf("after kill -9: %+v, want one stale temporary file", temps)
		}
		_, _, stderr := runGquant("quantize", "--pure", in, out, "Q8_0")
		if !strings.Contains(stderr, "removed "+temps[0].Path) || !strings.Contains(stderr, "interrupted run") {
			t.Errorf("the stale file's removal is not reported: %s", stderr)
		}
		if _, err := os.Stat(temps[0].Path); err == nil {
			t.Error("stale temporary file kept")
		}
		assertNoTemp(t, dir)
	})
}

// Item 6: a regex search that times out stops the run with an error naming
// the rule and the tensor (it counted as "no match", so tensors silently
// got other types), for --custom-q rules and --place rules alike.
func TestRegexTimeoutIsAnError(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "x.gguf")
	for _, args := range [][]string{
		{"quantize", "--custom-q", `(?!\w*(?:exps|norm))(\w*\w*)*X|shexp=q8_0`, in, out, "Q8_0"},
		{"plan", "--place", `(.*.*)*X=CPU`, in, out, "Q8_0"},
	} {
		start := time.Now()
		failGquant(t, []string{"timed out", "item 1", "on tensor "}, args...)
		if el := time.Since(start); el > 30*time.Second {
			t.Errorf("%s took %v", args[0], el)
		}
	}
	assertNoTemp(t, dir)
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}
}

// Item 7: --partial-requant keeps an existing output only if its header is
// exactly the plan's (tensors, types, shapes, offsets, size, split keys);
// any other file is written again with the reason, and shards of the same
// prefix with another count are reported.
func TestPartialRequantChecksExistingShards(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	shards := filepath.Join(dir, "in")
	mustGquant(t, "split", "--split-max-tensors", "40", in, shards)
	first := shards + "-00001-of-00002.gguf"
	out := filepath.Join(dir, "out")
	s1, s2 := out+"-00001-of-00002.gguf", out+"-00002-of-00002.gguf"
	mustGquant(t, "quantize", "--keep-split", first, out, "Q8_0")
	want1, _ := os.ReadFile(s1)
	want2, _ := os.ReadFile(s2)
	other := filepath.Join(dir, "other")
	mustGquant(t, "quantize", "--keep-split", first, other, "Q4_0")
	otherShard, _ := os.ReadFile(other + "-00001-of-00002.gguf")

	for _, tc := range []struct {
		name    string
		damage  func()
		rewrite string // the shard written again ("" for none)
		says    []string
	}{
		{"all match", func() {}, "", []string{s1 + " exists and matches the plan: kept", s2 + " exists and matches the plan: kept"}},
		{"junk", func() { os.WriteFile(s2, []byte("not a model at all"), 0o644) }, s2, []string{s2 + " exists but is not this plan's output", "18 bytes"}},
		{"truncated", func() { os.WriteFile(s2, want2[:len(want2)/2], 0o644) }, s2, []string{s2, "bytes, the plan has"}},
		{"another type mix", func() { os.WriteFile(s1, otherShard, 0o644) }, s1, []string{s1 + " exists but is not this plan's output"}},
		{"header of the same size", func() {
			b := append([]byte(nil), want2...)
			copy(b[:4], "GGUX")
			os.WriteFile(s2, b, 0o644)
		}, s2, []string{s2, "not a GGUF file"}},
		{"missing", func() { os.Remove(s1) }, s1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.damage()
			before1, _ := os.Stat(s1)
			before2, _ := os.Stat(s2)
			_, stdout, stderr := runGquant("quantize", "--keep-split", "--partial-requant", first, out, "Q8_0")
			for _, w := range tc.says {
				if !strings.Contains(stderr, w) {
					t.Errorf("output does not say %q:\n%s%s", w, stdout, stderr)
				}
			}
			fileUnchanged(t, s1, want1)
			fileUnchanged(t, s2, want2)
			for _, c := range []struct {
				path   string
				before os.FileInfo
			}{{s1, before1}, {s2, before2}} {
				now, _ := os.Stat(c.path)
				rewritten := c.before == nil || !os.SameFile(c.before, now)
				if rewritten != (c.path == tc.rewrite) {
					t.Errorf("%s rewritten: %v", c.path, rewritten)
				}
			}
		})
	}

	// A stale shard set of another count beside the output is reported.
	stray := out + "-00001-of-00003.gguf"
	os.WriteFile(stray, []byte("old"), 0o644)
	_, _, stderr := runGquant("quantize", "--keep-split", "--partial-requant", first, out, "Q8_0")
	if !strings.Contains(stderr, "another size") || !strings.Contains(stderr, stray) {
		t.Errorf("stray shard not reported: %s", stderr)
	}
	// A read-only mismatching shard is never replaced.
	os.WriteFile(s2, []byte("junk"), 0o644)
	os.Chmod(s2, 0o444)
	failGquant(t, []string{s2, "read-only"}, "quantize", "--keep-split", "--partial-requant", first, out, "Q8_0")
	assertNoTemp(t, dir)
}

// patchKey overwrites the value of a metadata key in a file's header in
// place (the value keeps its type and size).
func patchKey(t *testing.T, path, key string, value uint64, size int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := bytes.Index(b, []byte(key))
	if k < 0 {
		t.Fatalf("%s has no key %s", path, key)
	}
	at := k + len(key) + 4 // after the key and its u32 type
	for i := 0; i < size; i++ {
		b[at+i] = byte(value >> (8 * i))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Item 8: a shard set whose split keys disagree is an error naming the
// shard, in merge and in every command that reads it (merge wrote 40 of 74
// tensors when shard 1 said split.count=0).
func TestInconsistentShardsAreErrors(t *testing.T) {
	in, _ := filepath.Abs(tinyModel)
	for _, tc := range []struct {
		name  string
		shard int // 1 or 2
		key   string
		value uint64
		size  int
		says  string
	}{
		{"split.count 0 in shard 1", 1, "split.count", 0, 2, "split.count 0"},
		{"split.count 1 in shard 1", 1, "split.count", 1, 2, "split.count 1"},
		{"split.count 3 in shard 2", 2, "split.count", 3, 2, "3"},
		{"split.no in shard 2", 2, "split.no", 0, 2, "its split.no 0 (counted from 0) makes it shard 1"},
		{"tensor count in shard 2", 2, "split.tensors.count", 70, 4, "says split.tensors.count 70"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prefix := filepath.Join(dir, "s")
			mustGquant(t, "split", "--split-max-tensors", "40", in, prefix)
			shard := fmt.Sprintf("%s-%05d-of-00002.gguf", prefix, tc.shard)
			patchKey(t, shard, tc.key, tc.value, tc.size)
			out := filepath.Join(dir, "merged.gguf")
			// Whichever shard a command is given, the error names the
			// damaged one, the key and its value.
			want := []string{filepath.Base(shard), tc.key, tc.says}
			for _, start := range []string{prefix + "-00001-of-00002.gguf", prefix + "-00002-of-00002.gguf"} {
				failGquant(t, want, "merge", start, out)
				if _, err := os.Stat(out); err == nil {
					t.Fatalf("merge from %s wrote %s", start, out)
				}
				failGquant(t, want, "quantize", start, out, "Q8_0")
				failGquant(t, want, "inspect", start)
			}
			assertNoTemp(t, dir)
		})
	}
	// A file merged by the reference (split.count 0, split.no 0,
	// split.tensors.count = its tensors) still reads as one model.
	dir := t.TempDir()
	one := filepath.Join(dir, "one")
	mustGquant(t, "split", "--split-max-tensors", "100", in, one)
	merged := filepath.Join(dir, "reference-merged.gguf")
	os.Rename(one+"-00001-of-00001.gguf", merged)
	patchKey(t, merged, "split.count", 0, 2)
	mustGquant(t, "inspect", merged)
	mustGquant(t, "merge", merged, filepath.Join(dir, "again.gguf"))
}

// Item 10: the split keys cannot be overridden (the file written would
// not read back).
func TestSplitKeysAreNotOverridable(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "x.gguf")
	for _, kv := range []string{"split.count=int:5", "split.no=int:0", "split.tensors.count=int:74"} {
		code, _, stderr := runGquant("quantize", "--override-kv", kv, in, out, "Q8_0")
		key, _, _ := strings.Cut(kv, "=")
		if code != 2 || !strings.Contains(stderr, key) || !strings.Contains(stderr, "cannot be overridden") {
			t.Errorf("--override-kv %s: status %d %q", kv, code, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}
}

// Item 9: a finite bf16 weight too large for the output type (3.39e38 is
// +Inf in f16, and an infinite block scale in q8_0 and q4_K) fails the run
// like a NaN, naming the input file, the tensor, the row and the column,
// and nothing is written.
func TestValueTooLargeForOutputType(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.gguf")
	w, err := gguf.Create(in, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}},
		[]gguf.TensorInfo{{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 8}, Type: formats.BF16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 2*256)
	for r := 0; r < 8; r++ {
		for i := 0; i < 256; i++ {
			v := float32(i%9-4) * 0.01
			if r == 5 && i == 77 {
				v = 3.39e38
			}
			binary.LittleEndian.PutUint16(row[2*i:], formats.FP32ToBF16(v))
		}
		w.Write(row)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"F16", "Q8_0", "Q4_K_M"} {
		out := filepath.Join(dir, "out-"+typ+".gguf")
		failGquant(t, []string{in, "blk.0.ffn_up.weight", "row 5", "column 77", "3.3895314e+38", "too large for"}, "quantize", "--pure", in, out, typ)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s written", out)
		}
	}
	assertNoTemp(t, dir)
}

// writeDatEntries writes a legacy imatrix with one entry per name, each of
// n values.
func writeDatEntries(t *testing.T, path string, names []string, n int) {
	t.Helper()
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, int32(len(names)))
	for _, name := range names {
		binary.Write(&b, le, int32(len(name)))
		b.WriteString(name)
		binary.Write(&b, le, int32(1))
		binary.Write(&b, le, int32(n))
		for i := 0; i < n; i++ {
			binary.Write(&b, le, float32(1))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Item 11: an importance matrix whose entries match no tensor is reported
// (once for the file, and per tensor as llama-quantize's "did not find
// weights for"; the warnings per tensor are one line, or each with
// --verbose); duplicate .dat entries are an error naming the entry.
func TestImatrixThatMatchesNothing(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	var names []string
	for i := 0; i < 50; i++ {
		names = append(names, fmt.Sprintf("blk.%d.other_model.weight", i))
	}
	foreign := filepath.Join(dir, "foreign.dat")
	writeDatEntries(t, foreign, names, 256)
	_, _, stderr := runGquant("quantize", "--imatrix", foreign, in, filepath.Join(dir, "out.gguf"), "IQ4_KS")
	for _, want := range []string{"has 50 entries and none matches", "did not find weights for blk.0.ffn_down.weight",
		"token_embd.weight: no importance data in " + foreign + ": quantized as iq4_ks without it [and 37 more no-imatrix warnings like it: --verbose lists each]"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("output does not say %q:\n%s", want, stderr)
		}
	}
	_, _, stderr = runGquant("quantize", "-v", "--force", "--imatrix", foreign, in, filepath.Join(dir, "out.gguf"), "IQ4_KS")
	if want := "warning: blk.0.ffn_down.weight: no importance data in " + foreign; !strings.Contains(stderr, want) {
		t.Errorf("--verbose: output does not say %q:\n%s", want, stderr)
	}
	dup := filepath.Join(dir, "dup.dat")
	writeDatEntries(t, dup, []string{"blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "blk.0.ffn_up.weight"}, 256)
	failGquant(t, []string{`entry "blk.0.ffn_up.weight" appears twice`, "entries 1 and 3"}, "quantize", "--imatrix", dup, in, filepath.Join(dir, "dup.gguf"), "IQ4_KS")
}

// hasControl reports a control character other than tab and newline, or a
// C1 or bidi control.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e {
			return true
		}
	}
	return false
}

// Item 13: names and values from a file reach the terminal escaped, in
// every command's text output (a tensor name with ESC [2J cleared it).
func TestNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "evil.gguf")
	evil := "blk.0.\x1b[2J\x1b[31mffn_up\u202e.weight"
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")},
		{Key: "general.name", Value: gguf.StringValue("name\x1b]0;owned\x07\u009b")}}
	w, err := gguf.Create(in, md, []gguf.TensorInfo{{Name: evil, Shape: []int64{256, 4}, Type: formats.BF16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 2*256*4))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inspect", in},
		{"plan", "--custom-q", "ffn=q8_0", in, filepath.Join(dir, "p.gguf"), "Q4_0"},
		{"quantize", "--pure", in, filepath.Join(dir, "q.gguf"), "Q8_0"},
		{"quantize", "--override-kv", "x=str:a\x1bb", in, filepath.Join(dir, "q2.gguf"), "Q8_0"},
		{"inspect", filepath.Join(dir, "q2.gguf")},
		{"quantize", in, filepath.Join(dir, "x\x1b.gguf"), "Q8_0"},
	} {
		code, stdout, stderr := runGquant(args...)
		if hasControl(stdout + stderr) {
			t.Errorf("gquant %s (status %d) wrote control characters:\n%q\n%q", args[0], code, stdout, stderr)
		}
		if args[0] == "inspect" && code == 0 && !strings.Contains(stdout, `\x1b`) {
			t.Errorf("inspect does not show the escapes: %s", stdout)
		}
	}
}

// Item 12: a named pipe (or another non-regular file) given as any input
// is refused at once, naming what it is (open() waited for a writer).
func TestNonRegularInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "out.gguf")
	for _, args := range [][]string{
		{"quantize", fifo, out, "Q8_0"},
		{"quantize", "--imatrix", fifo, in, out, "Q4_K_M"},
		{"quantize", "--recipe", fifo, in, out, "Q8_0"},
		{"plan", "--place-file", fifo, in, out, "Q8_0"},
		{"inspect", fifo},
		{"split", fifo, filepath.Join(dir, "s")},
		{"merge", fifo, out},
		{"repack", fifo, out},
		{"rows", "quantize", "--type", "q8_0", "--cols", "32", fifo, out},
		{"rows", "dequantize", "--type", "q8_0", "--cols", "32", fifo, out},
		{"inspect", dir},
		{"fit", "--budget", "CPU=6MiB", "--gains", fifo, in},
		{"fit", "--budget", "CPU=6MiB", "--cache", fifo, in},
		{"fit", "calibrate", in, fifo},
	} {
		done := make(chan string, 1)
		go func() {
			code, _, stderr := runGquant(args...)
			done <- fmt.Sprintf("%d %s", code, stderr)
		}()
		select {
		case res := <-done:
			if strings.HasPrefix(res, "0 ") || !strings.Contains(res, "not a regular file") {
				t.Errorf("gquant %s: %s", strings.Join(args, " "), res)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("gquant %s hangs on a named pipe", strings.Join(args, " "))
		}
	}
}

// Item 15: options that would be accepted and then do nothing, or that
// contradict each other, are usage errors.
func TestNonsenseOptions(t *testing.T) {
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "out.gguf")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"quantize", "--summary", in, out, "Q8_0"}, "--summary shortens the plan: it needs --dry-run"},
		{[]string{"quantize", "--repack", "--json", in, out, "Q8_0"}, "use gquant repack --json"},
		{[]string{"quantize", "--include-weights", "ffn", in, out, "Q8_0"}, "--include-weights selects entries of the importance matrix: it needs --imatrix"},
		{[]string{"quantize", "--exclude-weights", "ffn", in, out, "Q8_0"}, "--exclude-weights"},
		{[]string{"quantize", "--leave-output-tensor", "--output-tensor-type", "q8_0", in, out, "Q4_0"}, "give one of them"},
		{[]string{"quantize", "--split-max-size", "", in, out, "Q8_0"}, "--split-max-size: empty size"},
		{[]string{"quantize", "--split-max-tensors", "0", in, out, "Q8_0"}, "--split-max-tensors must be positive"},
		{[]string{"split", "--split-max-size=", in, filepath.Join(dir, "s")}, "--split-max-size: empty size"},
		{[]string{"repack", "--split-max-size", "", in, out}, "--split-max-size: empty size"},
	} {
		code, stdout, stderr := runGquant(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.says) {
			t.Errorf("gquant %s: status %d, %q (want 2 and %q)\n%s", strings.Join(tc.args, " "), code, stderr, tc.says, stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written")
	}
	// The same options where they act are fine.
	mustGquant(t, "quantize", "--dry-run", "--json", "--summary", in, out, "Q8_0")
	mustGquant(t, "plan", "--json", in, out, "Q8_0")
}

// An --override-kv value too long for the reference is refused quoting only
// the start of it, with its length.
func TestOverrideKVLongValueQuotedShort(t *testing.T) {
	long := "x=str:" + strings.Repeat("a", 50000)
	code, _, stderr := runGquant("quantize", "--override-kv", long, tinyModel, filepath.Join(t.TempDir(), "x.gguf"), "Q8_0")
	if code != 2 || !strings.Contains(stderr, "value longer than 127 bytes") || !strings.Contains(stderr, "(50006 bytes)") || len(stderr) > 2000 {
		t.Errorf("status %d, %d bytes of stderr:\n%.500s", code, len(stderr), stderr)
	}
}
