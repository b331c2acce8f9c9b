package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gquant/gquant/internal/cli"
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
		w := q.fs.Output()
		fmt.Fprintln(w, "usage: gquant plan [flags] IN.gguf [OUT.gguf] TYPE [THREADS]")
		fmt.Fprintln(w, "\nTakes the arguments of gquant quantize and prints what it would write, without")
		fmt.Fprintln(w, "reading any tensor data: each tensor's type and the rule that chose it, the exact")
		fmt.Fprintln(w, "size of each output file, what each rule matched, and with --place the bytes each")
		fmt.Fprintln(w, "device holds (checked against --budget). Example:")
		fmt.Fprintln(w, "  gquant plan --recipe r.txt --place 'exps=CPU' --place '.*=GPU' --budget CPU=240GiB,GPU=23.5GiB \\")
		fmt.Fprintln(w, "      --imatrix imat.dat model-bf16.gguf out.gguf IQ2_K_R4")
		fmt.Fprintln(w, "Exit status 1 when a device is over its budget, and with --strict when the plan has")
		fmt.Fprintln(w, "any warning.")
		fmt.Fprintln(w, "\nflags:")
		q.fs.PrintDefaults()
		fmt.Fprintf(w, "\nfile types: %s\n", strings.Join(recipes.FileTypeNames(), " "))
	}
	const program = "gquant plan"
	if err := negativeThreads(args); err != nil {
		return cli.UsageError(program, q.fs, stderr, err)
	}
	if status, done := cli.ParseFlags(program, q.fs, args, stdout, stderr); done {
		return status
	}
	q.dryRun = true
	return q.exitCode(program, q.run(stdout, stderr), stderr)
}
