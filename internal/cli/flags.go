package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Every command parses its flags with ParseFlags, so that all of them
// answer the same way: --help (or -h) prints the command's usage on stdout
// and exits 0; a flag that does not parse prints, on stderr, what is wrong,
// the closest flag the command has ("did you mean --imatrix?"), the
// command's usage line and how to get the full help, and exits 2. A
// command's fs.Usage writes to fs.Output(), which ParseFlags points at the
// right stream.

// ParseFlags parses args with fs (made with pflag.ContinueOnError).
// program names the command in messages ("gquant quantize"). done is true
// when the command must stop with status: 0 after --help, 2 after an error.
func ParseFlags(program string, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (status int, done bool) {
	fs.SetOutput(stdout) // pflag prints the usage itself for --help
	err := fs.Parse(args)
	fs.SetOutput(stderr) // a later fs.Usage() is about an error
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, pflag.ErrHelp):
		return 0, true
	}
	return UsageError(program, fs, stderr, flagError(fs, err)), true
}

// UsageError prints err as a usage error of program (the message, the
// usage line of fs.Usage, and where the full help is) on w and returns the
// exit status of usage errors, 2. Commands call it for wrong positional
// arguments too.
func UsageError(program string, fs *pflag.FlagSet, w io.Writer, err error) int {
	fmt.Fprintf(w, "%s: %v\n", program, err)
	for _, line := range usageLines(fs) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "Run '%s --help' for every flag.\n", program)
	return 2
}

// usageLines returns the first paragraph of fs.Usage's text (the usage
// lines), or nil.
func usageLines(fs *pflag.FlagSet) []string {
	if fs == nil || fs.Usage == nil {
		return nil
	}
	var buf bytes.Buffer
	out := fs.Output()
	fs.SetOutput(&buf)
	fs.Usage()
	fs.SetOutput(out)
	var lines []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.TrimSpace(l) == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// flagError rewrites pflag's errors as messages a user can act on.
func flagError(fs *pflag.FlagSet, err error) error {
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var noValue *pflag.ValueRequiredError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if short := notExist.GetSpecifiedShortnames(); short != "" {
			if _, numErr := strconv.ParseFloat("-"+short, 64); numErr == nil {
				return fmt.Errorf("-%s: a negative number is not an argument here (and not a flag)", short)
			}
			msg := fmt.Sprintf("unknown flag -%s", name)
			if len(short) > 1 {
				msg = fmt.Sprintf("unknown flag -%s in -%s", name, short)
			}
			if s := suggest(fs, short); s != "" {
				msg += fmt.Sprintf("; did you mean --%s? (long flags take two dashes)", s)
			}
			return errors.New(msg)
		}
		msg := fmt.Sprintf("unknown flag --%s", name)
		if s := suggest(fs, name); s != "" {
			msg += fmt.Sprintf("; did you mean --%s?", s)
		}
		return errors.New(msg)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		var u unsupported
		if errors.As(err, &u) {
			return fmt.Errorf("--%s: %s", f.Name, u.message)
		}
		return fmt.Errorf("--%s %q: %s", f.Name, invalid.GetValue(), valueProblem(f, errors.Unwrap(err)))
	case errors.As(err, &noValue):
		f := noValue.GetFlag()
		if f != nil {
			_, usage := pflag.UnquoteUsage(f)
			return fmt.Errorf("--%s needs a value (%s)", f.Name, usage)
		}
	}
	return err
}

// valueProblem says why a flag's value did not parse.
func valueProblem(f *pflag.Flag, cause error) string {
	var ne *strconv.NumError
	if errors.As(cause, &ne) {
		what := "a number"
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			what = "a whole number"
		case "bool":
			what = "true or false"
		}
		if errors.Is(ne.Err, strconv.ErrRange) {
			return "out of range"
		}
		return "not " + what
	}
	if cause == nil {
		return "invalid value"
	}
	return cause.Error()
}

// suggest returns the flag of fs closest to name, or "" when none is
// close: a flag that name is a prefix of, or one a few edits away.
func suggest(fs *pflag.FlagSet, name string) string {
	name = strings.TrimLeft(name, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	if name == "" {
		return ""
	}
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(strings.ToLower(name), f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = 1
		}
		if d <= max(2, len(name)/4) {
			cands = append(cands, cand{f.Name, d})
		}
	})
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	return cands[0].name
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours (the
// typical typo, imatirx) count one each.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unsupported is the error of a flag registered with Unsupported.
type unsupported struct{ message string }

func (u unsupported) Error() string { return u.message }

// unsupportedValue is the pflag.Value of an Unsupported flag: any use of
// it fails with its message.
type unsupportedValue struct {
	message  string
	takesArg bool
}

func (v *unsupportedValue) String() string { return "" }
func (v *unsupportedValue) Set(string) error {
	return unsupported{v.message}
}
func (v *unsupportedValue) Type() string {
	if v.takesArg {
		return "string"
	}
	return "bool"
}

// Unsupported registers a hidden flag of another tool (llama-quantize,
// mainline llama.cpp) that the command does not take, so that using it
// fails with message (what to do instead) rather than "unknown flag".
// takesArg tells whether the other tool's flag takes a value.
func Unsupported(fs *pflag.FlagSet, name string, takesArg bool, message string) {
	f := fs.VarPF(&unsupportedValue{message: message, takesArg: takesArg}, name, "", message)
	if !takesArg {
		f.NoOptDefVal = "true"
	}
	f.Hidden = true
}

// Underscores makes fs read "_" in flag names as "-" (--split_max_size is
// --split-max-size), as llama-gguf-split and llama-gguf-hash read theirs.
func Underscores(fs *pflag.FlagSet) {
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
}

// Ignored registers a hidden boolean flag that is accepted and does
// nothing, for flags of another tool that only name what this command
// always does (llama-gguf-split --split).
func Ignored(fs *pflag.FlagSet, name, why string) {
	fs.Bool(name, false, why)
	_ = fs.MarkHidden(name)
}

// SuggestCommand returns the registered command closest to name, or "".
func (s *Set) SuggestCommand(name string) string {
	best, bestDist := "", 3
	for n := range s.commands {
		d := editDistance(name, n)
		if strings.HasPrefix(n, name) && len(name) >= 2 {
			d = 1
		}
		if d < bestDist || d == bestDist && n < best {
			best, bestDist = n, d
		}
	}
	return best
}
