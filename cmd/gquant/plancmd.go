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
		JSON:    true,
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
		fmt.Fprintln(w, "device holds (checked against --budget). Exit status 1 when a device is over its")
		fmt.Fprintln(w, "budget, and with --strict when the plan has any warning.")
		fmt.Fprintln(w, "\nflags:")
		q.fs.PrintDefaults()
		fmt.Fprintf(w, "\nfile types: %s (gquant quantize --help lists their bits per weight)\n", strings.Join(recipes.FileTypeNames(), " "))
		cli.PrintExamples(w,
			cli.Example{About: "every tensor's type and the exact file size of a run, before the run",
				Line: "gquant plan --imatrix imatrix.dat model-bf16.gguf out.gguf IQ4_KS"},
			cli.Example{About: "will a recipe fit 240 GiB of RAM and a 24 GiB GPU with experts on the CPU?",
				Line: "gquant plan --recipe recipe.txt --place exps=CPU --place '.*=GPU' --budget CPU=240GiB,GPU=23.5GiB model-bf16.gguf out.gguf IQ2_K_R4"},
			cli.Example{About: "in CI: fail when a rule of the recipe matches nothing or more than meant",
				Line: "gquant plan --strict --summary --recipe recipe.txt model-bf16.gguf out.gguf Q4_K_M"},
		)
	}
	const program = "gquant plan"
	// A gquant command of its own: flags after IN draw no warning.
	if _, status, done := q.parse(program, args, stdout, stderr); done {
		return status
	}
	q.dryRun = true
	return q.exitCode(program, q.run(stdout, stderr), stderr)
}
