package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/quantize"
)

func init() {
	register(&command{
		Name:    "rows",
		Summary: "quantize or dequantize raw float32 rows (one reference kernel call)",
		Run:     runRows,
	})
}

// notTargets are types the reference knows that gquant deliberately does not
// produce: ARM-only repacks and a run-time-only layout.
var notTargets = map[formats.Type]bool{
	formats.Q4_0_4X4: true, formats.Q4_0_4X8: true, formats.Q4_0_8X8: true, formats.Q8_K_R16: true,
}

const rowsUsage = `usage: gquant rows quantize --type TYPE --cols N [--imatrix W.f32] IN.f32 OUT.bin
       gquant rows dequantize --type TYPE --cols N IN.bin OUT.f32`

// rowsExamples ends the help of rows and of its subcommands.
func rowsExamples(w io.Writer) {
	cli.PrintExamples(w,
		cli.Example{About: "rows of 4096 float32 to iq4_ks, with an importance vector of 4096 float32",
			Line: "gquant rows quantize --type iq4_ks --cols 4096 --imatrix w.f32 rows.f32 rows.iq4_ks"},
		cli.Example{About: "and back, to measure the error against rows.f32",
			Line: "gquant rows dequantize --type iq4_ks --cols 4096 rows.iq4_ks back.f32"},
	)
}

func runRows(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "quantize" && args[0] != "dequantize") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stdout, rowsUsage)
			rowsExamples(stdout)
			return 0
		}
		if len(args) == 0 {
			fmt.Fprintln(stderr, "gquant rows: want quantize or dequantize")
		} else {
			fmt.Fprintf(stderr, "gquant rows: unknown subcommand %q: want quantize or dequantize\n", args[0])
		}
		fmt.Fprintln(stderr, rowsUsage)
		fmt.Fprintln(stderr, "Run 'gquant rows quantize --help' for every flag.")
		return 2
	}
	mode := args[0]
	program := "gquant rows " + mode
	fs := pflag.NewFlagSet("rows "+mode, pflag.ContinueOnError)
	typeName := fs.String("type", "", "ggml type name, any case (q4_0, Q8_KV, bf16_r16 ...)")
	cols := fs.Int("cols", 0, "weights per row")
	force := fs.Bool("force", false, "replace OUT if it exists (never an input, never a read-only file)")
	var imatrixPath *string
	if mode == "quantize" {
		imatrixPath = fs.String("imatrix", "", "file of --cols float32 importance weights")
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, rowsUsage)
		fmt.Fprintln(w, "\nAll rows of the input go through one call, as one reference ggml_quantize_chunk;")
		fmt.Fprintln(w, "rows = input size / (4 * cols). Files are little-endian and headerless.")
		fmt.Fprintln(w, "\noptions:")
		fs.PrintDefaults()
		rowsExamples(w)
	}
	if status, done := cli.ParseFlags(program, fs, args[1:], stdout, stderr); done {
		return status
	}
	switch {
	case fs.NArg() != 2:
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want IN and OUT, got %d argument(s)", fs.NArg()))
	case *typeName == "":
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--type is required"))
	case *cols <= 0:
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--cols must be a positive number of weights per row"))
	}
	t, err := formats.ParseType(*typeName)
	if err != nil {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--type: %w", err))
	}
	if notTargets[t] {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("%s is not a gquant target (ARM-only or run-time repack layout)", t))
	}
	// A type gquant has no kernel for is a wrong --type like an unknown
	// one, told before any file is read.
	if mode == "quantize" && !quantize.Supported(t) {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--type: %w %s", quantize.ErrUnsupported, t))
	}
	if mode == "dequantize" && !formats.CanDequantize(t) {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--type: no dequantizer for %s", t))
	}
	in, out := fs.Arg(0), fs.Arg(1)
	files := &cli.Files{Force: *force, MakeDirs: true}
	files.Read(in)
	if imatrixPath != nil {
		files.Read(*imatrixPath)
	}
	files.Write(out, -1)
	if err = files.Check(stderr); err == nil {
		err = files.MakeOutputDirs()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gquant rows %s: %v\n", mode, err)
		return 1
	}
	stop := files.CatchInterrupts("gquant rows "+mode, stderr, cli.AtOnce)
	if mode == "quantize" {
		err = rowsQuantize(t, *cols, *imatrixPath, in, out, *force)
	} else {
		err = rowsDequantize(t, *cols, in, out, *force)
	}
	if status, interrupted := stop.Finish(); interrupted {
		return status
	}
	if err != nil {
		fmt.Fprintf(stderr, "gquant rows %s: %v\n", mode, err)
		return 1
	}
	return 0
}

func rowsQuantize(t formats.Type, cols int, imatrixPath, in, out string, replace bool) error {
	src, err := rowsReadF32(in)
	if err != nil {
		return err
	}
	if len(src)%cols != 0 {
		return fmt.Errorf("%s: %d float32 values are not whole rows of %d", in, len(src), cols)
	}
	var imatrix []float32
	if imatrixPath != "" {
		if imatrix, err = rowsReadF32(imatrixPath); err != nil {
			return err
		}
		if len(imatrix) != cols {
			return fmt.Errorf("%s: %d importance weights for rows of %d", imatrixPath, len(imatrix), cols)
		}
	}
	rows := len(src) / cols
	q, err := quantize.QuantizeRows(t, rows, cols, src, imatrix)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	// Some kernels give a non-finite block scale for a block whose
	// importance weights are all zero or tiny; the reference's kernel then
	// aborts or llama-quantize stops ("quantized data validation failed").
	// Such bytes are no row anything can load: write none of them.
	if err := formats.CheckStored(t, int64(cols), 0, q); err != nil {
		hint := ""
		if imatrix != nil {
			hint = " (zero or tiny importance weights give some kernels non-finite scales)"
		}
		return fmt.Errorf("%s: the %s kernel's output is not valid: %w%s", in, t, err, hint)
	}
	return cli.WriteFile(out, q, replace)
}

func rowsDequantize(t formats.Type, cols int, in, out string, replace bool) error {
	src, err := gguf.ReadRegular(in)
	if err != nil {
		return err
	}
	rs, err := t.RowSize(int64(cols))
	if err != nil {
		return err
	}
	if rs == 0 || len(src)%int(rs) != 0 {
		return fmt.Errorf("%s: %d bytes are not whole rows of %d bytes (%s, %d columns)", in, len(src), rs, t, cols)
	}
	dst := make([]float32, len(src)/int(rs)*cols)
	if err := formats.DequantizeRows(t, cols, src, dst); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	b := make([]byte, 4*len(dst))
	for i, v := range dst {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return cli.WriteFile(out, b, replace)
}

// rowsReadF32 reads a headerless little-endian float32 file.
func rowsReadF32(path string) ([]float32, error) {
	b, err := gguf.ReadRegular(path)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of float32", path, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
