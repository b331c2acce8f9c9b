package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/splitter"
)

func init() {
	register(&command{
		Name:    "merge",
		Summary: "join a shard set back into one file (the split keys are dropped)",
		JSON:    true,
		Run:     runMerge,
	})
}

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	cli.Underscores(fs) // as llama-gguf-split
	overwrite := fs.Bool("force", false, "replace OUT if it exists (never one of the shards, never a read-only file)")
	asJSON := fs.Bool("json", false, "print what was written as one JSON document (schema gquant.merge/1)")
	dryRun := fs.Bool("dry-run", false, "print what would be written (the shards, the output's tensors and bytes) and write nothing")
	cli.Ignored(fs, "merge", "llama-gguf-split's --merge: merging is what this command does")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: gquant merge [--dry-run] SHARD OUT")
		fmt.Fprintln(w, "\nSHARD is any file of the set (PREFIX-0000K-of-0000N.gguf); the others are found by name.")
		fmt.Fprintln(w, "Merging the shards of a file gives that file back byte for byte.")
		fmt.Fprintln(w, "llama-gguf-split's --merge is accepted and does nothing.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		cli.PrintExamples(w,
			cli.Example{About: "one file from a shard set (llama-gguf-split --merge's job)",
				Line: "gquant merge model-Q4_K_M-00001-of-00003.gguf model-Q4_K_M.gguf"},
			cli.Example{About: "the same, with a report for a script",
				Line: "gquant merge --json model-Q4_K_M-00001-of-00003.gguf model-Q4_K_M.gguf"},
		)
	}
	const program = "gquant merge"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 2 {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want SHARD and OUT, got %d argument(s)", fs.NArg()))
	}
	if *dryRun {
		return previewMerge(program, fs.Arg(0), fs.Arg(1), *overwrite, *asJSON, stdout, stderr)
	}
	doc, err := merge(fs.Arg(0), fs.Arg(1), *overwrite, *asJSON, stdout, stderr)
	if err != nil {
		return exitCode(program, err, stderr)
	}
	if *asJSON {
		return jsonStatus(program, stdout, stderr, doc)
	}
	return 0
}

// merge writes the shard set of shard as out; the document describes it.
func merge(shard, out string, force, quiet bool, stdout, stderr io.Writer) (mergeDoc, error) {
	m, err := gguf.Open(shard)
	if err != nil {
		return mergeDoc{}, err
	}
	defer m.Close()
	size, err := splitter.MergedSize(m)
	if err != nil {
		return mergeDoc{}, err
	}
	files := &cli.Files{Force: force, MakeDirs: true} // the splitter creates them
	files.Read(modelPaths(m)...)
	files.Write(out, size, pipeline.SidecarPath(out))
	if err := files.Check(stderr); err != nil {
		return mergeDoc{}, err
	}
	var log io.Writer = stdout
	if quiet {
		log = nil
	}
	carry := &sidecarCarry{in: m, earlier: sidecarsOf([]string{out})}
	stop := files.CatchInterrupts("gquant merge", stderr, cli.DefaultGrace)
	err = splitter.MergeModel(m, out, &splitter.Options{Overwrite: force, Log: log, Context: stop.Context(), Beside: sidecarOf, Prepare: carry.prepare})
	if status, interrupted := stop.Finish(); interrupted {
		return mergeDoc{}, exitStatus(status)
	}
	if err == nil {
		err = carry.done(stderr)
	}
	return newMergeDoc(m, out, size), err
}

// previewMerge is merge --dry-run: the checks of the run, without effects,
// and what it would write. llama-gguf-split has no --dry-run for --merge
// (it ignores the option and merges): one given here means "not yet".
func previewMerge(program, shard, out string, force, asJSON bool, stdout, stderr io.Writer) int {
	m, err := gguf.Open(shard)
	if err != nil {
		return exitCode(program, err, stderr)
	}
	defer m.Close()
	size, err := splitter.MergedSize(m)
	if err != nil {
		return exitCode(program, err, stderr)
	}
	files := &cli.Files{Force: force, MakeDirs: true}
	files.Read(modelPaths(m)...)
	files.Write(out, size, pipeline.SidecarPath(out))
	doc := newMergeDoc(m, out, size)
	doc.Written = false
	return previewSplit(program, files, asJSON, doc, stdout, stderr, func() {
		fmt.Fprintf(stdout, "would write %s: %d tensors from %d shards, %d bytes (%s)\n", out, len(m.Tensors), len(m.Shards), size, humanBytes(size))
		for i, s := range m.Shards {
			fmt.Fprintf(stdout, "  %d  %s  %d tensors  %d bytes\n", i+1, s.Path, len(s.Tensors), s.Size)
		}
	})
}

// sidecarOf names the sidecar describing a split's or merge's output, which
// goes before a new file replaces it (splitter.Options.Beside).
func sidecarOf(output string) []string { return []string{pipeline.SidecarPath(output)} }

// sidecarsOf lists the outputs' sidecars that exist.
func sidecarsOf(outputs []string) []string {
	var out []string
	for _, o := range outputs {
		if p := pipeline.SidecarPath(o); lexists(p) {
			out = append(out, p)
		}
	}
	return out
}

// lexists reports whether a file (or a link) is at path.
func lexists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
