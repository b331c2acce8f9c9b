package gguf

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A process that has exited but is not yet reaped (a zombie) answers
// kill(pid, 0); its temporary files are stale all the same, so that a run
// started again at once after an interrupted one is not refused as
// "being written by another process".
func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); !zombie(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d never became a zombie", pid)
		}
	}
	if processAlive(pid) {
		t.Errorf("zombie %d is reported alive", pid)
	}
	if !processAlive(os.Getpid()) || zombie(os.Getpid()) {
		t.Error("this process is not reported alive")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")
	name := filepath.Join(dir, ".m.gguf"+tempMarker+strconv.Itoa(pid)+"-x1")
	if err := os.WriteFile(name, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	tfs, err := TempFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tfs) != 1 || tfs[0].PID != pid || tfs[0].Live {
		t.Errorf("TempFiles = %+v, want %s of process %d, not live", tfs, name, pid)
	}
}
