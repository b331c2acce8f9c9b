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

	"github.com/gquant/gquant/internal/cli"
)

var commands = cli.Set{Program: "imatrix"}

// command and register keep the subcommand files short.
type command = cli.Command

func register(c *command) { commands.Register(c) }

func init() {
	register(cli.VersionCommand("imatrix"))
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

// usageError marks errors in the command line (exit status 2).
type usageError struct{ error }

// errCheckFailed is returned by a command that ran but found the input wanting
// (check): exit status 1 without a further message.
var errCheckFailed = errors.New("check failed")

// exitStatus is returned by a command stopped by a signal: the message is
// printed already, the status is 128 + the signal's number.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// finish turns a command's error into its exit status, printing it.
func finish(name string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errCheckFailed) {
		return 1
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	fmt.Fprintf(stderr, "imatrix %s: %v\n", name, err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
