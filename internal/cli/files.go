package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gquant/gquant/gguf"
)

// Errors of Files.Check, for errors.Is. Each comes wrapped with the path and
// the detail.
var (
	// ErrExists: an output exists and --force was not given.
	ErrExists = errors.New("output exists")
	// ErrReadOnly: an output exists and is read-only; it is never replaced.
	ErrReadOnly = errors.New("output is read-only")
	// ErrOutputPath: an output is a directory or another non-regular file,
	// or its directory is missing or not writable.
	ErrOutputPath = errors.New("cannot write output")
	// ErrNoSpace: the outputs do not fit in the free space of their file system.
	ErrNoSpace = errors.New("not enough free space")
	// ErrBusy: another process is writing the same output.
	ErrBusy = errors.New("output is being written by another process")
)

// Files is what a command reads and writes, so that one policy applies to
// every command before any work starts: no output may be one of the inputs
// (under any spelling or link), an existing output is an error unless Force
// (--force), a read-only output is never replaced, an output must not be a
// directory or another non-regular file, its directory must exist and be
// writable, and the outputs must fit in the free space. Check also removes
// the stale temporary files an interrupted run left for the same outputs.
type Files struct {
	// Force allows replacing existing outputs (--force).
	Force bool
	// Inputs are every file the command reads.
	Inputs []string
	// Outputs are every file the command writes.
	Outputs []Output
	// MakeDirs: the command creates missing output directories (quantize,
	// as llama-quantize does; split, repack), so only the nearest existing
	// one must be writable.
	MakeDirs bool
	// Keep: an interrupt keeps this process's temporary files, with their
	// progress records, for a later run to continue (quantize --resume)
	// instead of removing them.
	Keep bool
	// Continue lists stale temporary files the command continues
	// (quantize --resume): Check's sweep leaves them and their progress
	// records.
	Continue []string
	// Kept are existing outputs the command keeps as they are (quantize
	// --partial-requant, --resume), with the files beside them: Check
	// fails if another process is writing one and removes the stale
	// temporary files a killed earlier run left for them (which would
	// otherwise stay, a part's size each), and checks nothing else.
	Kept []string

	before []os.FileInfo                  // each output as Check found it (nil: absent)
	free   func(dir string) (int64, bool) // freeSpace, replaced by tests
}

// Output is one file to write and the bytes it needs on its file system,
// with the files written beside it (-1: unknown; the free-space check then
// skips it).
type Output struct {
	Path string
	Size int64
	// Replace: the command was asked to replace this existing file
	// (quantize --partial-requant on an output that does not match the
	// plan), so it needs no --force. A read-only file is still refused.
	Replace bool
	// Beside are files the command writes next to the output without
	// asking (quantize's sidecar): none may be an input or other than a
	// regular file, and their temporary files are swept and removed on an
	// interrupt as the output's are.
	Beside []string
	// Flag is the option that names the output ("--cache", "-o"), which
	// Check's errors then start with: a command with several outputs
	// says which option to change. Empty for a positional argument.
	Flag string
}

// paths lists the output and the files beside it.
func (o Output) paths() []string { return append([]string{o.Path}, o.Beside...) }

// Read adds input files.
func (f *Files) Read(paths ...string) {
	for _, p := range paths {
		if p != "" {
			f.Inputs = append(f.Inputs, p)
		}
	}
}

// Write adds an output of size bytes (-1 when not known in advance) and
// the files written beside it (see Output.Beside).
func (f *Files) Write(path string, size int64, beside ...string) {
	f.Outputs = append(f.Outputs, Output{Path: path, Size: size, Beside: beside})
}

// Replace adds an output the command may replace without --force (see
// Output.Replace).
func (f *Files) Replace(path string, size int64, beside ...string) {
	f.Outputs = append(f.Outputs, Output{Path: path, Size: size, Replace: true, Beside: beside})
}

// NameFlag says that option flag names the output at path last added
// (see Output.Flag).
func (f *Files) NameFlag(path, flag string) {
	for i := len(f.Outputs) - 1; i >= 0; i-- {
		if f.Outputs[i].Path == path {
			f.Outputs[i].Flag = flag
			return
		}
	}
}

// Paths lists the outputs' paths.
func (f *Files) Paths() []string {
	out := make([]string, len(f.Outputs))
	for i, o := range f.Outputs {
		out[i] = o.Path
	}
	return out
}

// written lists every file the command writes: the outputs and the files
// beside them.
func (f *Files) written() []string {
	var out []string
	for _, o := range f.Outputs {
		out = append(out, o.paths()...)
	}
	return out
}

// Check runs every check on the outputs, first to fail wins, and removes
// stale temporary files of theirs, saying so on log (one line each). It
// reads no tensor data: commands call it once the plan is known and before
// any work.
func (f *Files) Check(log io.Writer) error {
	f.before = make([]os.FileInfo, len(f.Outputs))
	for i, o := range f.Outputs {
		if err := f.checkOne(i, o); err != nil {
			if o.Flag != "" {
				return fmt.Errorf("%s: %w", o.Flag, err)
			}
			return err
		}
	}
	for i, o := range f.Outputs {
		for _, p := range o.paths() {
			if err := sweepTemps(p, log, f.Continue, f.Inputs); err != nil {
				return err
			}
		}
		f.before[i], _ = os.Stat(o.Path)
	}
	for _, p := range f.Kept {
		if err := sweepTemps(p, log, f.Continue, f.Inputs); err != nil {
			return err
		}
	}
	return checkSpace(f.Outputs, f.freeFunc())
}

// KeepAsIs adds an output the command keeps as it is, and the files beside
// it (see Files.Kept).
func (f *Files) KeepAsIs(path string, beside ...string) {
	f.Kept = append(append(f.Kept, path), beside...)
}

// freeFunc tells the free space of a directory: freeSpace, or the tests'.
func (f *Files) freeFunc() func(dir string) (int64, bool) {
	if f.free != nil {
		return f.free
	}
	return freeSpace
}

func (f *Files) checkOne(i int, o Output) error {
	if o.Path == "" {
		return fmt.Errorf("%w: empty output name", ErrOutputPath)
	}
	if dirName(o.Path) {
		// "new/" names a directory, existing or not: a file cannot be made
		// there, which the rename at the end found, after all the work.
		return fmt.Errorf("%w %s: it names a directory (a file name is needed)", ErrOutputPath, o.Path)
	}
	for _, in := range f.Inputs {
		if same, _ := SameFile(o.Path, in); same {
			return fmt.Errorf("%w: %s is the input %s", gguf.ErrSameFile, o.Path, in)
		}
	}
	for _, prev := range f.Outputs[:i] {
		switch same, _ := SameFile(o.Path, prev.Path); {
		case filepath.Clean(o.Path) == filepath.Clean(prev.Path):
			return fmt.Errorf("%w: %s is given for two outputs", ErrOutputPath, o.Path)
		case same:
			return fmt.Errorf("%w: %s is written twice (also as %s)", ErrOutputPath, o.Path, prev.Path)
		}
	}
	dir := filepath.Dir(o.Path)
	if f.MakeDirs {
		dir = existingAncestor(dir)
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w %s: directory %s does not exist", ErrOutputPath, o.Path, dir)
	case err != nil:
		return fmt.Errorf("%w %s: %w", ErrOutputPath, o.Path, err)
	case !st.IsDir():
		return fmt.Errorf("%w %s: %s is not a directory", ErrOutputPath, o.Path, dir)
	}
	if err := writable(dir); err != nil {
		return fmt.Errorf("%w %s: directory %s is not writable: %w", ErrOutputPath, o.Path, dir, err)
	}
	for _, b := range o.Beside {
		if err := f.checkBeside(o.Path, b); err != nil {
			return err
		}
	}
	lst, err := os.Lstat(o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrOutputPath, o.Path, err)
	}
	// A link is judged by what it names (/dev/stdout is a link to a pipe);
	// a dangling one may be replaced with --force.
	dangling := false
	if st, err = os.Stat(o.Path); err != nil {
		st, dangling = lst, true
	}
	switch {
	case st.IsDir():
		return fmt.Errorf("%w %s: it is a directory", ErrOutputPath, o.Path)
	case !dangling && !st.Mode().IsRegular():
		return fmt.Errorf("%w %s: it is not a regular file (%s)", ErrOutputPath, o.Path, fileKind(st.Mode()))
	case !dangling && readOnly(o.Path, st):
		return fmt.Errorf("%w: %s is read-only and is never replaced, not even with --force", ErrReadOnly, o.Path)
	case !f.Force && !o.Replace:
		return fmt.Errorf("%w: %s exists (pass --force to replace it)", ErrExists, o.Path)
	}
	return nil
}

// checkBeside checks a file written beside output out: it is not an input,
// and if it exists it is a regular file (or a link to one), which the
// command replaces.
func (f *Files) checkBeside(out, path string) error {
	for _, in := range f.Inputs {
		if same, _ := SameFile(path, in); same {
			return fmt.Errorf("%w: %s, written beside %s, is the input %s", gguf.ErrSameFile, path, out, in)
		}
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil // absent or a dangling link: the rename replaces it
	case !st.Mode().IsRegular():
		return fmt.Errorf("%w %s: %s, written beside it, is not a regular file (%s)", ErrOutputPath, out, path, fileKind(st.Mode()))
	}
	return nil
}

// existingAncestor returns dir or the nearest of its parents that exists.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Lstat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// readOnly reports whether an existing output must be left alone: no write
// permission bit set (which root's access check would ignore), or no write
// access for this process.
func readOnly(path string, st os.FileInfo) bool {
	return st.Mode().Perm()&0o222 == 0 || writable(path) != nil
}

// ReadOnlyFile says why path, an existing regular file (or a link to
// one), cannot be replaced: "read-only" where the file is, "in a
// directory this process may not write" where the rename that replaces a
// file would be refused; "" where it can be, or is no such file. A command
// that would only update such a file (fit's --cache) can then read it and
// leave it as it is, where an output is refused.
func ReadOnlyFile(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil || !st.Mode().IsRegular():
		return ""
	case readOnly(path, st):
		return "read-only"
	case writable(filepath.Dir(path)) != nil:
		return "in a directory this process may not write"
	}
	return ""
}

// fileKind names a non-regular file type for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// SameFile reports whether a and b name the same existing file (following
// links); a path that does not exist is the same as nothing.
func SameFile(a, b string) (bool, error) { return gguf.SameFile(a, b) }

// Written reports which outputs were (re)written since Check: those that
// exist now and did not, or are another file than Check saw. The others
// are left as they were.
func (f *Files) Written() (written, unwritten []string) {
	for i, o := range f.Outputs {
		now, err := os.Stat(o.Path)
		var before os.FileInfo
		if i < len(f.before) {
			before = f.before[i]
		}
		if err == nil && (before == nil || !os.SameFile(before, now) || !before.ModTime().Equal(now.ModTime())) {
			written = append(written, o.Path)
		} else {
			unwritten = append(unwritten, o.Path)
		}
	}
	return written, unwritten
}

// sweepTemps removes the stale temporary files of writes to path (left by a
// run that was killed) but those in spare and the inputs (a failed commit
// keeps a complete output under its temporary name, and says so: a user may
// then give it as the input of the next run), and fails if another process is
// writing path now. Files of older versions, whose writer cannot be told,
// are reported only. A progress record (TEMP.progress, quantize's) goes
// with its temporary file without a word.
func sweepTemps(path string, log io.Writer, spare, inputs []string) error {
	temps, err := gguf.TempFiles(path)
	if err != nil {
		return nil // the directory check reports what matters
	}
	temps = slices.DeleteFunc(temps, func(t gguf.TempFile) bool {
		return isInput(strings.TrimSuffix(t.Path, ".progress"), inputs)
	})
	if err := checkBusy(path, temps); err != nil {
		return err
	}
	for _, t := range temps {
		switch {
		case t.Own:
		case slices.Contains(spare, t.Path) || slices.Contains(spare, strings.TrimSuffix(t.Path, ".progress")):
		case !t.Live && strings.HasSuffix(t.Path, ".progress"):
			os.Remove(t.Path)
		case t.Live:
			fmt.Fprintf(log, "note: %s (%s) looks like a temporary file of an interrupted older run for %s; delete it if no run is writing that file\n",
				t.Path, HumanBytes(t.Size), path)
		default:
			if err := os.Remove(t.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing the stale temporary file %s: %w", t.Path, err)
			}
			// Its progress record goes before the note: writing the note
			// to a closed pipe ends the process (SIGPIPE), which must not
			// leave the record alone.
			os.Remove(t.Path + ".progress")
			fmt.Fprintf(log, "note: removed %s (%s), a temporary file left by an interrupted run (process %d) for %s\n",
				t.Path, HumanBytes(t.Size), t.PID, path)
		}
	}
	return nil
}

// dirName reports whether path can only name a directory: it ends in a
// separator, "." or "..".
func dirName(path string) bool {
	if os.IsPathSeparator(path[len(path)-1]) {
		return true
	}
	base := filepath.Base(path)
	return base == "." || base == ".."
}

// isInput reports whether path is one of inputs, under any spelling or
// link.
func isInput(path string, inputs []string) bool {
	for _, in := range inputs {
		if same, _ := gguf.SameFile(path, in); same {
			return true
		}
	}
	return false
}

// checkBusy fails if another process is writing path now: one of its
// temporary files is live, names its process and is not this process's
// (a process of another PID namespace, a container's, may have this
// process's id).
func checkBusy(path string, temps []gguf.TempFile) error {
	for _, t := range temps {
		switch {
		case !t.Live || t.PID == 0 || t.Own:
		case t.PID == os.Getpid():
			return fmt.Errorf("%w: %s is being written by another process of id %d, as this one's, in another PID namespace (%s)",
				ErrBusy, path, t.PID, t.Path)
		default:
			return fmt.Errorf("%w: %s is being written by process %d (%s)", ErrBusy, path, t.PID, t.Path)
		}
	}
	return nil
}

// removeOwnTemps removes this process's temporary files of the outputs
// (those it named: another process may have the same id).
func removeOwnTemps(paths []string) {
	for _, p := range paths {
		temps, _ := gguf.TempFiles(p)
		for _, t := range temps {
			if t.Own {
				os.Remove(t.Path)
			}
		}
	}
}

// checkSpace adds up the outputs per file system and compares each sum
// with the space free there for this user.
func checkSpace(outs []Output, freeSpace func(string) (int64, bool)) error {
	type fsNeed struct {
		dir   string
		bytes int64
		paths []string
	}
	var needs []*fsNeed
	byID := map[uint64]*fsNeed{}
	for _, o := range outs {
		if o.Size <= 0 {
			continue
		}
		dir := existingAncestor(filepath.Dir(o.Path))
		id, ok := fileSystemID(dir)
		n := byID[id]
		if !ok || n == nil {
			n = &fsNeed{dir: dir}
			needs = append(needs, n)
			if ok {
				byID[id] = n
			}
		}
		n.bytes += o.Size
		n.paths = append(n.paths, o.Path)
	}
	for _, n := range needs {
		free, ok := freeSpace(n.dir)
		if !ok || n.bytes <= free {
			continue
		}
		what := n.paths[0]
		if len(n.paths) > 1 {
			what = fmt.Sprintf("%d files (%s ...)", len(n.paths), n.paths[0])
		}
		return fmt.Errorf("%w for %s: needs %d bytes (%s), %s has %d bytes (%s) free",
			ErrNoSpace, what, n.bytes, HumanBytes(n.bytes), n.dir, free, HumanBytes(free))
	}
	return nil
}

// HumanBytes formats n in binary units (1.5 GiB).
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "KMGTPE"
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.2f %ciB", v, suffix[i])
}
