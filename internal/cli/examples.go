package cli

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Example is one command line a command's help ends with, and what it does.
type Example struct {
	About string // one line: what the command does, for whom
	Line  string // the command line, as typed
}

// PrintExamples writes the examples section every command's help ends
// with. Command lines start with "$ " so that nothing reading the help
// (completion's parser of usage and flag lines) takes an example's
// arguments for subcommands or flags.
func PrintExamples(w io.Writer, examples ...Example) {
	fmt.Fprintln(w, "\nexamples:")
	for i, e := range examples {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  # %s\n  $ %s\n", e.About, e.Line)
	}
}

// Names lists the registered commands, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Help runs command name with args and --help and returns the exit status
// and what it printed on stdout and on stderr.
func (s *Set) Help(name string, args ...string) (status int, stdout, stderr string) {
	c := s.commands[name]
	if c == nil {
		return 2, "", ""
	}
	var out, errOut bytes.Buffer
	status = c.Run(append(append([]string(nil), args...), "--help"), &out, &errOut)
	return status, out.String(), errOut.String()
}

// CheckExamples is for tests: every command's help (and every
// subcommand's that lists flags) must end with two or three examples,
// each a command line of this program whose long flags that command's
// help lists. It returns one message per problem.
func (s *Set) CheckExamples() []string {
	var problems []string
	helps := map[string]string{}
	for _, c := range s.completions() {
		parts := strings.SplitN(c.Name, " ", 2)
		cmd := s.commands[parts[0]]
		args := parts[1:]
		var buf bytes.Buffer
		cmd.Run(append(append([]string(nil), args...), "--help"), &buf, &buf)
		helps[c.Name] = buf.String()
	}
	for name, help := range helps {
		i := strings.LastIndex(help, "\nexamples:\n")
		if i < 0 {
			problems = append(problems, name+": help has no examples section")
			continue
		}
		var lines []string
		for _, l := range strings.Split(help[i+len("\nexamples:\n"):], "\n") {
			switch t := strings.TrimSpace(l); {
			case strings.HasPrefix(t, "$ "):
				lines = append(lines, t[2:])
			case t != "" && !strings.HasPrefix(t, "# "):
				problems = append(problems, fmt.Sprintf("%s: examples section has a stray line %q", name, l))
			}
		}
		if len(lines) < 2 || len(lines) > 3 {
			problems = append(problems, fmt.Sprintf("%s: %d examples, want 2 or 3", name, len(lines)))
		}
		for _, l := range lines {
			problems = append(problems, s.checkExample(name, l, helps)...)
		}
	}
	sort.Strings(problems)
	return problems
}

// checkExample checks one example line of command name's help: it runs
// this program, and each --flag is one its command's help lists.
func (s *Set) checkExample(name, line string, helps map[string]string) []string {
	words := strings.Fields(line)
	start := -1
	for i, w := range words {
		if strings.TrimPrefix(w, "<(") == s.Program {
			start = i
			break
		}
	}
	if start >= 0 && start+1 < len(words) && IsVersionFlag(words[start+1:start+2]) {
		return nil
	}
	if start < 0 || start+1 >= len(words) || s.commands[words[start+1]] == nil {
		return []string{fmt.Sprintf("%s: example %q does not run a %s command", name, line, s.Program)}
	}
	cmd := words[start+1]
	if start+2 < len(words) && helps[cmd+" "+words[start+2]] != "" {
		cmd += " " + words[start+2]
	}
	var problems []string
	for _, w := range words[start+1:] {
		if !strings.HasPrefix(w, "--") || w == "--" {
			continue
		}
		flag, _, _ := strings.Cut(w, "=")
		if !helpListsFlag(helps[cmd], flag) && !(cmd == "verify" && helpListsFlag(helps["quantize"], flag)) {
			problems = append(problems, fmt.Sprintf("%s: example %q: %s %s has no flag %s", name, line, s.Program, cmd, flag))
		}
	}
	return problems
}

// helpListsFlag reports whether a help text has a flag line for flag.
func helpListsFlag(help, flag string) bool {
	for _, l := range strings.Split(help, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil && "--"+m[2] == flag {
			return true
		}
	}
	return false
}

// ExampleRun is one example line of a command's help as the program
// receives it.
type ExampleRun struct {
	Help string   // the command whose help shows it ("rows quantize")
	Line string   // the line as the help prints it
	Args []string // the words after the program's name
}

// ExampleRuns returns every example line of every help, read as a shell
// reads it: quotes removed, up to the first operator (|, >, <, ;, &), a
// process substitution <(...) as the command inside it. Lines that run
// no command of this program are left out (CheckExamples reports them).
// Tests run the Args to see that each example parses with its command's
// own flag set and arguments.
func (s *Set) ExampleRuns() []ExampleRun {
	var runs []ExampleRun
	for _, c := range s.completions() {
		parts := strings.SplitN(c.Name, " ", 2)
		var buf bytes.Buffer
		s.commands[parts[0]].Run(append(parts[1:len(parts):len(parts)], "--help"), &buf, &buf)
		help := buf.String()
		i := strings.LastIndex(help, "\nexamples:\n")
		if i < 0 {
			continue
		}
		for _, l := range strings.Split(help[i+len("\nexamples:\n"):], "\n") {
			line, ok := strings.CutPrefix(strings.TrimSpace(l), "$ ")
			if !ok {
				continue
			}
			words := shellWords(line)
			for j, w := range words {
				if w == s.Program {
					runs = append(runs, ExampleRun{Help: c.Name, Line: line, Args: words[j+1:]})
					break
				}
			}
		}
	}
	return runs
}

// shellWords splits a command line into words as a POSIX shell does for
// the simple cases of help examples: single and double quotes and
// backslashes, stopping at an unquoted operator. "<(" opens a process
// substitution, whose command is read in its place up to ")".
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			end()
		case c == '<' && i+1 < len(line) && line[i+1] == '(' && !inWord:
			words = words[:0]
			line = strings.TrimSuffix(line, ")")
			i++
		case strings.IndexByte("|><;&", c) >= 0:
			end()
			return words
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			w.WriteByte(line[i])
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	end()
	return words
}
