package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// ShellJoin gives a line bash reads back as the same words, on one line.
func TestShellJoin(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--place", ".*=GPU"}, `--place '.*=GPU'`},
		{[]string{"--place", "norm|gate_inp=GPU"}, `--place 'norm|gate_inp=GPU'`},
		{[]string{"--budget", "CPU=4MiB,GPU=2MiB", "m.gguf"}, `--budget CPU=4MiB,GPU=2MiB m.gguf`},
		{[]string{"it's", ""}, `'it'\''s' ''`},
		{[]string{"a\nb=q8_0", `back\slash'`}, `$'a\x0ab=q8_0' 'back\slash'\'''`},
		{[]string{"tab\there's\\"}, `$'tab\x09here\'s\\'`},
	}
	bash, err := exec.LookPath("bash")
	for _, c := range cases {
		got := ShellJoin(c.args)
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("%q: %q is more than one line", c.args, got)
		}
		if err != nil {
			continue
		}
		out, err := exec.Command(bash, "-c", `printf '%s\0' `+got).Output()
		if err != nil {
			t.Fatal(err)
		}
		if back := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); strings.Join(back, "\x01") != strings.Join(c.args, "\x01") {
			t.Errorf("%q: bash reads %s back as %q", c.args, got, back)
		}
	}
}
