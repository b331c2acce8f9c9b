package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/internal/modelgen"
)

func init() {
	register(&command{
		Name:    "testmodel",
		Summary: "write a synthetic model (real tensor names and shapes) for tests and benchmarks",
		Run:     runTestModel,
	})
}

func runTestModel(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("testmodel", pflag.ContinueOnError)
	preset := fs.String("preset", "tiny-deepseek2", "model: deepseek-r1, kimi-k2, qwen3-235b, tiny-deepseek2, tiny-llama")
	headerOnly := fs.Bool("header-only", false, "leave tensor data as holes in a sparse file (a 1 TB model takes a few MB)")
	seed := fs.Uint64("seed", 1, "seed for the weights")
	force := fs.Bool("force", false, "replace OUT if it exists (never a read-only file)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: gquant testmodel [--preset NAME] [--header-only] OUT.gguf")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		cli.PrintExamples(w,
			cli.Example{About: "DeepSeek-R1's tensors and metadata with holes for data: plan and fit a 1.3 TB model in a few MB",
				Line: "gquant testmodel --preset deepseek-r1 --header-only /tmp/r1.gguf"},
			cli.Example{About: "a small model with real data, for a quick run",
				Line: "gquant testmodel --preset tiny-llama /tmp/tiny-llama.gguf"},
		)
	}
	const program = "gquant testmodel"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 1 {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want OUT.gguf, got %d argument(s)", fs.NArg()))
	}
	m, err := modelgen.Preset(*preset)
	if err != nil {
		return cli.UsageError(program, fs, stderr, err)
	}
	size, err := gguf.FileSize(m.Metadata, m.Tensors)
	if err != nil {
		fmt.Fprintln(stderr, "gquant testmodel:", err)
		return 1
	}
	if *headerOnly {
		size = -1 // a sparse file: its data takes no space
	}
	files := &cli.Files{Force: *force, MakeDirs: true}
	files.Write(fs.Arg(0), size)
	if err = files.Check(stderr); err == nil {
		err = files.MakeOutputDirs()
	}
	if err != nil {
		fmt.Fprintln(stderr, "gquant testmodel:", err)
		return 1
	}
	stop := files.CatchInterrupts("gquant testmodel", stderr, cli.AtOnce)
	err = modelgen.WriteFile(fs.Arg(0), m, modelgen.WriteOptions{HeaderOnly: *headerOnly, Seed: *seed, Replace: *force})
	if status, interrupted := stop.Finish(); interrupted {
		return status
	}
	if err != nil {
		fmt.Fprintln(stderr, "gquant testmodel:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %d tensors\n", fs.Arg(0), *preset, len(m.Tensors))
	return 0
}
