package slurmtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// taskShards, as one of jobScript's arguments, stands for the array task's
// share of the work, "K/N": the task's index in --array=1-N and the number of
// tasks, as Slurm sets them. It is the value of --only-shards in
// docs/distributed.md's example.
const taskShards = "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"

// jobScript is the batch script every task of an array of the given number of
// tasks runs: bin with args, exec'd, each argument quoted for the shell except
// taskShards, which the shell expands: for the quantize run (quantizeJob),
// bin is the gquant binary the test built and args are
//
//	quantize --only-shards taskShards --split-max-size SIZE IN OUT TYPE THREADS
func jobScript(tasks int, bin string, args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n#SBATCH --array=1-%d\n#SBATCH --job-name=gquant-slurmtest\nset -eu\nexec %s", tasks, shellQuote(bin))
	for _, a := range args {
		if a == taskShards {
			b.WriteString(` "` + taskShards + `"`)
			continue
		}
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

// shellQuote quotes s for sh: in single quotes, each single quote inside
// written as the sequence quote, backslash, quote, quote.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// arrayJob is what the tasks of the array run and how the test checks the
// result.
type arrayJob struct {
	bin  string   // the program every task runs, on storage every node sees
	args []string // its arguments; taskShards stands for the task's "K/N"
	// check compares the union of what the tasks of an array of that many
	// tasks wrote with what one host writes alone.
	check func(t *testing.T, tasks int)
}

// The quantize run of the array: the tiny model of testdata to Q4_K_M in
// shards of at most 1 MB (four of them), one thread per task.
const (
	splitSize = "1M"
	fileType  = "Q4_K_M"
)

// quantizeJob is docs/distributed.md's job on shared storage (any folder,
// on one node): a gquant built from this tree into shared/bin, each task
// running
//
//	gquant quantize --only-shards K/N --resume --split-max-size 1M IN shared/out/tiny Q4_K_M 1
//
// and a check that runs the same command line without --only-shards into
// shared/one, compares the two folders file for file and byte for byte
// (shards and sidecars), and runs gquant verify on the union, with the
// quantize arguments and with a shard alone.
func quantizeJob(t *testing.T, shared string) arrayJob {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build gquant with:", err)
	}
	in, err := filepath.Abs(filepath.Join("..", "..", "testdata", "tiny-deepseek2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "bin", "gquant")
	build := exec.Command(goCmd, "build", "-o", bin, "github.com/gquant/gquant/cmd/gquant")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, one := filepath.Join(shared, "out"), filepath.Join(shared, "one")
	for _, d := range []string{out, one} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string) []string {
		return []string{"--split-max-size", splitSize, in, filepath.Join(dir, "tiny"), fileType, "1"}
	}
	gquant := func(t *testing.T, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		b, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("gquant %s: %v", strings.Join(args, " "), err)
		}
		return cmd.ProcessState.ExitCode(), string(b)
	}
	return arrayJob{
		bin:  bin,
		args: append([]string{"quantize", "--only-shards", taskShards, "--resume"}, run(out)...),
		check: func(t *testing.T, tasks int) {
			t.Helper()
			if code, text := gquant(t, append([]string{"quantize"}, run(one)...)...); code != 0 {
				t.Fatalf("the one-host run: status %d\n%s", code, text)
			}
			want, got := readDir(t, one), readDir(t, out)
			if len(want) < 2*tasks {
				t.Fatalf("one host wrote %v: want %d shards or more, each with its sidecar", names(want), tasks)
			}
			if !slices.Equal(names(got), names(want)) {
				t.Fatalf("the tasks wrote %v, one host %v", names(got), names(want))
			}
			for _, name := range names(want) {
				if !bytes.Equal(got[name], want[name]) {
					t.Errorf("%s: the tasks' file (%d bytes) differs from one host's (%d bytes)", name, len(got[name]), len(want[name]))
				}
			}
			shard := filepath.Join(out, names(got)[0])
			for _, args := range [][]string{append([]string{"verify"}, run(out)...), {"verify", shard}} {
				if code, text := gquant(t, args...); code != 0 {
					t.Errorf("gquant %s: status %d\n%s", strings.Join(args, " "), code, text)
				}
			}
		},
	}
}

// readDir reads every file of dir, by name.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// names lists the keys of files, sorted.
func names(files map[string][]byte) []string {
	var out []string
	for name := range files {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// The job script, run here by sh with the variables Slurm sets for each task
// of the array, writes the one-host run's shards (quantizeJob); arguments
// that need quoting reach the program as they were.
func TestJobScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	const tasks = 3
	shared := t.TempDir()
	job := quantizeJob(t, shared)
	script := jobScript(tasks, job.bin, job.args)
	if !strings.Contains(script, "\n#SBATCH --array=1-3\n") {
		t.Errorf("script lacks #SBATCH --array=1-3:\n%s", script)
	}
	path := filepath.Join(shared, "job.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= tasks; k++ {
		cmd := exec.Command(sh, path)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", k), fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", tasks))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %d: %v\n%s", k, err, out)
		}
	}
	job.check(t, tasks)

	args := []string{"plain", "two words", "it's", `"$HOME"`, "", "a\nb", taskShards}
	cmd := exec.Command(sh, "-c", jobScript(1, "printf", append([]string{`%s|`}, args...)))
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=5")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "plain|two words|it's|\"$HOME\"||a\nb|2/5|"; string(out) != want {
		t.Errorf("arguments arrived as %q, want %q", out, want)
	}
}

// The scripts parse (bash -n); running them needs root and the tag "slurm".
func TestScriptsParse(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	for _, name := range []string{"start-slurm.sh", "stop-slurm.sh"} {
		if out, err := exec.Command(bash, "-n", name).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}
