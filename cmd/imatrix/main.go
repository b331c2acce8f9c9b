// Command imatrix inspects, converts, merges, checks and charts importance
// matrices (the legacy .dat files of llama-imatrix and the GGUF imatrix
// format), so that a file made by someone else can be checked against a
// model before hours of quantizing. Each subcommand lives in its own file and
// registers itself in init; this file only dispatches.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns the process exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("imatrix: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: imatrix COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'imatrix COMMAND --help' for a command's options.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c := commands[args[0]]
	if c == nil {
		fmt.Fprintf(stderr, "imatrix: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

// usageError marks errors in the command line (exit status 2).
type usageError struct{ error }

// exitFailed is returned by a command that ran but found the input wanting
// (check): exit status 1 without a further message.
var exitFailed = errors.New("check failed")

// finish turns a command's error into its exit status, printing it.
func finish(name string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, exitFailed) {
		return 1
	}
	fmt.Fprintf(stderr, "imatrix %s: %v\n", name, err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
