package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/repack"
)

func init() {
	register(&command{
		Name:    "repack",
		Summary: "convert tensors to row-interleaved types (q4_K -> q4_k_r4, ...) and back, without requantizing",
		JSON:    true,
		Run:     runRepack,
	})
}

func repackUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `usage: gquant repack [--pattern REGEX,...] [--undo] [--dry-run] [--merge] IN OUT

Rearranges the bytes of each tensor into the row-interleaved layout of its
type that ik_llama.cpp's CPU kernels read fastest, as llama-quantize --repack
does (same output, byte for byte). Nothing is requantized: the model computes
exactly what it did, and --undo gives the original bytes back.

Converted: `+repack.RepackableTypeNames()+`.
Kept as they are: other types (f32, f16, iq1_s, iq1_m, ...), token_embd.weight
and per_layer_token_embd.weight, and tensors whose rows per matrix (ne1, per
expert for 3-D tensors) are not a multiple of the interleave count (4, 8, 16).

general.file_type becomes the reference's repacked file type (Q4_K_M and
Q4_K_S -> Q4_K_R4, Q8_0 -> Q8_0_R8, IQ4_XS -> IQ4_XS_R8, ...). With --undo it
goes back; where several file types repack to the same one it becomes the one
the reference's loader assumes for that tensor type: Q3_K_R4 -> Q3_K_M,
Q4_K_R4 -> Q4_K_M, Q5_K_R4 -> Q5_K_M.

Unlike the reference, bf16 -> bf16_r16 is done on every CPU (the reference
only offers it on AVX512-BF16 machines, so elsewhere its BF16 files keep their
type), and q8_KV -> q8_KV_r8 gives a valid q8_KV_r8 tensor (the reference's
offline repack of that pair is broken).

IN may be one file or any shard of a set; a shard set gives a shard set with
the same tensors per shard (OUT-0000K-of-0000N.gguf) unless --merge.

options:
`)
	fs.PrintDefaults()
	cli.PrintExamples(w,
		cli.Example{About: "the q4_K, q6_K, iq4_xs, ... tensors of a model to the interleaved forms ik_llama.cpp's CPU kernels prefer",
			Line: "gquant repack model-Q4_K_M.gguf model-Q4_K_R4.gguf"},
		cli.Example{About: "only the routed experts (the rest stays for the GPU)",
			Line: "gquant repack --pattern 'ffn_.*_exps' model-Q4_K_M.gguf model-mixed.gguf"},
		cli.Example{About: "back to the plain types, byte for byte the original",
			Line: "gquant repack --undo model-Q4_K_R4.gguf model-Q4_K_M.gguf"},
	)
}

func runRepack(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("repack", pflag.ContinueOnError)
	patterns := fs.StringArray("pattern", nil, "only tensors whose name matches one of these comma-separated regular expressions (ECMAScript, searched anywhere in the name; repeatable)")
	fs.StringArray("repack-pattern", nil, "the same as --pattern (llama-quantize's spelling)")
	undo := fs.Bool("undo", false, "convert row-interleaved tensors back to their base types")
	dryRun := fs.Bool("dry-run", false, "print what would happen to each tensor and write nothing")
	merge := fs.Bool("merge", false, "write one file even when IN is a shard set")
	threads := fs.Int("threads", 0, "goroutines shuffling bytes (default: number of CPUs)")
	quiet := fs.Bool("quiet", false, "print no line per tensor")
	asJSON := fs.Bool("json", false, "print the plan (with --dry-run) or what was written as one JSON document (schema gquant.repack/1)")
	force := fs.Bool("force", false, "replace existing output files (never an input, never a read-only file)")
	var sf splitFlags
	sf.register(fs)
	fs.Usage = func() { repackUsage(fs.Output(), fs) }
	const program = "gquant repack"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 2 {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want IN and OUT, got %d argument(s)", fs.NArg()))
	}
	more, _ := fs.GetStringArray("repack-pattern")
	var pats []string
	for _, arg := range append(*patterns, more...) {
		// Split on commas as the reference does (a regex with a comma,
		// like a{1,3}, cannot be given).
		pats = append(pats, strings.Split(arg, ",")...)
	}
	in, out := fs.Arg(0), fs.Arg(1)

	m, err := gguf.Open(in)
	if err != nil {
		fmt.Fprintln(stderr, "gquant repack:", err)
		return 1
	}
	defer m.Close()
	split, err := sf.limits()
	if err != nil {
		return cli.UsageError(program, fs, stderr, err)
	}
	opts := repack.Options{Patterns: pats, Undo: *undo, Merge: *merge, Threads: *threads, Split: split}
	plan, err := repack.NewPlan(m, opts)
	if plan != nil {
		if err := plan.CheckOutputs(m, out); err != nil {
			fmt.Fprintln(stderr, "gquant repack:", strings.TrimPrefix(err.Error(), "repack: "))
			return 1
		}
	}
	files := &cli.Files{Force: *force, MakeDirs: true}
	files.Read(modelPaths(m)...)
	var refusal error // what the run's output checks would stop on
	if *dryRun && err == nil {
		refusal = previewRepackOutputs(m, plan, out, files, stderr)
	}
	if *asJSON && *dryRun && err == nil {
		doc, err := newRepackDoc(m, plan, out, false)
		if err != nil {
			fmt.Fprintln(stderr, "gquant repack:", err)
			return 1
		}
		if status := jsonStatus(program, stdout, stderr, doc); status != 0 || refusal == nil {
			return status
		}
		fmt.Fprintln(stderr, "gquant repack:", refusal)
		return 1
	}
	if *dryRun && plan != nil && !*asJSON {
		// (With --json a failed plan is the error document alone.)
		plan.Describe(stdout)
		if err == nil {
			fmt.Fprintf(stdout, "would write %s\n", strings.Join(plan.Outputs(out), ", "))
		}
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(stderr, "gquant repack:", strings.TrimPrefix(line, "repack: "))
		}
		if errors.Is(err, repack.ErrNotRepackable) || errors.Is(err, repack.ErrNoMatch) {
			fmt.Fprintln(stderr, "gquant repack: --dry-run lists every tensor with the reason it is kept")
		}
		return 1
	}
	if *dryRun {
		if refusal != nil {
			fmt.Fprintln(stderr, "gquant repack:", refusal)
			return 1
		}
		return 0
	}
	if !*asJSON {
		for _, w := range plan.Warnings {
			fmt.Fprintln(stderr, "gquant repack: warning:", w)
		}
	}
	if !*quiet && !*asJSON {
		plan.Options.Log = stdout
	}
	stop, err := checkRepackOutputs(m, plan, out, files, "gquant repack", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "gquant repack:", err)
		return 1
	}
	paths, err := repack.Run(m, plan, out)
	if status, interrupted := stop.Finish(); interrupted {
		return status
	}
	if err != nil {
		fmt.Fprintln(stderr, "gquant repack:", strings.TrimPrefix(err.Error(), "repack: "))
		return 1
	}
	if *asJSON {
		doc, err := newRepackDoc(m, plan, out, true)
		if err != nil {
			fmt.Fprintln(stderr, "gquant repack:", err)
			return 1
		}
		return jsonStatus(program, stdout, stderr, doc)
	}
	fmt.Fprintf(stdout, "converted %d of %d tensors; general.file_type %s -> %s; wrote %s\n",
		plan.Converted, len(plan.Tensors), plan.FileType.From, plan.FileType.To, strings.Join(paths, ", "))
	return 0
}
