package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/splitter"
)

func init() {
	register(&command{
		Name:    "split",
		Summary: "cut a model into shards (PREFIX-0000K-of-0000N.gguf), like llama-gguf-split --split",
		JSON:    true,
		Run:     runSplit,
	})
}

func runSplit(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("split", pflag.ContinueOnError)
	cli.Underscores(fs) // as llama-gguf-split
	var sf splitFlags
	sf.register(fs)
	dryRun := fs.Bool("dry-run", false, "print the plan (shards, tensors and bytes each) and write nothing")
	overwrite := fs.Bool("force", false, "replace existing shard files (never the input, never a read-only file)")
	asJSON := fs.Bool("json", false, "print the plan (with --dry-run) or what was written as one JSON document (schema gquant.split/1)")
	cli.Ignored(fs, "split", "llama-gguf-split's --split: splitting is what this command does")
	cli.Unsupported(fs, "merge", false, "use 'gquant merge SHARD OUT' (llama-gguf-split --merge)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: gquant split [--split-max-size N | --split-max-tensors N] [--no-tensor-first-split] [--dry-run] IN PREFIX")
		fmt.Fprintln(w, "\nIN may be one file or any shard of a set (it is re-split). Shards are written as")
		fmt.Fprintln(w, "PREFIX-00001-of-0000N.gguf ...; with both limits a shard ends at whichever comes first.")
		fmt.Fprintln(w, "llama-gguf-split's --split is accepted and does nothing.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		cli.PrintExamples(w,
			cli.Example{About: "shards of at most 50 GB of tensor data (llama-gguf-split --split-max-size 50G)",
				Line: "gquant split --split-max-size 50G model-Q4_K_M.gguf model-Q4_K_M"},
			cli.Example{About: "the shards and their tensors, without writing",
				Line: "gquant split --dry-run --split-max-tensors 256 model-Q4_K_M.gguf model-Q4_K_M"},
		)
	}
	const program = "gquant split"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 2 {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want IN and PREFIX, got %d argument(s)", fs.NArg()))
	}
	lp, err := sf.limits()
	if err != nil {
		return cli.UsageError(program, fs, stderr, err)
	}
	var limits splitter.Limits // no option: the default tensor count
	if lp != nil {
		limits = *lp
	}
	in, prefix := fs.Arg(0), fs.Arg(1)
	if base := filepath.Base(prefix); prefix == "" || strings.HasSuffix(prefix, string(filepath.Separator)) || base == "." || base == ".." {
		// The shards would be named -00001-of-0000N.gguf, hidden names
		// nobody asked for.
		return cli.UsageError(program, fs, stderr, fmt.Errorf("PREFIX %q names no file: give the shards' name, e.g. %s", prefix, filepath.Join(prefix, "model")))
	}

	m, err := gguf.Open(in)
	if err != nil {
		fmt.Fprintln(stderr, "gquant split:", err)
		return 1
	}
	defer m.Close()
	infos := make([]gguf.TensorInfo, len(m.Tensors))
	for i, t := range m.Tensors {
		infos[i] = t.TensorInfo
	}
	plan, err := splitter.PlanShards(m.Metadata, infos, limits)
	if err != nil {
		fmt.Fprintln(stderr, "gquant split:", err)
		return 1
	}
	files := &cli.Files{Force: *overwrite, MakeDirs: true}
	files.Read(modelPaths(m)...)
	for i, path := range plan.Paths(prefix) {
		files.Write(path, plan.Shards[i].FileSize, pipeline.SidecarPath(path))
	}
	if *dryRun {
		return previewSplit(program, files, *asJSON, newSplitDoc(in, prefix, plan, false), stdout, stderr, func() {
			printPlan(stdout, in, prefix, plan)
			for _, w := range plan.Warnings {
				fmt.Fprintln(stderr, "gquant split: warning:", w)
			}
		})
	}
	if !*asJSON {
		printPlan(stdout, in, prefix, plan)
		for _, w := range plan.Warnings {
			fmt.Fprintln(stderr, "gquant split: warning:", w)
		}
	}
	if err := files.Check(stderr); err != nil {
		fmt.Fprintln(stderr, "gquant split:", err)
		return 1
	}
	carry := &sidecarCarry{in: m, earlier: sidecarsOf(plan.Paths(prefix))}
	stop := files.CatchInterrupts("gquant split", stderr, cli.DefaultGrace)
	var log io.Writer = stdout
	if *asJSON {
		log = nil
	}
	_, err = splitter.Split(m, prefix, limits, &splitter.Options{Overwrite: *overwrite, Log: log, Context: stop.Context(), Beside: sidecarOf, Prepare: carry.prepare})
	if status, interrupted := stop.Finish(); interrupted {
		return status
	}
	if err == nil {
		err = carry.done(stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "gquant split:", err)
		return 1
	}
	if *asJSON {
		return jsonStatus(program, stdout, stderr, newSplitDoc(in, prefix, plan, true))
	}
	fmt.Fprintf(stdout, "wrote %d shards with %d tensors\n", len(plan.Shards), len(m.Tensors))
	return 0
}

// sidecarCarry gives a split's or merge's outputs the sidecars of the
// input's tensors (pipeline.PrepareCarry), each written as soon as its file
// is in place (splitter.Options.Prepare). An input without sidecars (a
// bf16 model, llama-quantize's output) gives none, silently, unless an
// earlier run's sidecar beside an output had to go (see done).
type sidecarCarry struct {
	in      *gguf.Model
	earlier []string // the outputs' sidecars before the run (sidecarsOf)
	carry   *pipeline.Carry
}

// prepare is splitter.Options.Prepare.
func (c *sidecarCarry) prepare(staged, final []string) (func(int) error, error) {
	carry, err := pipeline.PrepareCarry(c.in, staged, final)
	if err != nil {
		return nil, fmt.Errorf("the outputs' sidecars: %w", err)
	}
	c.carry = carry
	return carry.Place, nil
}

// done says, once the outputs are in place, which earlier sidecars went
// (one of earlier, which the commit removed with the file it described,
// or one Place removed) when the new files get none, and returns the
// error of a mixed input set.
func (c *sidecarCarry) done(stderr io.Writer) error {
	if c.carry == nil {
		return nil
	}
	removed := c.carry.Removed
	for _, p := range c.earlier {
		if !lexists(p) && !slices.Contains(removed, p) {
			removed = append(removed, p)
		}
	}
	if len(removed) > 0 && len(c.carry.Missing) > 0 {
		fmt.Fprintf(stderr, "note: removed %s, an earlier run's sidecar: %s has none that describes it, so the new files get none\n",
			strings.Join(removed, ", "), c.carry.Missing[0])
	}
	if c.carry.Mixed != nil {
		return fmt.Errorf("the outputs are complete, but their sidecars: %w", c.carry.Mixed)
	}
	return nil
}

// jsonStatus writes a command's JSON document and returns its exit status.
func jsonStatus(program string, stdout, stderr io.Writer, doc any) int {
	if err := cli.WriteJSON(stdout, doc); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	return 0
}

// printPlan lists each shard's file, tensor count and exact size.
func printPlan(w io.Writer, in, prefix string, plan splitter.Plan) {
	tensors := 0
	for _, s := range plan.Shards {
		tensors += len(s.Tensors)
	}
	fmt.Fprintf(w, "%s: %d shards, %d tensors, %d bytes\n", in, len(plan.Shards), tensors, plan.TotalSize())
	for i, path := range plan.Paths(prefix) {
		s := plan.Shards[i]
		fmt.Fprintf(w, "  %s  %5d tensors  %14d bytes (%s)\n", path, len(s.Tensors), s.FileSize, humanBytes(s.FileSize))
	}
}

// previewSplit ends a dry run: the plan (as JSON, or printText), then the
// output checks without their effects (cli.Files.Preview): a run they
// would stop fails after the plan, and existing outputs are mentioned.
func previewSplit(program string, files *cli.Files, asJSON bool, doc any, stdout, stderr io.Writer, printText func()) int {
	refusal := files.Preview(stderr)
	status := 0
	if asJSON {
		status = jsonStatus(program, stdout, stderr, doc)
	} else {
		printText()
	}
	if refusal != nil {
		fmt.Fprintf(stderr, "%s: the run would stop before any work: %v\n", program, refusal)
		return 1
	}
	return status
}
