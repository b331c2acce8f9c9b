// Command gquant quantizes, plans, repacks, splits, merges and inspects GGUF
// model files. Each subcommand lives in its own file and registers itself in
// init; this file only dispatches.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one gquant subcommand. run gets the arguments after the
// subcommand's name and returns the process exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("gquant: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gquant COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'gquant COMMAND --help' for a command's options.")
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
		fmt.Fprintf(stderr, "gquant: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}
