package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/internal/text"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
)

func init() {
	register(&command{
		Name:    "quantize",
		Summary: "quantize a GGUF model (llama-quantize's command line)",
		JSON:    true,
		Run:     runQuantize,
	})
}

// quantizeFlags are llama-quantize's options plus ours.
type quantizeFlags struct {
	fs *pflag.FlagSet

	imatrix, outputType, tokenEmbdType, perLayerTokenEmbdType, extraOutput, ffnGateInpType string
	attnQ, attnK, attnV, attnQKV, attnOutput, ffnGate, ffnUp, ffnDown                      string
	recipes, include, exclude, overrideKV, repackPattern                                   []string
	pure, allowRequantize, leaveOutput, ignoreImatrixRules, hideImatrix, symmetricQ40      bool
	slowIQ2KS, keepSplit, partialRequant, repack, dryRun, likeReference, jsonOut, force    bool

	recordTool bool // --record-tool
	verbose    bool // --verbose: every warning, not a summary per kind
	started    time.Time

	iterate iterateFlags // --reuse, --resume (iterate.go)
	shards  shardFlags   // --only-shards, --shards, --parts (shards.go)
	threads int          // the THREADS argument (0: every core)
	pos     []string     // IN [OUT] TYPE [THREADS] (parse)
	// announced: the run printed "main: quantizing" (run).
	announced bool
	late      []string // flags given after IN, for quantize's warning

	// verify, when set, takes the plan instead of a run (gquant verify).
	verify func(in *gguf.Model, plan *pipeline.Plan) error

	// rules are --custom-q, --tensor-type and --tensor-type-file in the
	// order given (--recipe files come after them).
	rules ruleFlags

	split splitFlags

	planning planFlags // the planner's options (plan.go)
}

func newQuantizeFlags(stderr io.Writer) *quantizeFlags {
	q := &quantizeFlags{fs: pflag.NewFlagSet("quantize", pflag.ContinueOnError)}
	fs := q.fs
	fs.SetOutput(stderr)
	fs.StringVar(&q.imatrix, "imatrix", "", "importance matrix file (legacy .dat or GGUF)")
	fs.Var(q.rules.kind(ruleCustomQ), "custom-q", "per-tensor rules `regex=type,...` (split at commas); first match wins; repeatable")
	fs.Var(q.rules.kind(ruleTensorType), "tensor-type", "one rule `PATTERN=TYPE` with mainline llama.cpp's semantics (commas belong to the regex, the pattern is lower-cased); repeatable")
	fs.Var(q.rules.kind(ruleTensorTypeFile), "tensor-type-file", "mainline llama.cpp's `FILE` of PATTERN=TYPE rules separated by white space")
	fs.StringArrayVar(&q.recipes, "recipe", nil, "recipe `FILE`: one regex=type rule per line, # comments; rules after --custom-q ones")
	fs.BoolVar(&q.pure, "pure", false, "quantize every tensor to the same type (no built-in mixture)")
	fs.StringVar(&q.outputType, "output-tensor-type", "", "type for output.weight")
	fs.StringVar(&q.tokenEmbdType, "token-embedding-type", "", "type for token_embd.weight")
	fs.StringVar(&q.perLayerTokenEmbdType, "per-layer-token-embedding-type", "", "type for per_layer_token_embd.weight")
	fs.StringVar(&q.extraOutput, "extra-output-tensor", "", "also write the output tensor in this type, as output_extra.weight")
	fs.StringVar(&q.ffnGateInpType, "ffn-gate-inp-type", "", "type for the ffn_gate_inp tensors")
	fs.StringVar(&q.attnQ, "attn-q-type", "", "type for attn_q.weight")
	fs.StringVar(&q.attnK, "attn-k-type", "", "type for attn_k.weight")
	fs.StringVar(&q.attnV, "attn-v-type", "", "type for attn_v.weight")
	fs.StringVar(&q.attnQKV, "attn-qkv-type", "", "type for attn_qkv.weight")
	fs.StringVar(&q.attnOutput, "attn-output-type", "", "type for attn_output.weight")
	fs.StringVar(&q.ffnGate, "ffn-gate-type", "", "type for ffn_gate")
	fs.StringVar(&q.ffnUp, "ffn-up-type", "", "type for ffn_up")
	fs.StringVar(&q.ffnDown, "ffn-down-type", "", "type for ffn_down")
	fs.BoolVar(&q.allowRequantize, "allow-requantize", false, "allow requantizing tensors that are already quantized")
	fs.BoolVar(&q.leaveOutput, "leave-output-tensor", false, "leave output.weight un(re)quantized")
	fs.StringArrayVar(&q.include, "include-weights", nil, "use importance data only for tensors containing this string; repeatable")
	fs.StringArrayVar(&q.exclude, "exclude-weights", nil, "drop importance data for tensors containing this string; repeatable")
	fs.BoolVar(&q.ignoreImatrixRules, "ignore-imatrix-rules", false, "quantize very low-bit types even without importance data")
	fs.BoolVar(&q.hideImatrix, "hide-imatrix", false, "do not record the importance matrix details in the output")
	fs.BoolVar(&q.symmetricQ40, "symmetric-q40", false, "use the [-7,7] range for q4_0 (turns off the importance matrix for it)")
	fs.BoolVar(&q.slowIQ2KS, "slow-iq2ks", false, "use the original slow IQ2_KS search")
	fs.StringArrayVar(&q.overrideKV, "override-kv", nil, "set metadata `KEY=TYPE:VALUE` (int, float, bool, str); repeatable")
	fs.BoolVar(&q.keepSplit, "keep-split", false, "write one output shard per input shard")
	q.split.register(fs)
	fs.BoolVar(&q.partialRequant, "partial-requant", false, "keep output files (or shards) that exist and match the plan exactly; write the others")
	fs.BoolVar(&q.repack, "repack", false, "only repack tensors to their row-interleaved _r4/_r8 forms")
	fs.StringArrayVar(&q.repackPattern, "repack-pattern", nil, "with --repack: comma-separated regexes of the tensors to repack")
	fs.BoolVar(&q.dryRun, "dry-run", false, "print the plan (types, sizes, files) and write nothing")
	fs.BoolVar(&q.force, "force", false, "replace existing output files (never an input, never a read-only file)")
	fs.BoolVar(&q.likeReference, "like-reference", false, "ignore --custom-q where llama-quantize does (--pure, float file types)")
	fs.BoolVar(&q.jsonOut, "json", false, "print the run's summary (with --dry-run: the plan) as one JSON document on stdout (schema gquant.quantize/1, gquant.plan/1)")
	fs.BoolVarP(&q.verbose, "verbose", "v", false, "list every warning (else one line stands for many of a kind)")
	fs.BoolVar(&q.recordTool, "record-tool", false, "record this gquant's version line (gquant --version) as quantize.tool metadata; off, the output is llama-quantize's byte for byte")
	q.planning.register(fs)
	q.iterate.register(fs)
	q.shards.register(fs)
	registerForeignQuantizeFlags(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: gquant quantize [flags] IN.gguf [OUT.gguf] TYPE [THREADS]")
		fmt.Fprintln(w, "\nTYPE is a file type by name (Q4_K_M, IQ2_K, any case) or number (15), or COPY.")
		fmt.Fprintln(w, "Without OUT the output is ggml-model-TYPE.gguf beside the input. Flags go before IN,\nwhere llama-quantize reads them (after IN they apply, with a warning).")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		printFileTypes(w)
		cli.PrintExamples(w,
			cli.Example{About: "Q4_K_M with an importance matrix on 16 threads, as llama-quantize takes it",
				Line: "gquant quantize --imatrix imatrix.dat model-bf16.gguf model-Q4_K_M.gguf Q4_K_M 16"},
			cli.Example{About: "routed experts in IQ2_K_R4, everything else as Q8_0 chooses, in shards of 50 GB",
				Line: "gquant quantize --imatrix imatrix.dat --custom-q 'ffn_.*_exps=iq2_k_r4' --split-max-size 50G model-bf16.gguf out.gguf Q8_0"},
			cli.Example{About: "the tiny model of this repository, to try it out",
				Line: "gquant quantize testdata/tiny-deepseek2-bf16.gguf /tmp/tiny-Q4_K_M.gguf Q4_K_M"},
		)
	}
	return q
}

func runQuantize(args []string, stdout, stderr io.Writer) int {
	const program = "gquant quantize"
	q := newQuantizeFlags(stderr)
	late, status, done := q.parse(program, args, stdout, stderr)
	if done {
		return status
	}
	q.late = late
	status = q.exitCode(program, q.run(stdout, stderr), stderr)
	if status == 1 && q.announced {
		// llama-quantize's last line when a run it started fails, which
		// scripts grep (not after a failure before "main: quantizing", a
		// missing importance matrix file, where it stops without it).
		fmt.Fprintf(stderr, "main: failed to quantize model from '%s'\n", q.pos[0])
	}
	return status
}

// parse reads the flags wherever they are, as Go commands do, and keeps
// the positional arguments IN [OUT] TYPE [THREADS] in q.pos, negative
// numbers among them (the flag parser alone would take "-1" for a flag).
// It returns the flags given after IN, which llama-quantize would not read
// (quantize warns about them).
func (q *quantizeFlags) parse(program string, args []string, stdout, stderr io.Writer) (late []string, status int, done bool) {
	masked := make([]string, 0, len(args))
	negatives := map[string]string{} // placeholder -> the argument
	positional := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			masked = append(masked, args[i:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			key := fmt.Sprintf("\x00%d", i)
			negatives[key] = a
			masked = append(masked, key)
			positional = true
		case len(a) > 1 && a[0] == '-':
			if positional {
				late = append(late, a)
			}
			masked = append(masked, a)
			if takesValue(q.fs, a) && i+1 < len(args) {
				i++
				masked = append(masked, args[i])
			}
		default:
			positional = true
			masked = append(masked, a)
		}
	}
	if status, done = cli.ParseFlags(program, q.fs, masked, stdout, stderr); done {
		return nil, status, done
	}
	for _, a := range q.fs.Args() {
		if v, ok := negatives[a]; ok {
			a = v
		}
		q.pos = append(q.pos, a)
	}
	return late, 0, false
}

// takesValue reports whether flag argument a (--name, -n) consumes the
// next argument as its value.
func takesValue(fs *pflag.FlagSet, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	var f *pflag.Flag
	if name, ok := strings.CutPrefix(a, "--"); ok {
		f = fs.Lookup(name)
	} else {
		f = fs.ShorthandLookup(a[len(a)-1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// needsImatrixBanner is what llama-quantize prints, on stderr, when it
// refuses a file type without an importance matrix (gquant's error and
// advice follow it).
const needsImatrixBanner = "\n" + imatrixBannerRule + "\n" +
	"Please do not use IQ1_S, IQ1_M, IQ2_S, IQ2_XXS, IQ2_XS or Q2_K_S quantization without an importance matrix\n" +
	imatrixBannerRule + "\n\n\n"

// imatrixBannerRule is the reference's rule of '=' around needsImatrixBanner.
const imatrixBannerRule = "=========================================================================================================="

// exitCode is the package's exitCode, with a usage error followed by the
// usage line and the pointer to --help.
func (q *quantizeFlags) exitCode(program string, err error, stderr io.Writer) int {
	var ue usageError
	if errors.As(err, &ue) {
		return cli.UsageError(program, q.fs, stderr, err)
	}
	return exitCode(program, err, stderr)
}

type usageError struct{ error }

// usageUnlessFile makes err, from reading a file a flag names (a recipe, a
// --tensor-type-file, a --place-file), a usage error where the file's
// contents are wrong, and leaves it a plain error (exit 1) where the file
// could not be opened or read: a missing file is no wrong command line, as
// a missing --imatrix or --gains is not. A directory or a named pipe given
// for the file (gguf.ErrNotRegular) cannot be read either, as --imatrix
// and --gains take it (exit 1).
func usageUnlessFile(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, gguf.ErrNotRegular) {
		return err
	}
	return usageError{err}
}

// exitStatus is returned by a command stopped by a signal: the message is
// printed already, the status is 128 + the signal's number.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// exitCode prints a command's error and returns its exit status: 0 without
// an error, 2 for a usage error, the signal's status after an interrupt,
// else 1.
func exitCode(program string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	fmt.Fprintln(stderr, program+":", err)
	if a := advice(err); a != "" {
		fmt.Fprintln(stderr, program+":", a)
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// modelPaths lists the files of an opened model (its shards).
func modelPaths(m *gguf.Model) []string {
	paths := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		paths[i] = s.Path
	}
	return paths
}

func (q *quantizeFlags) run(stdout, stderr io.Writer) error {
	q.started = time.Now()
	pos := q.pos
	if len(pos) < 2 {
		return usageError{errors.New("need IN and TYPE")}
	}
	input := pos[0]
	rest := pos[1:]
	var output string
	ft, copyOnly, err := recipes.ParseFileType(rest[0])
	ftArg := rest[0]
	if err == nil && !looksLikePath(rest[0]) {
		output = filepath.Join(filepath.Dir(input), "ggml-model-"+recipes.FileTypeArgName(ftArg))
		if !q.keepSplit {
			output += ".gguf"
		}
		rest = rest[1:]
	} else {
		output = rest[0]
		if q.keepSplit {
			output = strings.TrimSuffix(output, ".gguf")
		}
		if len(rest) < 2 {
			return usageError{errors.New("missing the file type after the output name")}
		}
		ftArg = rest[1]
		ft, copyOnly, err = recipes.ParseFileType(ftArg)
		if err != nil {
			return usageError{err}
		}
		rest = rest[2:]
	}
	threads := 0
	if len(rest) > 0 {
		if threads, err = parseThreads(rest[0]); err != nil {
			return usageError{err}
		}
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", rest)}
	}
	q.threads = threads
	if len(q.include) > 0 && len(q.exclude) > 0 {
		return usageError{errors.New("--include-weights and --exclude-weights cannot be used together")}
	}
	if err := q.checkCombinations(); err != nil {
		return usageError{err}
	}

	var optionWarnings []string // what llama-quantize would read otherwise
	if len(q.late) > 0 {
		optionWarnings = append(optionWarnings, fmt.Sprintf("%s after IN.gguf: llama-quantize reads flags only before IN and would ignore them after THREADS (or fail on one in its place); applied here", strings.Join(q.late, " ")))
	}
	sel := recipes.Options{FileType: ft, CopyOnly: copyOnly, Pure: q.pure, LeaveOutputTensor: q.leaveOutput,
		IgnoreImatrixRules: q.ignoreImatrixRules, LikeReference: q.likeReference}
	for _, o := range []struct {
		flag, val string
		dst       **formats.Type
	}{
		{"--output-tensor-type", q.outputType, &sel.Overrides.Output},
		{"--token-embedding-type", q.tokenEmbdType, &sel.Overrides.TokenEmbedding},
		{"--per-layer-token-embedding-type", q.perLayerTokenEmbdType, &sel.Overrides.PerLayerTokenEmbedding},
		{"--ffn-gate-inp-type", q.ffnGateInpType, &sel.Overrides.FFNGateInp},
		{"--attn-q-type", q.attnQ, &sel.Overrides.AttnQ},
		{"--attn-k-type", q.attnK, &sel.Overrides.AttnK},
		{"--attn-v-type", q.attnV, &sel.Overrides.AttnV},
		{"--attn-qkv-type", q.attnQKV, &sel.Overrides.AttnQKV},
		{"--attn-output-type", q.attnOutput, &sel.Overrides.AttnOutput},
		{"--ffn-gate-type", q.ffnGate, &sel.Overrides.FFNGate},
		{"--ffn-up-type", q.ffnUp, &sel.Overrides.FFNUp},
		{"--ffn-down-type", q.ffnDown, &sel.Overrides.FFNDown},
	} {
		if o.val == "" {
			continue
		}
		t, warning, err := recipes.ParseTypeOption(o.flag, o.val)
		if err != nil {
			return usageError{err}
		}
		*o.dst = recipes.TypePtr(t)
		if warning != "" {
			optionWarnings = append(optionWarnings, warning)
		}
	}
	rules, err := q.rules.ruleSet()
	if err != nil {
		return usageUnlessFile(err)
	}
	for _, path := range q.recipes {
		rs, err := recipes.LoadRecipe(path)
		if err != nil {
			return usageUnlessFile(fmt.Errorf("--recipe: %w", err))
		}
		rules.Append(rs)
	}
	if rules.Len() > 0 {
		sel.Rules = rules
	}
	overrides, err := parseOverrides(q.overrideKV)
	if err == nil {
		err = pipeline.CheckOverrides(overrides)
	}
	if err != nil {
		return usageError{err}
	}

	cfg := pipeline.Config{Selection: sel, ImatrixPath: q.imatrix, HideImatrix: q.hideImatrix,
		Overrides: overrides, Output: output, KeepSplit: q.keepSplit, AllowRequantize: q.allowRequantize,
		PartialRequant: q.partialRequant, Resume: q.iterate.resume}
	if q.recordTool {
		// First, so that an --override-kv of the same key still wins.
		cfg.Overrides = append([]pipeline.KV{{Key: "quantize.tool", Value: gguf.StringValue(cli.Version("gquant"))}}, cfg.Overrides...)
	}
	if q.split.set() && q.keepSplit {
		return usageError{errors.New("--keep-split and --split-max-size/--split-max-tensors cannot be used together")}
	}
	if cfg.Split, err = q.split.limits(); err != nil {
		return usageError{err}
	}
	if q.extraOutput != "" {
		t, warning, err := recipes.ParseTypeOption("--extra-output-tensor", q.extraOutput)
		if err != nil {
			return usageError{err}
		}
		cfg.ExtraOutput = &t
		if warning != "" {
			optionWarnings = append(optionWarnings, warning)
		}
	}
	cfg.Kernel = quantize.Options{SymmetricQ40: q.symmetricQ40, SlowIQ2KS: q.slowIQ2KS}
	if cfg.OnlyShards, err = q.shards.selection(q.fs); err != nil {
		return usageError{err}
	}
	loaded := 0 // importance matrix entries before --include/--exclude-weights
	if q.imatrix != "" {
		// An index: the run reads each tensor's data when it gets there,
		// not the whole file (a gigabyte with per-expert data).
		m, n, err := imatrix.OpenIndexFiltered(q.imatrix, q.include, q.exclude)
		if err != nil {
			return err
		}
		defer m.Close()
		loaded = n
		cfg.Imatrix = m
	}
	// A real run prints the reference's lines from here on, as it does
	// before it opens IN: those of the rules and the importance matrix
	// (stdout), then "main: quantizing" unless the file type needs an
	// importance matrix and there is none (the reference stops before it).
	realRun := !q.dryRun && q.verify == nil && !q.repack
	hasImatrix := cfg.Imatrix != nil && cfg.Imatrix.Len() > 0
	refOut := stdout // the reference's printf lines
	if q.jsonOut {
		refOut = stderr // stdout holds the JSON document alone
	}
	if realRun {
		prelude(refOut, sel.Rules, q.imatrix, cfg.Imatrix, loaded)
		if hasImatrix || q.ignoreImatrixRules || !ft.RequiresImatrix() {
			startLine(stderr, input, output, recipes.FileTypeArgName(ftArg), threads)
			q.announced = true
		} else {
			fmt.Fprint(stderr, needsImatrixBanner)
		}
	}

	in, err := gguf.Open(input)
	if err != nil {
		return err
	}
	defer in.Close()
	files := &cli.Files{Force: q.force, MakeDirs: true}
	files.Read(modelPaths(in)...)
	files.Read(q.imatrix)
	files.Read(q.recipes...)
	files.Read(q.rules.files()...)
	files.Read(q.planning.placeFiles...)
	if q.repack {
		return runRepackForm(in, cfg, q.repackPatterns(), q.dryRun, files, stdout, stderr)
	}
	plan, err := pipeline.Build(in, cfg)
	if errors.Is(err, pipeline.ErrShardSelection) {
		// A shard the plan does not have: the command line is wrong.
		return usageError{fmt.Errorf("--only-shards: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	plan.Warnings = append(optionWarnings, plan.Warnings...)
	printNotes := func() {
		for _, n := range plan.Notes {
			fmt.Fprintln(stderr, "note:", cli.Escape(n))
		}
	}
	if q.verify != nil {
		printNotes()
		return q.verify(in, plan)
	}
	if q.dryRun {
		printNotes()
		for _, line := range cli.SummarizeWarnings(warningsOf(plan.Warnings, planNames(plan)), cli.SummaryLimit, q.verbose) {
			fmt.Fprintln(stderr, "warning:", line)
		}
		// What the run's file checks would refuse (an output that is an
		// input, read-only, being written or without the room, an
		// earlier output to --reuse that cannot be read) fails the plan,
		// after it; an existing output is only mentioned.
		addOutputs(files, plan)
		refusal := q.iterate.previewReuse(files)
		if err := files.Preview(stderr); refusal == nil {
			refusal = err
		}
		if err := printQuantizePlan(stdout, in, plan, q, refusal); err != nil {
			return err
		}
		if refusal != nil {
			return fmt.Errorf("the run would stop before any work: %w", refusal)
		}
		return nil
	}
	// A real run: the reference's opening lines, then every warning the
	// plan would show (rules that match more than meant, ...), before any
	// work.
	log := newRunLog(stderr, refOut, in, plan, hasImatrix)
	if q.partialRequant {
		log.skipKept(q.keepSplit)
	}
	if hasImatrix {
		log.haveWeights(cfg.Imatrix.Len())
	}
	log.opening()
	rep, err := q.planning.report(in, plan)
	if err != nil {
		return err
	}
	warnings := warningsOf(rep.Warnings, planNames(plan))
	for _, line := range cli.SummarizeWarnings(warnings, cli.SummaryLimit, q.verbose) {
		fmt.Fprintln(stderr, "warning:", line)
	}
	if err := budgetError(rep); err != nil {
		return err
	}
	iter, err := q.iterate.prepare(in, plan, files, stderr)
	if err != nil {
		return err
	}
	printNotes() // after the kept outputs' bytes were checked (VerifyKept)
	defer iter.close()
	addOutputs(files, plan)
	if err := files.Check(stderr); err != nil {
		return err
	}
	log.begin()
	start := time.Now()
	stop := files.CatchInterrupts("gquant quantize", stderr, cli.DefaultGrace)
	opts := iter.options(pipeline.Options{Threads: threads, Progress: log.event, Inputs: files.Inputs})
	if opts.Notes != nil {
		// Notes of the run (a reused tensor, a resumed file) go above the
		// bar, as the per-tensor lines do.
		opts.Notes = log.note
	}
	err = pipeline.Run(stop.Context(), in, plan.Outputs, opts)
	status, interrupted := stop.Finish()
	log.finish(err == nil && !interrupted)
	if interrupted {
		return exitStatus(status)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	for i, o := range plan.Outputs {
		if o.Elsewhere {
			continue
		}
		if o.Skip {
			fmt.Fprintf(stderr, "gquant quantize: kept %s (exists and matches the plan)\n", o.Path)
			continue
		}
		fmt.Fprintf(stderr, "gquant quantize: wrote %s (%d bytes, %s)\n", o.Path, plan.Sizes[i], humanBytes(plan.Sizes[i]))
	}
	onlyShardsSummary(stderr, cfg.OnlyShards, plan)
	if q.jsonOut {
		return cli.WriteJSON(stdout, newQuantizeDoc(in, plan, q.imatrix, log, append(warnings, log.warnings...), elapsed))
	}
	timing(stdout, elapsed, time.Since(q.started))
	return nil
}

// addOutputs adds the files a run of plan writes, each with the room it
// needs (its sidecar and progress record included) and the sidecar beside
// it; an output the run keeps is not written, but the leftovers of a
// killed earlier write of it go (another part's are not this run's).
func addOutputs(files *cli.Files, plan *pipeline.Plan) {
	for i, o := range plan.Outputs {
		size := plan.Sizes[i] + pipeline.BesideBytes(o)
		switch {
		case o.Replace:
			files.Replace(o.Path, size, pipeline.SidecarPath(o.Path))
		case !o.Skip:
			files.Write(o.Path, size, pipeline.SidecarPath(o.Path))
		case !o.Elsewhere:
			files.KeepAsIs(o.Path, pipeline.SidecarPath(o.Path))
		}
	}
}

// checkCombinations refuses options that would be accepted and then do
// nothing, or that contradict each other.
func (q *quantizeFlags) checkCombinations() error {
	switch {
	case !q.dryRun && q.planning.summary:
		return errors.New("--summary shortens the plan: it needs --dry-run (or use gquant plan)")
	case !q.dryRun && q.shards.list:
		return errors.New("--shards lists the plan's shards: it needs --dry-run (or use gquant plan --shards)")
	case !q.dryRun && q.planning.strict:
		return errors.New("--strict fails a plan with warnings: it needs --dry-run (or use gquant plan)")
	case q.repack && q.jsonOut:
		return errors.New("--json does not describe --repack: use gquant repack --json (the same conversion)")
	case q.imatrix == "" && len(q.include) > 0:
		return errors.New("--include-weights selects entries of the importance matrix: it needs --imatrix")
	case q.imatrix == "" && len(q.exclude) > 0:
		return errors.New("--exclude-weights drops entries of the importance matrix: it needs --imatrix")
	case q.leaveOutput && q.outputType != "":
		return errors.New("--leave-output-tensor keeps output.weight as it is, --output-tensor-type changes its type: give one of them")
	}
	return nil
}

// looksLikePath is true for an argument that names a file rather than a
// file type even though it parses as one (a number-like file name).
func looksLikePath(s string) bool {
	return strings.ContainsAny(s, "/\\.")
}

// parseThreads reads THREADS, a number of threads that llama-quantize's
// std::stoi would take (at most 2^31-1); a negative count, every core for
// the reference, is refused so that the command says what it means.
func parseThreads(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("invalid thread count %s: out of range", s)
	case err != nil:
		return 0, fmt.Errorf("invalid thread count %q", s)
	case n < 0:
		return 0, fmt.Errorf("invalid thread count %s: THREADS is 0 or more (0 or none: every core)", s)
	}
	return int(n), nil
}

// parseOverrides reads --override-kv KEY=TYPE:VALUE as the reference does:
// int is stored as i32 by llama-quantize, float as f32.
func parseOverrides(list []string) ([]pipeline.KV, error) {
	var out []pipeline.KV
	for _, s := range list {
		q := text.Quote(s, 4*text.QuoteMax) // a value of any length
		key, val, ok := strings.Cut(s, "=")
		if !ok || key == "" || len(key) >= 128 {
			return nil, fmt.Errorf("--override-kv %s: want KEY=TYPE:VALUE", q)
		}
		typ, v, ok := strings.Cut(val, ":")
		if !ok {
			return nil, fmt.Errorf("--override-kv %s: want KEY=TYPE:VALUE with TYPE int, float, bool or str", q)
		}
		var gv gguf.Value
		switch typ {
		case "int":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("--override-kv %s: %w", q, err)
			}
			gv = gguf.Int32Value(int32(n))
		case "float":
			f, err := strconv.ParseFloat(v, 32)
			if err != nil {
				return nil, fmt.Errorf("--override-kv %s: %w", q, err)
			}
			gv = gguf.Float32Value(float32(f))
		case "bool":
			if v != "true" && v != "false" {
				return nil, fmt.Errorf("--override-kv %s: bool must be true or false", q)
			}
			gv = gguf.BoolValue(v == "true")
		case "str":
			if len(v) > 127 {
				return nil, fmt.Errorf("--override-kv %s: value longer than 127 bytes", q)
			}
			gv = gguf.StringValue(v)
		default:
			return nil, fmt.Errorf("--override-kv %s: unknown type %q (int, float, bool, str)", q, typ)
		}
		out = append(out, pipeline.KV{Key: key, Value: gv})
	}
	return out, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printFileTypes lists the file types as llama-quantize's usage does (the
// number or the name selects one), each with the type most of its tensors
// get and that type's bits per weight on rows of 4096.
func printFileTypes(w io.Writer) {
	fmt.Fprintln(w, "\nAllowed quantization types (number or name; most tensors get the type shown, the")
	fmt.Fprintln(w, "built-in rules give some others more bits: gquant plan shows each tensor's):")
	for _, ft := range recipes.FileTypes() {
		t, err := ft.DefaultType()
		if err != nil {
			continue
		}
		note := ""
		switch {
		case t != formats.F32 && !quantize.Supported(t):
			note = "  (not written by gquant: no kernel)"
		case ft.NotInReferenceCommandLine():
			note = "  (not in llama-quantize's list; its library writes it)"
		}
		fmt.Fprintf(w, "  %3d  or  %-10s : %-10s %6.3f bpw%s\n", uint32(ft), ft, t, t.BitsPerWeight(4096), note)
	}
	fmt.Fprintf(w, "           %-10s : only copy tensors, no quantizing\n", "COPY")
}
