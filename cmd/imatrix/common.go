package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

// newFlags makes a subcommand's flag set with a usage text that ends with
// examples.
func newFlags(name, synopsis, about string, stderr io.Writer, examples ...cli.Example) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: imatrix %s\n\n%s\n\noptions:\n", synopsis, about)
		fs.PrintDefaults()
		cli.PrintExamples(fs.Output(), examples...)
	}
	return fs
}

// parseFlags parses args (cli.ParseFlags: --help on stdout, a bad flag
// with the closest one and the usage line on stderr); done is true when
// the command should stop with status.
func parseFlags(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (status int, done bool) {
	return cli.ParseFlags("imatrix "+fs.Name(), fs, args, stdout, stderr)
}

// badArgs reports wrong positional arguments (or a missing required
// option) as a usage error: the message, the usage line, exit status 2.
func badArgs(fs *pflag.FlagSet, stderr io.Writer, format string, args ...any) int {
	return cli.UsageError("imatrix "+fs.Name(), fs, stderr, fmt.Errorf(format, args...))
}

// modelShapes opens a model and returns each tensor's matrix count (the
// product of the dimensions after the second, 1 for 2-D tensors). The model
// is closed again: only its header is needed.
func modelShapes(path string) (map[string]int, error) {
	if path == "" {
		return nil, nil
	}
	m, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return tensorMatrices(m), nil
}

func tensorMatrices(m *gguf.Model) map[string]int {
	out := make(map[string]int, len(m.Tensors))
	for _, t := range m.Tensors {
		n := int64(1)
		for _, d := range t.Shape[min(2, len(t.Shape)):] {
			n *= d
		}
		out[t.Name] = int(n)
	}
	return out
}

// formatFor picks the output format: --to when given, else OUT's extension
// (.gguf is GGUF, anything else the legacy layout).
func formatFor(out, to string) (imatrix.Format, error) {
	switch strings.ToLower(to) {
	case "dat", "legacy":
		return imatrix.FormatDat, nil
	case "gguf":
		return imatrix.FormatGGUF, nil
	case "":
		if strings.EqualFold(filepath.Ext(out), ".gguf") {
			return imatrix.FormatGGUF, nil
		}
		return imatrix.FormatDat, nil
	}
	return "", usageError{fmt.Errorf("--to %q: want dat or gguf", to)}
}

// writeMatrix writes m to path in format f. For GGUF, entries with a single
// count are split into the matrices the layout gives them.
func writeMatrix(path string, f imatrix.Format, m *imatrix.Matrix, l *imatrix.Layout, chunkSize int, replace bool) error {
	if f == imatrix.FormatGGUF {
		return imatrix.WriteGGUF(path, m, l.Matrices, chunkSize, replace)
	}
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		return err
	}
	return cli.WriteFile(path, buf.Bytes(), replace)
}

// checkOutput applies the output policy of every command (internal/cli
// Files) to out before any work: never an input, an existing file only
// with --force, never a read-only one, a writable directory.
func checkOutput(out string, force bool, stderr io.Writer, inputs ...string) (*cli.Files, error) {
	files := &cli.Files{Force: force}
	files.Read(inputs...)
	files.Write(out, -1)
	// An output that is an input fails with status 1, as in gquant's
	// commands: the command line is well formed, the files are not.
	return files, files.Check(stderr)
}

// writeGuarded runs write with the interrupt signals caught: on Ctrl-C the
// temporary file is removed and the command exits with 128 + the signal.
func writeGuarded(files *cli.Files, program string, stderr io.Writer, write func() error) error {
	stop := files.CatchInterrupts(program, stderr, cli.AtOnce)
	err := write()
	if status, interrupted := stop.Finish(); interrupted {
		return exitStatus(status)
	}
	return err
}

// describe renders a file's header facts in one line.
func describe(path string, m *imatrix.Matrix) string {
	format := "legacy .dat"
	if m.Format == imatrix.FormatGGUF {
		format = "GGUF"
	}
	ds := "no dataset recorded"
	if len(m.Datasets) > 0 {
		ds = "dataset " + strings.Join(quoteAll(m.Datasets), ", ")
	}
	chunks := "chunk count not recorded"
	if m.Chunks > 0 {
		chunks = fmt.Sprintf("%d chunks", m.Chunks)
	}
	return fmt.Sprintf("%s: %s, %d entries, %s, %s", path, format, m.Len(), chunks, ds)
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
