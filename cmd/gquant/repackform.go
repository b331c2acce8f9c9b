package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/repack"
)

// runRepackForm handles llama-quantize's `--repack [--repack-pattern R,...]
// IN OUT TYPE`: TYPE is ignored (the file type follows from the input's, as
// in the reference) and nothing is requantized. It is `gquant repack` under
// the reference's spelling.
func runRepackForm(in *gguf.Model, cfg pipeline.Config, patterns []string, dryRun bool, files *cli.Files, stdout, stderr io.Writer) error {
	if err := pipeline.CheckOverrides(cfg.Overrides); err != nil {
		return err
	}
	plan, err := repack.NewPlan(in, repack.Options{Patterns: patterns, Lenient: true, Merge: !cfg.KeepSplit, Split: cfg.Split, Metadata: pipeline.ConfigKeys(cfg)})
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
		refusal := previewRepackOutputs(in, plan, out, files, stderr)
		plan.Describe(stdout)
		sizes, err := plan.FileSizes(in, out)
		if err != nil {
			return err
		}
		for i, path := range plan.Outputs(out) {
			fmt.Fprintf(stdout, "file %s: %d bytes (%s)\n", path, sizes[i], humanBytes(sizes[i]))
		}
		return refusal
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	stop, err := checkRepackOutputs(in, plan, out, files, "gquant quantize", stderr)
	if err != nil {
		return err
	}
	paths, err := repack.Run(in, plan, out)
	if status, interrupted := stop.Finish(); interrupted {
		return exitStatus(status)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "repacked %d of %d tensors; general.file_type %s -> %s; wrote %s\n",
		plan.Converted, len(plan.Tensors), plan.FileType.From, plan.FileType.To, strings.Join(paths, ", "))
	return nil
}

// repackPatterns are the --repack-pattern regexes, each value split at commas
// as llama-quantize splits it.
func (q *quantizeFlags) repackPatterns() []string {
	var out []string
	for _, p := range q.repackPattern {
		out = append(out, strings.Split(p, ",")...)
	}
	return out
}

// checkRepackOutputs adds a repack's outputs with their exact sizes to
// files, checks them and starts catching interrupts; the plan's Context is
// the interrupt's.
func checkRepackOutputs(in *gguf.Model, plan *repack.Plan, out string, files *cli.Files, program string, stderr io.Writer) (*cli.Interrupt, error) {
	if err := addRepackOutputs(in, plan, out, files); err != nil {
		return nil, err
	}
	if err := files.Check(stderr); err != nil {
		return nil, err
	}
	stop := files.CatchInterrupts(program, stderr, cli.DefaultGrace)
	plan.Options.Context = stop.Context()
	plan.Options.Overwrite = files.Force
	// A repack writes no sidecar (its bytes are no quantizer's output): the
	// one an earlier run left beside an output would describe another
	// file, so the commit removes it before the output is put in place.
	plan.Options.Beside = func(path string) []string { return []string{pipeline.SidecarPath(path)} }
	return stop, nil
}

// addRepackOutputs adds the files a repack writes, with their sizes and
// the sidecar beside each (an old one there is removed).
func addRepackOutputs(in *gguf.Model, plan *repack.Plan, out string, files *cli.Files) error {
	sizes, err := plan.FileSizes(in, out)
	if err != nil {
		return err
	}
	for i, path := range plan.Outputs(out) {
		files.Write(path, sizes[i], pipeline.SidecarPath(path))
	}
	return nil
}

// previewRepackOutputs is checkRepackOutputs for a dry run: the checks
// without their effects (cli.Files.Preview). It notes the outputs that
// exist and returns what the run would stop on, for after the plan.
func previewRepackOutputs(in *gguf.Model, plan *repack.Plan, out string, files *cli.Files, stderr io.Writer) error {
	if err := addRepackOutputs(in, plan, out, files); err != nil {
		return err
	}
	if refusal := files.Preview(stderr); refusal != nil {
		return fmt.Errorf("the run would stop before any work: %w", refusal)
	}
	return nil
}
