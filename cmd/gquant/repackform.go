package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/repack"
)

// runRepackForm handles llama-quantize's `--repack [--repack-pattern R,...]
// IN OUT TYPE`: TYPE is ignored (the file type follows from the input's, as
// in the reference) and nothing is requantized. It is `gquant repack` under
// the reference's spelling.
func runRepackForm(in *gguf.Model, cfg pipeline.Config, sel recipes.Options, dryRun bool, stdout, stderr io.Writer) error {
	plan, err := repack.NewPlan(in, repack.Options{Patterns: sel.RepackPatterns, Lenient: true, Merge: !cfg.KeepSplit, Split: cfg.Split})
	if errors.Is(err, repack.ErrNothingToDo) {
		fmt.Fprintln(stdout, "--repack: nothing to do (no tensor can be repacked)")
		return nil
	}
	if err != nil {
		return err
	}
	out := cfg.Output
	if cfg.KeepSplit {
		// The reference names its outputs as shards even for one file.
		if len(in.Shards) == 1 {
			out = gguf.ShardPath(strings.TrimSuffix(out, ".gguf"), 0, 1)
		}
	}
	if err := plan.CheckOutputs(in, out); err != nil {
		return err
	}
	if dryRun {
		plan.Describe(stdout)
		sizes, err := plan.FileSizes(in, out)
		if err != nil {
			return err
		}
		for i, path := range plan.Outputs(out) {
			fmt.Fprintf(stdout, "file %s: %d bytes (%s)\n", path, sizes[i], humanBytes(sizes[i]))
		}
		return nil
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	paths, err := repack.Run(in, plan, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "repacked %d of %d tensors; general.file_type %s -> %s; wrote %s\n",
		plan.Converted, len(plan.Tensors), plan.FileType.From, plan.FileType.To, strings.Join(paths, ", "))
	return nil
}
