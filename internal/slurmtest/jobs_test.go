package slurmtest

import (
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
// taskShards, which the shell expands. This is where the real work goes: for
// the quantize run, bin is the gquant binary the test built and args are
//
//	quantize --only-shards taskShards --split-max-size SIZE IN OUT TYPE
//
// (see standIn for the stand-in used until then).
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

// standIn is the array's work until gquant quantize takes --only-shards:
// each task writes, into shared/out, a file named "K-of-N" that holds "K/N",
// so the union of an array of N tasks is the N files 1-of-N ... N-of-N, which
// is what one host running all N parts writes. The quantize run replaces it
// with: bin a gquant built by the test, args a split quantize with
// --only-shards taskShards, and check a byte-for-byte comparison of the
// union of shards with a one-host run of the same arguments.
func standIn(t *testing.T, shared string) arrayJob {
	t.Helper()
	out := filepath.Join(shared, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return arrayJob{
		bin:  "/bin/sh",
		args: []string{"-c", `echo "$2" > "$1/$(echo "$2" | sed 's,/,-of-,')"`, "stand-in", out, taskShards},
		check: func(t *testing.T, tasks int) {
			t.Helper()
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e.Name()+": "+string(data))
			}
			for k := 1; k <= tasks; k++ {
				want = append(want, fmt.Sprintf("%d-of-%d: %d/%d\n", k, tasks, k, tasks))
			}
			slices.Sort(want) // ReadDir's order: by name
			if !slices.Equal(got, want) {
				t.Errorf("the tasks wrote %q, want %q", got, want)
			}
		},
	}
}

// The job script, run here by sh with the variables Slurm sets for each task
// of the array, does the stand-in's work; arguments that need quoting reach
// the program as they were.
func TestJobScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	const tasks = 3
	shared := t.TempDir()
	job := standIn(t, shared)
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
