package main

import (
	"fmt"
	"io"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "merge",
		Summary: "combine importance matrices computed on different data",
		Run:     runMerge,
	})
}

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", "merge A B ... -o OUT [--to dat|gguf] [--model MODEL.gguf]",
		"Combines importance matrices computed on different data, as llama-imatrix --in-file\n"+
			"accumulates them: per tensor the stored values and the call counts are summed (per\n"+
			"expert where a file has per-expert counts), so the merged mean is the call-weighted\n"+
			"mean. .dat inputs merged with GGUF ones count tokens (times the chunk size), as\n"+
			"llama-imatrix loads them. Chunk counts add up (.dat inputs only) or are the largest\n"+
			"count over the chunk size; every dataset name is kept (joined with \", \" in a .dat).\n"+
			"Entries found in only some files are kept; entries without any calls are left out\n"+
			"of a .dat, as llama-imatrix leaves them out.",
		stderr,
		cli.Example{About: "two calibration runs on different text, as llama-imatrix --in-file would combine them",
			Line: "imatrix merge code.dat chat.dat -o imatrix.dat"},
		cli.Example{About: "to GGUF, with per-expert counts from the model",
			Line: "imatrix merge --model model-bf16.gguf code.dat chat.dat -o imatrix.gguf"},
	)
	out := fs.StringP("output", "o", "", "output `FILE` (required)")
	to := fs.String("to", "", "output format: dat or gguf (default: from OUT's extension)")
	model := fs.String("model", "", "model `GGUF` whose tensor shapes give each entry's matrix count (GGUF output)")
	chunkSize := fs.Int("chunk-size", defaultChunkSize, "tokens per call: scales .dat inputs merged with GGUF ones that record none, and is recorded in a GGUF output made from .dat files")
	force := fs.Bool("force", false, "replace OUT if it exists (never an input, never a read-only file)")
	verbose := fs.BoolP("verbose", "v", false, "list each per-entry warning (else one line stands for many of a kind)")
	if status, done := parseFlags(fs, args, stdout, stderr); done {
		return status
	}
	if *chunkSize <= 0 {
		return badArgs(fs, stderr, "--chunk-size %d: must be positive (the tokens per chunk of the calibration)", *chunkSize)
	}
	if *out == "" {
		return badArgs(fs, stderr, "-o OUT is required")
	}
	if fs.NArg() < 1 {
		return badArgs(fs, stderr, "want one input FILE or more")
	}
	return finish("merge", merge(fs.Args(), *out, *to, *model, *chunkSize, *force, *verbose, stdout, stderr), stderr)
}

func merge(inputs []string, out, to, modelPath string, chunkSize int, force, verbose bool, stdout, stderr io.Writer) error {
	format, err := formatFor(out, to)
	if err != nil {
		return err
	}
	files, err := checkOutput(out, force, stderr, append([]string{modelPath}, inputs...)...)
	if err != nil {
		return err
	}
	var ms []*imatrix.Matrix
	formats := map[imatrix.Format]bool{}
	for _, in := range inputs {
		m, err := imatrix.Open(in)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		formats[m.Format] = true
		fmt.Fprintln(stdout, describe(in, m))
	}
	merged, err := imatrix.Merge(inputs, chunkSize, ms...)
	if err != nil {
		return err
	}
	if len(formats) > 1 {
		fmt.Fprintf(stderr, "note: merging .dat and GGUF files: a .dat counts calls, a GGUF file tokens; the .dat values and calls were multiplied by the chunk size %d, as llama-imatrix does\n", merged.ChunkSize)
	}
	var ws []cli.Warning
	for _, name := range merged.Dropped {
		ws = append(ws, cli.Warning{Kind: "no-data", Tensor: name, Message: "no calls in any input: left out, as llama-imatrix leaves it out"})
	}
	for _, line := range cli.SummarizeWarnings(ws, cli.SummaryLimit, verbose) {
		fmt.Fprintf(stderr, "warning: %s\n", cli.EscapeInline(line)) // one line whatever the names hold
	}
	ne2, err := modelShapes(modelPath)
	if err != nil {
		return err
	}
	l := imatrix.NewLayout(merged, ne2)
	warnLayout(merged, l, format, verbose, stderr)
	if err := writeGuarded(files, "imatrix merge", stderr, func() error { return writeMatrix(out, format, merged, l, chunkSize, force) }); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	entries, chunks := imatrix.Written(merged, format)
	fmt.Fprintf(stdout, "wrote %s (%s, %d entries, %d chunks, %d datasets)\n", out, format, entries, chunks, datasetsWritten(merged, format))
	return nil
}
