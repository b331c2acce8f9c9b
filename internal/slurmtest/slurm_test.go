//go:build slurm

package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cluster is a single-node Slurm that start-slurm.sh started.
type cluster struct {
	dir  string // what start-slurm.sh wrote: slurm.conf, state, logs, munge
	conf string // its slurm.conf, SLURM_CONF of every client command
}

// startCluster returns the cluster of $GQUANT_SLURM_DIR, started there by
// start-slurm.sh (which returns at once when it is up) and left running, or
// else starts one in a temporary folder and stops and removes it when the
// test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := os.Getenv("GQUANT_SLURM_DIR")
	own := dir == ""
	if own {
		// Not t.TempDir: munged wants its socket's folder searchable by
		// all (0755), and stop-slurm.sh --purge removes what root wrote.
		var err error
		if dir, err = os.MkdirTemp("", "gquant-slurm-"); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &cluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	if own {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if out, err := script(ctx, "stop-slurm.sh", "--purge", dir).CombinedOutput(); err != nil {
				t.Errorf("stop-slurm.sh: %v\n%s", err, out)
			}
			os.Remove(dir) // left empty when start-slurm.sh failed early
		})
	}
	// Installing the packages (apt-get) takes minutes on a bare machine.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	var stderr bytes.Buffer
	cmd := script(ctx, "start-slurm.sh", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start-slurm.sh %s: %v\n%s%s", dir, err, out, stderr.Bytes())
	}
	if want := "export SLURM_CONF=" + c.conf + "\n"; !strings.HasSuffix(string(out), want) {
		t.Fatalf("start-slurm.sh printed %q, want a last line %q", out, want)
	}
	t.Logf("Slurm in %s up after %.1f s", dir, time.Since(start).Seconds())
	return c
}

// script is a command that runs one of this package's shell scripts.
func script(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", append([]string{name}, args...)...)
	// The daemons the script starts detach and send their output to files;
	// WaitDelay guards against one that keeps our pipes open anyway.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// command is a Slurm client command (sbatch, squeue, ...) for this cluster.
func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runArray submits the batch script at path (its #SBATCH lines give the
// array) and waits until every task has ended: sbatch --wait, whose exit
// status is the highest of the tasks'. Each task's output goes to
// logs/JOB_TASK.out; on failure the test log shows them and the daemons' logs.
func (c *cluster) runArray(t *testing.T, path, logs string, limit time.Duration) {
	t.Helper()
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := c.command(ctx, "sbatch", "--wait", "--parsable",
		fmt.Sprintf("--time=%d", int(limit.Minutes())+1),
		"--chdir="+filepath.Dir(path),
		"--output="+filepath.Join(logs, "%A_%a.out"), path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	job := strings.TrimSpace(stdout.String())
	if err != nil {
		if job != "" && ctx.Err() != nil {
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			c.command(cctx, "scancel", job).Run()
			ccancel()
		}
		t.Errorf("sbatch --wait %s (job %q): %v\n%s", path, job, err, stderr.Bytes())
		c.logTails(t, logs)
		t.FailNow()
	}
	t.Logf("job array %s ended after %.1f s", job, time.Since(start).Seconds())
}

// logTails logs the tasks' outputs and the last lines of the daemons' logs.
func (c *cluster) logTails(t *testing.T, logs string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(logs, "*.out"))
	files = append(files, filepath.Join(c.dir, "log", "slurmctld.log"), filepath.Join(c.dir, "log", "slurmd.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Log(err)
			continue
		}
		lines := strings.SplitAfter(string(data), "\n")
		t.Logf("--- %s:\n%s", f, strings.Join(lines[max(0, len(lines)-30):], ""))
	}
}

// The Slurm example of docs/distributed.md with N=3 on a single-node Slurm:
// a job array whose tasks each run their part (--array=1-3, K/N from
// SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT), and the union of what they
// wrote checked against one host's run.
func TestJobArray(t *testing.T) {
	const tasks = 3
	c := startCluster(t)
	// Shared storage: on one node, any folder (the tasks run as the user
	// who submitted them).
	shared := t.TempDir()
	job := quantizeJob(t, shared)
	path := filepath.Join(shared, "job.sh")
	if err := os.WriteFile(path, []byte(jobScript(tasks, job.bin, job.args)), 0o755); err != nil {
		t.Fatal(err)
	}
	c.runArray(t, path, filepath.Join(shared, "logs"), 5*time.Minute)
	logs, _ := filepath.Glob(filepath.Join(shared, "logs", "*.out"))
	if len(logs) != tasks {
		t.Errorf("%d task logs %v, want %d", len(logs), logs, tasks)
	}
	job.check(t, tasks)
	if t.Failed() {
		c.logTails(t, filepath.Join(shared, "logs"))
	}
}
