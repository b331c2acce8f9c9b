package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/recipes"
)

func init() {
	register(&command{
		Name:    "plan",
		Summary: "show what a quantize run will write (sizes to the byte, rules, devices, budgets) from headers alone",
		Run:     runPlan,
	})
}

// runPlan is `gquant quantize --dry-run`: the same arguments, nothing
// written, and an exit status of 1 when a budget is exceeded.
func runPlan(args []string, stdout, stderr io.Writer) int {
	q := newQuantizeFlags(stderr)
	_ = q.fs.MarkHidden("dry-run")
	_ = q.fs.MarkHidden("force") // plan writes nothing
	q.fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gquant plan [flags] IN.gguf [OUT.gguf] TYPE [THREADS]")
		fmt.Fprintln(stderr, "\nTakes the arguments of gquant quantize and prints what it would write, without")
		fmt.Fprintln(stderr, "reading any tensor data: each tensor's type and the rule that chose it, the exact")
		fmt.Fprintln(stderr, "size of each output file, what each rule matched, and with --place the bytes each")
		fmt.Fprintln(stderr, "device holds (checked against --budget). Example:")
		fmt.Fprintln(stderr, "  gquant plan --recipe r.txt --place 'exps=CPU' --place '.*=GPU' --budget CPU=240GiB,GPU=23.5GiB \\")
		fmt.Fprintln(stderr, "      --imatrix imat.dat model-bf16.gguf out.gguf IQ2_K_R4")
		fmt.Fprintln(stderr, "Exit status 1 when a device is over its budget, and with --strict when the plan has")
		fmt.Fprintln(stderr, "any warning.")
		fmt.Fprintln(stderr, "\nflags:")
		q.fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nfile types: %s\n", strings.Join(recipes.FileTypeNames(), " "))
	}
	if err := q.fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	q.dryRun = true
	return exitCode("gquant plan", q.run(stdout, stderr), stderr)
}
