package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "convert",
		Summary: "convert between the legacy .dat and the GGUF imatrix formats",
		Run:     runConvert,
	})
}

// defaultChunkSize is llama-imatrix's default context per chunk, recorded in
// GGUF files made from a .dat (which does not say).
const defaultChunkSize = 512

func runConvert(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("convert", "convert IN OUT [--to dat|gguf] [--model MODEL.gguf]",
		"Converts an importance matrix between the legacy .dat and the GGUF format as\n"+
			"llama-imatrix converts it, keeping each tensor's per-column means and the dataset\n"+
			"names. The output format comes from OUT's extension (.gguf) or --to. A .dat file\n"+
			"counts calls (chunks), a GGUF file tokens: .dat -> GGUF multiplies values and counts\n"+
			"by --chunk-size; GGUF -> .dat gives each tensor ceil(tokens / chunk size) calls (the\n"+
			"file's imatrix.chunk_size), stores each expert's mean times that, 1 for an expert\n"+
			"without data, and leaves out tensors without any, with a warning. For .dat -> GGUF\n"+
			"the number of experts of each entry comes from --model, or is inferred (inspect\n"+
			"shows how).",
		stderr,
		cli.Example{About: "a legacy .dat to GGUF, with the model's shapes for per-expert counts",
			Line: "imatrix convert --model model-bf16.gguf imatrix.dat imatrix.gguf"},
		cli.Example{About: "and back to .dat for tools that read only that",
			Line: "imatrix convert --to dat imatrix.gguf imatrix.dat"},
	)
	to := fs.String("to", "", "output format: dat or gguf (default: from OUT's extension)")
	model := fs.String("model", "", "model `GGUF` whose tensor shapes give each entry's matrix count")
	chunkSize := fs.Int("chunk-size", defaultChunkSize, "tokens per call: scales a .dat input to a GGUF output (recorded there), and a GGUF input that records none to a .dat")
	force := fs.Bool("force", false, "replace OUT if it exists (never an input, never a read-only file)")
	verbose := fs.BoolP("verbose", "v", false, "list each per-entry warning (else one line stands for many of a kind)")
	if status, done := parseFlags(fs, args, stdout, stderr); done {
		return status
	}
	if *chunkSize <= 0 {
		return badArgs(fs, stderr, "--chunk-size %d: must be positive (the tokens per chunk of the calibration)", *chunkSize)
	}
	if fs.NArg() != 2 {
		return badArgs(fs, stderr, "want IN and OUT, got %d argument(s)", fs.NArg())
	}
	return finish("convert", convert(fs.Arg(0), fs.Arg(1), *to, *model, *chunkSize, *force, *verbose, stdout, stderr), stderr)
}

func convert(in, out, to, modelPath string, chunkSize int, force, verbose bool, stdout, stderr io.Writer) error {
	format, err := formatFor(out, to)
	if err != nil {
		return err
	}
	files, err := checkOutput(out, force, stderr, in, modelPath)
	if err != nil {
		return err
	}
	m, err := imatrix.Open(in)
	if err != nil {
		return err
	}
	ne2, err := modelShapes(modelPath)
	if err != nil {
		return err
	}
	recorded := m.ChunkSize > 0
	if m.Format == imatrix.FormatGGUF && !recorded {
		m.ChunkSize = chunkSize // the file does not say: --chunk-size (512, llama-imatrix's default)
	}
	l := imatrix.NewLayout(m, ne2)
	warnLayout(m, l, format, verbose, stderr)
	if format == imatrix.FormatDat && m.Format == imatrix.FormatGGUF {
		from := "the file's imatrix.chunk_size"
		if !recorded {
			from = "--chunk-size: the file records none"
		}
		fmt.Fprintf(stderr, "note: token counts become call counts of %d tokens each (%s), as llama-imatrix converts them\n", m.ChunkSize, from)
	}
	if err := writeGuarded(files, "imatrix convert", stderr, func() error { return writeMatrix(out, format, m, l, chunkSize, force) }); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	entries, chunks := imatrix.Written(m, format)
	fmt.Fprintf(stdout, "wrote %s (%s, %d entries, %d chunks)\n", out, format, entries, chunks)
	return nil
}

// warnLayout tells the user what the conversion to format had to decide
// or could not know; many warnings of a kind are one line unless verbose.
func warnLayout(m *imatrix.Matrix, l *imatrix.Layout, format imatrix.Format, verbose bool, stderr io.Writer) {
	switch format {
	case imatrix.FormatGGUF:
		if l.Inference != "" {
			fmt.Fprintf(stderr, "note: %s\n", l.Inference)
		}
		var ws []cli.Warning
		for _, e := range m.Entries {
			if src := l.Source[e.Name]; src == "unknown (pass the model)" {
				ws = append(ws, cli.Warning{Kind: "unknown-matrices", Tensor: e.Name, Message: "expert count unknown, written as one matrix (pass --model)"})
			}
		}
		for _, line := range cli.SummarizeWarnings(ws, cli.SummaryLimit, verbose) {
			fmt.Fprintf(stderr, "warning: %s\n", cli.EscapeInline(line)) // one line whatever the names hold
		}
	case imatrix.FormatDat:
		if m.Format != imatrix.FormatGGUF {
			return
		}
		// The conversion llama-imatrix makes (imatrix.WriteDat): what it
		// leaves out or fills in, the user should hear of.
		var ws []cli.Warning
		for _, name := range imatrix.DatSkipped(m) {
			ws = append(ws, cli.Warning{Kind: "no-data", Tensor: name, Message: "no data at all: left out of the .dat, as llama-imatrix leaves it out"})
		}
		for _, e := range m.Entries {
			if n := zeros(e.Counts); n > 0 && n < len(e.Counts) {
				ws = append(ws, cli.Warning{Kind: "partial-data", Tensor: e.Name,
					Message: fmt.Sprintf("%d of %d matrices without data: stored with importance 1 (neutral), as llama-imatrix stores them", n, len(e.Counts))})
			}
		}
		for _, line := range cli.SummarizeWarnings(ws, cli.SummaryLimit, verbose) {
			fmt.Fprintf(stderr, "warning: %s\n", cli.EscapeInline(line)) // one line whatever the names hold
		}
		// A .dat file has room for one dataset name, and llama-imatrix
		// writes the last of a GGUF file's: the others were dropped
		// without a word.
		if n := len(m.Datasets); n > 1 {
			fmt.Fprintf(stderr, "note: a .dat file records one dataset: %s, the last, as llama-imatrix writes it; the %d other(s) are not recorded\n",
				cli.EscapeInline(strconv.Quote(m.Datasets[n-1])), n-1)
		}
	}
}

// datasetsWritten returns how many dataset names the file of format made
// from m records: one at most in a .dat made from a GGUF matrix (the last,
// imatrix.WriteDat), every one otherwise (a .dat from .dat files joins
// them into its one name).
func datasetsWritten(m *imatrix.Matrix, format imatrix.Format) int {
	if format == imatrix.FormatDat && m.Format == imatrix.FormatGGUF {
		return min(len(m.Datasets), 1)
	}
	return len(m.Datasets)
}

func zeros(v []float64) int {
	n := 0
	for _, x := range v {
		if math.Round(x) == 0 { // as the conversion rounds counts (std::lround)
			n++
		}
	}
	return n
}
