// Command gquant quantizes, plans, repacks, splits, merges and inspects GGUF
// model files. Each subcommand lives in its own file and registers itself in
// init; this file only dispatches.
package main

import (
	"io"
	"os"

	"github.com/gquant/gquant/internal/cli"
)

var commands = cli.Set{Program: "gquant"}

// command and register keep the subcommand files short.
type command = cli.Command

func register(c *command) { commands.Register(c) }

func init() {
	register(cli.VersionCommand("gquant"))
	register(cli.CompletionCommand(&commands))
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if cli.IsVersionFlag(args) {
		args = []string{"version"}
	}
	return commands.Run(args, stdout, stderr)
}
