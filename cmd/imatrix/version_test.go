package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/cli"
)

func TestVersionAndCompletion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := runCmd(t, args...)
		if code != 0 || out != cli.Version("imatrix")+"\n" || errOut != "" || !strings.HasPrefix(out, "imatrix ") {
			t.Errorf("%q: exit %d, %q, %q", args, code, out, errOut)
		}
	}
	code, script, errOut := runCmd(t, "completion", "bash")
	if code != 0 || errOut != "" {
		t.Fatalf("completion bash: exit %d, %q", code, errOut)
	}
	for _, want := range []string{`"stats") flags="--force --json --model --svg --help"`, `"check") flags=`, "complete -o filenames -o bashdefault -F _imatrix imatrix"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	path := filepath.Join(t.TempDir(), "imatrix.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
}
