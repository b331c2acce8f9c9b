package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gquant/gquant/gguf"
)

func writeTestFile(t *testing.T, path, text string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// wantError checks Check's result: nil where want is nil, else an error
// that is want and says say.
func wantError(t *testing.T, err, want error, say string) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("refused: %v", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("error %v, want %v", err, want)
	case want != nil && !strings.Contains(err.Error(), say):
		t.Errorf("error %q does not say %q", err, say)
	}
}

// One output policy for every command (issue 16, items 2, 3 and 5): each
// case is a set of inputs and outputs and the error Check must give.
func TestFilesCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "imat.dat")
	writeTestFile(t, in, "data", 0o644)
	if err := os.Symlink(in, filepath.Join(dir, "link.dat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, filepath.Join(dir, "hard.dat")); err != nil {
		t.Fatal(err)
	}
	exists := filepath.Join(dir, "exists.gguf")
	writeTestFile(t, exists, "old", 0o644)
	readonly := filepath.Join(dir, "readonly.gguf")
	writeTestFile(t, readonly, "old", 0o444)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	spelled := filepath.Join(dir, "sub", "..", "imat.dat")
	for _, tc := range []struct {
		name    string
		force   bool
		inputs  []string
		outputs []string
		want    error  // nil: accepted
		say     string // in the message
	}{
		{"new output", false, []string{in}, []string{filepath.Join(dir, "new.gguf")}, nil, ""},
		{"output is an input", true, []string{"m.gguf", in}, []string{in}, gguf.ErrSameFile, "imat.dat is the input"},
		{"another spelling", true, []string{in}, []string{spelled}, gguf.ErrSameFile, spelled},
		{"symbolic link", true, []string{in}, []string{filepath.Join(dir, "link.dat")}, gguf.ErrSameFile, "link.dat"},
		{"hard link", true, []string{in}, []string{filepath.Join(dir, "hard.dat")}, gguf.ErrSameFile, "hard.dat"},
		{"input is a link", true, []string{filepath.Join(dir, "link.dat")}, []string{in}, gguf.ErrSameFile, "link.dat"},
		{"exists", false, nil, []string{exists}, ErrExists, "pass --force"},
		{"exists, --force", true, nil, []string{exists}, nil, ""},
		{"read-only", false, nil, []string{readonly}, ErrReadOnly, "not even with --force"},
		{"read-only, --force", true, nil, []string{readonly}, ErrReadOnly, "readonly.gguf"},
		{"directory", true, nil, []string{filepath.Join(dir, "sub")}, ErrOutputPath, "is a directory"},
		{"named pipe", true, nil, []string{fifo}, ErrOutputPath, "named pipe"},
		{"missing directory", false, nil, []string{filepath.Join(dir, "nope", "x.gguf")}, ErrOutputPath, "does not exist"},
		{"parent is a file", false, nil, []string{filepath.Join(exists, "x.gguf")}, ErrOutputPath, "not a directory"},
		{"empty name", false, nil, []string{""}, ErrOutputPath, "empty"},
		{"given twice", false, nil, []string{filepath.Join(dir, "a.gguf"), filepath.Join(dir, ".", "a.gguf")}, ErrOutputPath, "given for two outputs"},
		{"written twice", true, nil, []string{in, filepath.Join(dir, "link.dat")}, ErrOutputPath, "written twice (also as " + in},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Files{Force: tc.force}
			f.Read(tc.inputs...)
			for _, o := range tc.outputs {
				f.Write(o, 10)
			}
			var log bytes.Buffer
			wantError(t, f.Check(&log), tc.want, tc.say)
		})
	}
	if b, _ := os.ReadFile(in); string(b) != "data" {
		t.Error("the input changed")
	}
}

// A link is judged by what it names, with --force too (/dev/stdout is a
// link to a pipe; a link to a read-only file is not replaced); a dangling
// link may be replaced. A file written beside an output (quantize's
// sidecar) must not be an input, nor a directory.
func TestFilesCheckLinksAndBeside(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "o.gguf.gquant.json") // an input named like o.gguf's sidecar
	writeTestFile(t, in, "model", 0o644)
	readonly := filepath.Join(dir, "readonly.gguf")
	writeTestFile(t, readonly, "old", 0o444)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	toFIFO, toRO, dangling := link("tofifo.gguf", fifo), link("toro.gguf", readonly), link("dangling.gguf", filepath.Join(dir, "nothing"))
	if err := os.Mkdir(filepath.Join(dir, "d.gguf.gquant.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	sidecar := func(p string) string { return p + ".gquant.json" }
	for _, tc := range []struct {
		name, out string
		want      error
		say       string
	}{
		{"link to a pipe", toFIFO, ErrOutputPath, "named pipe"},
		{"link to a read-only file", toRO, ErrReadOnly, "toro.gguf is read-only"},
		{"dangling link", dangling, nil, ""},
		{"beside is the input", filepath.Join(dir, "o.gguf"), gguf.ErrSameFile, "o.gguf.gquant.json, written beside " + filepath.Join(dir, "o.gguf") + ", is the input"},
		{"beside is a directory", filepath.Join(dir, "d.gguf"), ErrOutputPath, "is not a regular file (a directory)"},
		{"beside absent", filepath.Join(dir, "new.gguf"), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Files{Force: true}
			f.Read(in)
			f.Write(tc.out, 10, sidecar(tc.out))
			wantError(t, f.Check(&bytes.Buffer{}), tc.want, tc.say)
		})
	}
	if b, _ := os.ReadFile(in); string(b) != "model" {
		t.Error("the input changed")
	}
}

// A stale temporary file of a file written beside an output (a sidecar's,
// after a kill -9) is swept with the output's.
func TestFilesSweepBeside(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	stale := filepath.Join(dir, fmt.Sprintf(".o.gguf.gquant.json.tmp-%d-abcdef", deadPID(t)))
	writeTestFile(t, stale, "{", 0o644)
	f := &Files{}
	f.Write(out, 10, out+".gquant.json")
	var log bytes.Buffer
	if err := f.Check(&log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file of the sidecar kept: %v", err)
	}
	if !strings.Contains(log.String(), "removed "+stale) {
		t.Errorf("log %q", log.String())
	}
}

// checkGone is a log that, at each note, requires files to be gone: what
// the note follows must be done before it is written (a note to a closed
// pipe ends the process).
type checkGone struct {
	t     *testing.T
	files []string
	notes int
}

func (c *checkGone) Write(p []byte) (int, error) {
	c.notes++
	for _, f := range c.files {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			c.t.Errorf("%s still there when the note %q is written: %v", f, p, err)
		}
	}
	return len(p), nil
}

// A stale temporary file and its progress record are both removed before
// the note that says so.
func TestFilesSweepProgressBeforeNote(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	stale := filepath.Join(dir, fmt.Sprintf(".o.gguf.tmp-%d-abcdef", deadPID(t)))
	writeTestFile(t, stale, "GGUF", 0o644)
	writeTestFile(t, stale+".progress", "{}", 0o644)
	log := &checkGone{t: t, files: []string{stale, stale + ".progress"}}
	f := &Files{}
	f.Write(out, 10)
	if err := f.Check(log); err != nil {
		t.Fatal(err)
	}
	if log.notes != 1 {
		t.Errorf("%d notes, want 1", log.notes)
	}
}

// The outputs must fit in the free space of their file system, added up
// per file system; the error names the path and both byte counts.
func TestFilesCheckSpace(t *testing.T) {
	dir := t.TempDir()
	f := &Files{free: func(string) (int64, bool) { return 1000, true }}
	f.Write(filepath.Join(dir, "a.gguf"), 600)
	f.Write(filepath.Join(dir, "b.gguf"), 600)
	err := f.Check(&bytes.Buffer{})
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("error %v, want ErrNoSpace", err)
	}
	for _, want := range []string{"a.gguf", "needs 1200 bytes", "1000 bytes", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	f = &Files{free: func(string) (int64, bool) { return 1200, true }}
	f.Write(filepath.Join(dir, "a.gguf"), 600)
	f.Write(filepath.Join(dir, "b.gguf"), 600)
	f.Write(filepath.Join(dir, "c.gguf"), -1) // unknown size
	if err := f.Check(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	// The real file system.
	f = &Files{}
	f.Write(filepath.Join(dir, "huge.gguf"), 1<<60)
	if err := f.Check(&bytes.Buffer{}); !errors.Is(err, ErrNoSpace) {
		t.Errorf("an exabyte output: %v", err)
	}
}

// After a kill -9 the next run on the same output removes the stale
// temporary files of that output and says so; a file another process is
// writing stops the run; an older version's file is reported (issue 16,
// item 4).
func TestFilesCheckStaleTemps(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	dead := deadPID(t)
	stale := filepath.Join(dir, fmt.Sprintf(".out.gguf.tmp-%d-abc", dead))
	staged := filepath.Join(dir, fmt.Sprintf("..out.gguf.tmp-%d-abc.tmp-%d-def", dead, dead))
	legacy := filepath.Join(dir, ".out.gguf.tmp-123456")
	other := filepath.Join(dir, fmt.Sprintf(".other.gguf.tmp-%d-abc", dead))
	for _, p := range []string{stale, staged, legacy, other} {
		writeTestFile(t, p, "partial", 0o644)
	}
	var log bytes.Buffer
	f := &Files{}
	f.Write(out, 10)
	if err := f.Check(&log); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, staged} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s kept", p)
		}
		if !strings.Contains(log.String(), "removed "+p) {
			t.Errorf("removal of %s not reported: %s", p, log.String())
		}
	}
	for _, p := range []string{legacy, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", p)
		}
	}
	if !strings.Contains(log.String(), legacy) {
		t.Errorf("older version's file not reported: %s", log.String())
	}

	// A temporary file another live process holds: the run stops.
	live, err := gguf.CreateTemp(out)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	busy := filepath.Join(dir, ".out.gguf.tmp-1-xyz") // process 1 always runs
	writeTestFile(t, busy, "partial", 0o644)
	err = f.Check(&log)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "process 1") {
		t.Errorf("a file of a live process: %v", err)
	}
	os.Remove(busy)
	// This process's own temporary file is neither removed nor in the way.
	if err := f.Check(&log); err != nil {
		t.Errorf("own temporary file: %v", err)
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Error("own temporary file removed")
	}
}

// WriteFile creates its file with 0666 and lets the umask decide (issue
// 16, item 14), through a temporary file that leaves nothing on failure.
func TestWriteFileUmask(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	p := filepath.Join(dir, "x.dat")
	if err := WriteFile(p, []byte("hello"), false); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v with umask 027, want 0640", st.Mode().Perm())
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, false); err == nil {
		t.Error("wrote into a missing directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// Without replace, WriteFile never replaces a file at its path (one that
// appeared after the command's checks): the error wraps os.ErrExist and the
// file is untouched; with replace it is replaced.
func TestWriteFileNoReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.txt")
	writeTestFile(t, p, "user data", 0o644)
	if err := WriteFile(p, []byte("new"), false); !errors.Is(err, os.ErrExist) {
		t.Errorf("over an existing file: %v, want os.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "user data" {
		t.Errorf("the file now holds %q", b)
	}
	if err := WriteFile(p, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("replace: the file holds %q", b)
	}
}

// Preview checks as Check does without its effects: a stale temporary file
// stays, an existing output is a note (no refusal), another live process's
// temporary file and an output that is an input are refusals.
func TestFilesPreview(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	writeTestFile(t, out, "earlier", 0o644)
	stale := filepath.Join(dir, fmt.Sprintf(".o.gguf.tmp-%d-abcdef", deadPID(t)))
	writeTestFile(t, stale, "GGUF", 0o644)
	f := &Files{}
	f.Write(out, 10)
	var log bytes.Buffer
	if err := f.Preview(&log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), out+" exists: the run replaces it only with --force") {
		t.Errorf("log %q", log.String())
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("Preview swept %s: %v", stale, err)
	}
	live := filepath.Join(dir, fmt.Sprintf(".o.gguf.tmp-%d-abcdef", os.Getppid()))
	writeTestFile(t, live, "GGUF", 0o644)
	if err := f.Preview(io.Discard); !errors.Is(err, ErrBusy) {
		t.Errorf("another process's output: %v, want ErrBusy", err)
	}
	os.Remove(live)
	f.Read(out)
	if err := f.Preview(io.Discard); !errors.Is(err, gguf.ErrSameFile) {
		t.Errorf("output is an input: %v", err)
	}
}

// lockAsOther locks path through an open file of its own, as another
// process would (flock locks belong to the open file), until the test ends.
func lockAsOther(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// In containers every gquant may be process 1 of its own PID namespace,
// on a shared directory: a temporary file with this process's id that this
// process did not name is another process's. Locked, it is being written
// (the run stops, and an interrupt here does not remove it); not locked,
// it is a killed run's (a restarted pod's predecessor) and is swept. The
// files this process named are neither in the way nor swept, and go on an
// interrupt.
func TestFilesSamePIDOtherNamespace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		own    bool // named by this process (gguf.CreateTemp)
		locked bool // by another open file
		busy   bool // Check and Preview refuse
		swept  bool // Check removes it
		onStop bool // removeOwnTemps removes it
	}{
		{name: "another namespace's, locked", locked: true, busy: true},
		{name: "another namespace's, left by a killed run", swept: true},
		{name: "this process's", own: true, onStop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.gguf")
			tmp := filepath.Join(dir, fmt.Sprintf(".out.gguf.tmp-%d-xyz", os.Getpid()))
			if tc.own {
				f, err := gguf.CreateTemp(out)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				tmp = f.Name()
			} else {
				writeTestFile(t, tmp, "partial", 0o644)
			}
			if tc.locked {
				lockAsOther(t, tmp)
			}
			writeTestFile(t, tmp+".progress", "{}\n", 0o644)
			exists := func(when string, want bool) {
				t.Helper()
				for _, p := range []string{tmp, tmp + ".progress"} {
					if _, err := os.Stat(p); (err == nil) != want {
						t.Errorf("%s: %s there: %v, want %v", when, p, err == nil, want)
					}
				}
			}
			f := &Files{}
			f.Write(out, 10)
			err := f.Preview(io.Discard)
			if errors.Is(err, ErrBusy) != tc.busy {
				t.Errorf("Preview: %v, busy %v", err, tc.busy)
			}
			var log bytes.Buffer
			err = f.Check(&log)
			if errors.Is(err, ErrBusy) != tc.busy {
				t.Errorf("Check: %v, busy %v", err, tc.busy)
			}
			if tc.busy && (err == nil || !strings.Contains(err.Error(), "another process of id "+strconv.Itoa(os.Getpid())+", as this one's") ||
				!strings.Contains(err.Error(), "another PID namespace")) {
				t.Errorf("Check: %v, want it to say another process of the same id", err)
			}
			if tc.swept != strings.Contains(log.String(), "removed "+tmp) {
				t.Errorf("log %q, swept %v", log.String(), tc.swept)
			}
			exists("after Check", !tc.swept)
			if tc.swept {
				return
			}
			removeOwnTemps([]string{out})
			exists("after removeOwnTemps", !tc.onStop)
		})
	}
}

// An output kept as it is (quantize --partial-requant, --resume): a killed
// earlier write of it leaves a stale temporary file and its progress record,
// which Check removes; one another process is writing stops the run, in
// Check and in Preview.
func TestFilesKeptSweep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.gguf")
	writeTestFile(t, out, "GGUF", 0o444) // read-only: nothing is written to it
	stale := filepath.Join(dir, fmt.Sprintf(".o.gguf.tmp-%d-abcdef", deadPID(t)))
	writeTestFile(t, stale, "GGUF", 0o644)
	writeTestFile(t, stale+".progress", "{}", 0o644)
	f := &Files{}
	f.KeepAsIs(out, out+".gquant.json")
	var log bytes.Buffer
	if err := f.Check(&log); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, stale + ".progress"} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", p, err)
		}
	}
	if !strings.Contains(log.String(), "removed "+stale) {
		t.Errorf("log %q", log.String())
	}

	live := filepath.Join(dir, fmt.Sprintf(".o.gguf.tmp-%d-ghijkl", deadPID(t)))
	writeTestFile(t, live, "GGUF", 0o644)
	lockAsOther(t, live)
	for name, check := range map[string]func(io.Writer) error{"Check": f.Check, "Preview": f.Preview} {
		if err := check(io.Discard); !errors.Is(err, ErrBusy) {
			t.Errorf("%s with a kept output being written: %v", name, err)
		}
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the live file: %v", err)
	}
}

// An output named by an option is refused naming the option: fit has two
// (-o and --cache), and "cannot write output /tmp: it is a directory"
// left the user to guess which to change.
func TestFilesCheckNamesFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		out  string
		want error
	}{
		{"a directory", dir, ErrOutputPath},
		{"the input", in, gguf.ErrSameFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Files{}
			f.Read(in)
			f.Write(filepath.Join(dir, "recipe.txt"), -1)
			f.NameFlag(filepath.Join(dir, "recipe.txt"), "-o")
			f.Replace(tc.out, -1)
			f.NameFlag(tc.out, "--cache")
			err := f.Check(io.Discard)
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "--cache: ") {
				t.Errorf("error %v, want %v starting with the flag", err, tc.want)
			}
		})
	}
	// A positional output is named as before.
	f := &Files{}
	f.Write(dir, -1)
	if err := f.Check(io.Discard); !errors.Is(err, ErrOutputPath) || !strings.HasPrefix(err.Error(), ErrOutputPath.Error()) {
		t.Errorf("positional: %v", err)
	}
}

// ReadOnlyFile: only an existing regular file (or a link to one) that
// cannot be replaced. A directory this process may not write is not
// testable as root, whose access checks pass.
func TestReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	rw := filepath.Join(dir, "rw")
	ro := filepath.Join(dir, "ro")
	os.WriteFile(rw, []byte("x"), 0o644)
	os.WriteFile(ro, []byte("x"), 0o444)
	link := filepath.Join(dir, "link")
	os.Symlink(ro, link)
	for _, tc := range []struct {
		path string
		want string
	}{
		{rw, ""},
		{ro, "read-only"},
		{link, "read-only"},
		{filepath.Join(dir, "absent"), ""},
		{dir, ""},
	} {
		if got := ReadOnlyFile(tc.path); got != tc.want {
			t.Errorf("ReadOnlyFile(%s) = %q, want %q", filepath.Base(tc.path), got, tc.want)
		}
	}
}
