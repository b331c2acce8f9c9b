// Package cli is the subcommand dispatcher the gquant and imatrix commands
// share: each subcommand registers itself, and Run picks one by name.
package cli

import (
	"fmt"
	"io"
	"sort"
)

// Command is one subcommand. Run gets the arguments after the subcommand's
// name and returns the process exit status.
type Command struct {
	Name    string
	Summary string
	Run     func(args []string, stdout, stderr io.Writer) int
	// JSON marks a command with a --json flag: run with it, a failure
	// before the command printed its document prints an ErrorReport.
	JSON bool
}

// Set is a program's subcommands.
type Set struct {
	Program  string
	commands map[string]*Command
}

// Register adds c; registering a name twice is a programming error.
func (s *Set) Register(c *Command) {
	if s.commands == nil {
		s.commands = map[string]*Command{}
	}
	if _, dup := s.commands[c.Name]; dup {
		panic(s.Program + ": command registered twice: " + c.Name)
	}
	s.commands[c.Name] = c
}

// Usage lists the subcommands.
func (s *Set) Usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s COMMAND [ARGS]\n\ncommands:\n", s.Program)
	var names []string
	width := 0
	for n := range s.commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, s.commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's options.\n", s.Program)
}

// Run dispatches args[0] and returns the exit status: 2 for a missing or
// unknown command. The command writes through escaping writers (see
// Escape): no control character from a file reaches the terminal.
//
// A command that succeeds although part of its standard output could not
// be written (a full disk, /dev/full, a closed pipe with SIGPIPE caught)
// exits 1 with the error on stderr: a report or manifest cut short must
// not pass for a whole one. A command that failed keeps its status; it
// has said why, often because of that same write error.
//
// A command with JSON set, run with --json, that fails without having
// written anything on stdout gets an ErrorReport there (see errdoc.go).
func (s *Set) Run(args []string, stdout, stderr io.Writer) int {
	var tap *errorTap
	if len(args) > 0 {
		if c := s.commands[args[0]]; c != nil && c.JSON && wantsJSON(args[1:]) {
			tap = &errorTap{w: stderr, prefix: s.Program + " " + c.Name}
			stderr = tap
		}
	}
	out, errOut := escaping(stdout), escaping(stderr)
	defer errOut.flush()
	status := s.run(args, out, errOut)
	out.flush()
	if tap != nil && status != 0 && out.n == 0 && out.err == nil {
		errOut.flush()
		WriteJSON(out, tap.report(status))
		out.flush()
	}
	if out.err != nil && status == 0 {
		name := s.Program
		if len(args) > 0 && s.commands[args[0]] != nil {
			name += " " + args[0]
		}
		fmt.Fprintf(errOut, "%s: writing the standard output: %v\n", name, out.err)
		return 1
	}
	return status
}

func (s *Set) run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		s.Usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			// "help COMMAND [SUB]" is "COMMAND [SUB] --help".
			if c := s.commands[args[1]]; c != nil {
				return c.Run(append(append([]string(nil), args[2:]...), "--help"), stdout, stderr)
			}
			return s.unknown(args[1], stderr)
		}
		s.Usage(stdout)
		return 0
	}
	c := s.commands[args[0]]
	if c == nil {
		return s.unknown(args[0], stderr)
	}
	return c.Run(args[1:], stdout, stderr)
}

// unknown reports an unknown command, with the closest one, and returns 2.
func (s *Set) unknown(name string, stderr io.Writer) int {
	msg := fmt.Sprintf("%s: unknown command %q", s.Program, name)
	if c := s.SuggestCommand(name); c != "" {
		msg += fmt.Sprintf("; did you mean %s?", c)
	}
	fmt.Fprintln(stderr, msg)
	fmt.Fprintf(stderr, "Run '%s help' for the list of commands.\n", s.Program)
	return 2
}
