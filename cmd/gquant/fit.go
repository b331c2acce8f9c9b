package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/fit"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/bytesize"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/planner"
	"github.com/gquant/gquant/recipes"
)

func init() {
	register(&command{
		Name:    "fit",
		Summary: "choose the recipe with the best predicted quality that fits per-device budgets (fit calibrate: fit the quality model to measured KLD)",
		JSON:    true,
		Run:     runFit,
	})
}

// fitFlags are gquant fit's options.
type fitFlags struct {
	fs *pflag.FlagSet

	imatrix, gains, cache, output, types, more string
	include, exclude, customQ, ties, reserves  []string
	place, placeFiles, budgets                 []string
	threads, chunkWeights, maxChunks           int
	jsonOut, quiet, force                      bool
	// cacheExisted: the --cache file was there when the checks ran, so
	// saving replaces it; one that appears later is not replaced.
	cacheExisted bool
	// cacheReadOnly says why the --cache file cannot be replaced (it is
	// read-only, or its directory is), so that the run reads it and saves
	// nothing: a cache shared read-only still spares the measuring it
	// holds. Empty where it can be.
	cacheReadOnly string
	// files are the checked outputs, stop catches Ctrl-C once they are
	// (see catchInterrupts).
	files *cli.Files
	stop  *cli.Interrupt
}

func newFitFlags(stderr io.Writer) *fitFlags {
	f := &fitFlags{fs: pflag.NewFlagSet("fit", pflag.ContinueOnError)}
	fs := f.fs
	fs.StringVar(&f.imatrix, "imatrix", "", "importance matrix `FILE` the quantize run will use (legacy .dat or GGUF)")
	fs.StringArrayVar(&f.include, "include-weights", nil, "use importance data only for tensors containing this string, as quantize will; repeatable")
	fs.StringArrayVar(&f.exclude, "exclude-weights", nil, "drop importance data for tensors containing this string, as quantize will; repeatable")
	fs.StringArrayVar(&f.budgets, "budget", nil, "bytes each device may hold: `DEVICE=SIZE[,...]` (240GiB, 23.5GiB, 500GB)")
	fs.StringArrayVar(&f.place, "place", nil, "put tensors on a device: `REGEX=DEVICE[,...]` as llama.cpp's -ot takes it (first match wins); repeatable")
	fs.StringArrayVar(&f.placeFiles, "place-file", nil, "placement rules from `FILE`, one REGEX=DEVICE per line; after the --place rules")
	fs.StringArrayVar(&f.reserves, "reserve", nil, "memory a device keeps for other things: `DEVICE=SIZE` or DEVICE=kv:CTX:TYPE (KV cache of CTX tokens from the model's own shape; TYPE as -ctk takes it: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, q6_0, q8_KV)[,...]; repeatable")
	fs.StringVar(&f.types, "types", "default", "candidate `TYPES`, comma-separated; 'default' and 'mainline' (types llama.cpp also runs) stand for lists")
	fs.StringArrayVar(&f.customQ, "custom-q", nil, "pinned rules `regex=type,...`: the tensors they match keep that type; they start the recipe; repeatable")
	fs.StringArrayVar(&f.ties, "tie", nil, "give tensors whose names differ only in these fragments one type: `FRAG,FRAG` (ffn_gate_exps,ffn_up_exps); repeatable")
	fs.StringVar(&f.gains, "gains", "", "per-class gains `FILE` (gquant fit calibrate writes one) instead of the built-in table")
	fs.StringVar(&f.cache, "cache", "", "keep measurements in `FILE` so the next fit of this model skips them (a read-only FILE is read, not written)")
	fs.StringVarP(&f.output, "output", "o", "", "write the recipe to `FILE` (default: standard output, the report to standard error)")
	fs.BoolVar(&f.force, "force", false, "replace the -o file if it exists (never an input, never a read-only file)")
	fs.StringVar(&f.more, "more", "1GiB", "the step of the what-more-would-buy report per device")
	fs.IntVar(&f.threads, "threads", 0, "measuring threads (default: all cores)")
	fs.IntVar(&f.chunkWeights, "chunk-weights", fit.DefaultChunkWeights, "weights per measured sample of a tensor")
	fs.IntVar(&f.maxChunks, "max-chunks", fit.DefaultMaxChunks, "samples per tensor at most (more are taken where candidates' errors are close)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the result as one JSON document (schema gquant.fit/1, per tensor: choice, bytes, loss, every candidate; fit calibrate: gquant.fit-calibrate/1) instead of the report; -o still gets the recipe")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on standard error")
	fs.Usage = func() {
		stderr := fs.Output()
		fmt.Fprintln(stderr, "usage: gquant fit [flags] IN.gguf --budget DEVICE=SIZE[,...] [--place REGEX=DEVICE ...] [-o recipe.txt]")
		fmt.Fprintln(stderr, "       gquant fit calibrate [flags] IN.gguf KLD.tsv [-o gains.txt]")
		fmt.Fprintln(stderr, "\nMeasures every candidate type's error on a sample of each tensor (with the real kernels and")
		fmt.Fprintln(stderr, "importance data), predicts quality with per-class gains, and picks per device the types")
		fmt.Fprintln(stderr, "with the least predicted loss that fit the budget after reserves.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
		w := stderr
		cli.PrintExamples(w,
			cli.Example{About: "experts on the CPU, the rest on a 24 GiB GPU that keeps room for a 32k q8_0 KV cache",
				Line: "gquant fit --imatrix imatrix.dat --place exps=CPU --place '.*=GPU' --budget CPU=240GiB,GPU=23.5GiB --reserve GPU=kv:32768:q8_0 --cache fit.cache model-bf16.gguf -o recipe.txt"},
			cli.Example{About: "then quantize with the recipe the fit chose (any file type: the recipe names every tensor)",
				Line: "gquant quantize --imatrix imatrix.dat --recipe recipe.txt model-bf16.gguf out.gguf Q8_0"},
			cli.Example{About: "one machine with 64 GiB, types llama.cpp also runs",
				Line: "gquant fit --imatrix imatrix.dat --budget CPU=64GiB --types mainline model-bf16.gguf -o recipe.txt"},
		)
	}
	return f
}

// The programs that prefix fit's messages.
const (
	fitProgram       = "gquant fit"
	calibrateProgram = "gquant fit calibrate"
)

func runFit(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "calibrate" {
		return runCalibrate(args[1:], stdout, stderr)
	}
	const program = fitProgram
	f := newFitFlags(stderr)
	if status, done := cli.ParseFlags(program, f.fs, args, stdout, stderr); done {
		return status
	}
	err := f.run(args, stdout, stderr)
	if status, interrupted := f.finish(); interrupted {
		return status
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) || errors.Is(err, planner.ErrBadBudget) {
			return cli.UsageError(program, f.fs, stderr, err)
		}
		fmt.Fprintln(stderr, program+":", err)
		return 1
	}
	return 0
}

// loadImatrix reads the importance matrix and filters it as quantize will.
func loadImatrix(path string, include, exclude []string) (*imatrix.Matrix, error) {
	if path == "" {
		return nil, nil
	}
	if len(include) > 0 && len(exclude) > 0 {
		return nil, usageError{errors.New("--include-weights and --exclude-weights cannot be used together")}
	}
	m, err := imatrix.Open(path)
	if err != nil {
		return nil, err
	}
	m.Filter(include, exclude)
	return m, nil
}

// measureOptions are the measuring flags, with a progress line on a
// terminal. The line moves the cursor, so it goes to the terminal itself,
// under the escaping writer (which would print its control characters).
func (f *fitFlags) measureOptions(stderr io.Writer) (fit.MeasureOptions, func()) {
	mo := fit.MeasureOptions{Threads: f.threads, ChunkWeights: f.chunkWeights, MaxChunks: f.maxChunks}
	done := func() {}
	if raw := cli.Raw(stderr); !f.quiet && isTerminal(raw) {
		stderr := raw
		last := time.Time{}
		mo.Progress = func(d, n int) {
			if now := time.Now(); now.Sub(last) > 200*time.Millisecond || d == n {
				last = now
				fmt.Fprintf(stderr, "\rmeasuring: %d/%d", d, n)
			}
		}
		done = func() { fmt.Fprint(stderr, "\r\033[K") }
	}
	if hook := measuredHook; hook != nil {
		progress := mo.Progress
		mo.Progress = func(d, n int) {
			if progress != nil {
				progress(d, n)
			}
			hook(d, n)
		}
	}
	return mo, done
}

// measuredHook, when set (by tests), is called after each measurement
// as Progress is: where a Ctrl-C comes mid-measure.
var measuredHook func(done, total int)

// checkNumbers refuses measuring options that can mean nothing: a zero or
// negative sample size or count, negative threads (0 is every core).
func (f *fitFlags) checkNumbers() error {
	switch {
	case f.threads < 0:
		return usageError{fmt.Errorf("--threads %d: give 1 or more, or 0 for every core", f.threads)}
	case f.chunkWeights <= 0:
		return usageError{fmt.Errorf("--chunk-weights %d: give 1 or more", f.chunkWeights)}
	case f.maxChunks <= 0:
		return usageError{fmt.Errorf("--max-chunks %d: give 1 or more", f.maxChunks)}
	}
	return nil
}

// checkFiles checks what a fit or calibrate run reads and writes before any
// measuring, as every gquant command does (cli.Files): -o is none of the
// inputs and not the cache, an existing one needs --force, a read-only one
// is never replaced. The cache is read and then replaced without --force;
// a read-only one (or one in a directory this process may not write) is
// only read, never replaced, which a note says before the measuring
// (a team's cache kept read-only still spares the work it holds).
// Missing directories of both are made here, as quantize makes its
// outputs'.
func (f *fitFlags) checkFiles(in *gguf.Model, inputs []string, stderr io.Writer) error {
	files := &cli.Files{Force: f.force, MakeDirs: true}
	files.Read(modelPaths(in)...)
	files.Read(f.imatrix, f.gains)
	files.Read(f.placeFiles...)
	files.Read(inputs...)
	if f.output != "" {
		files.Write(f.output, -1)
		files.NameFlag(f.output, "-o")
	}
	if f.cache != "" {
		f.cacheReadOnly = cli.ReadOnlyFile(f.cache)
	}
	switch {
	case f.cacheReadOnly != "":
		files.Read(f.cache)
	case f.cache != "":
		files.Replace(f.cache, -1)
		files.NameFlag(f.cache, "--cache")
	}
	if err := files.Check(stderr); err != nil {
		return err
	}
	if f.cacheReadOnly != "" {
		fmt.Fprintf(stderr, "note: --cache %s is %s: this run reads it and saves nothing to it\n", f.cache, f.cacheReadOnly)
	}
	f.cacheExisted = f.cache != "" && f.cacheReadOnly == "" && files.Existed(f.cache)
	f.files = files
	return files.MakeOutputDirs()
}

// catchInterrupts catches Ctrl-C (and SIGTERM, SIGHUP, SIGPIPE) for the
// measuring, once the outputs are checked: the first signal stops it, the
// run returns and saves the cache with what was measured (minutes of work
// the next try need not redo), and finish reports the interrupt. Left to
// the runtime, the signal killed the process and every measurement with
// it.
func (f *fitFlags) catchInterrupts(program string, mo *fit.MeasureOptions, stderr io.Writer) {
	f.stop = f.files.CatchInterrupts(program, stderr, cli.DefaultGrace)
	mo.Context = f.stop.Context()
}

// finish stops catching signals; after one it says what was left
// unwritten and gives the exit status for it, and the run's error (the
// stopped measuring) is not printed.
func (f *fitFlags) finish() (status int, interrupted bool) {
	if f.stop == nil {
		return 0, false
	}
	return f.stop.Finish()
}

// writeFile writes what write gives to path through cli.WriteFile (a
// temporary file renamed into place, so that a failed write leaves an
// earlier file whole; a file at path replaced only with replace).
func writeFile(path string, replace bool, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return cli.WriteFile(path, b.Bytes(), replace)
}

// beforeCacheSave, when set (by tests), runs just before saveCache reads
// the cache file again: where another run would have saved it.
// whileCacheLocked runs once saveCache holds the lock, before it looks at
// the file: where another run's save would come between the look and the
// rename.
var beforeCacheSave, whileCacheLocked func()

// saveCache writes the cache back when the run measured anything new. It
// runs after the run's results are out (or after it failed), and a cache
// it cannot save is a warning: the new measurements are lost, not the
// run's results. The file is read again first, so that what another run
// saved there since this one read it (or made it, when it did not exist
// yet) is merged rather than lost; a file there that is no cache is left
// alone. No temporary file is left.
//
// The read, merge and rename hold a lock on the cache's directory, so
// that two fits saving one cache at once take turns: the second merges
// what the first saved. Without it, a save landing between the other's
// read and rename was lost (replaced), or made the other's rename fail
// ("file exists", where neither found a cache) and its measurements with
// it.
func (f *fitFlags) saveCache(cache *fit.Cache, stderr io.Writer) {
	if cache == nil || cache.Added() == 0 {
		return
	}
	if f.cacheReadOnly != "" {
		fmt.Fprintf(stderr, "warning: --cache %s is %s, so this run's %d new measurements are not kept\n", f.cache, f.cacheReadOnly, cache.Added())
		return
	}
	if beforeCacheSave != nil {
		beforeCacheSave()
	}
	dir := filepath.Dir(f.cache)
	defer lockDir(dir, func() {
		fmt.Fprintf(stderr, "note: --cache %s: waiting for another run saving a cache in %s to finish (it holds a lock on the directory)\n", f.cache, dir)
	})()
	if whileCacheLocked != nil {
		whileCacheLocked()
	}
	warn := func(err error) {
		fmt.Fprintf(stderr, "warning: --cache %s not saved, so this run's %d new measurements are not kept: %v\n", f.cache, cache.Added(), err)
	}
	replace := f.force || f.cacheExisted
	if _, err := os.Lstat(f.cache); err == nil {
		now, err := fit.LoadCache(f.cache)
		if err != nil {
			warn(err)
			return
		}
		cache.Merge(now)
		replace = true
	}
	err := writeFile(f.cache, replace, func(w io.Writer) error {
		_, err := cache.WriteTo(w)
		return err
	})
	var ce *gguf.CommitError
	if errors.As(err, &ce) {
		for _, s := range ce.Kept {
			os.Remove(s.Temp)
		}
		err = fmt.Errorf("%s: %w", f.cache, ce.Err)
	}
	if err != nil {
		warn(err)
	}
}

// cacheOf opens the --cache file (nil without the flag).
func (f *fitFlags) cacheOf() (*fit.Cache, error) {
	if f.cache == "" {
		return nil, nil
	}
	c, err := fit.LoadCache(f.cache)
	if err != nil {
		return nil, fmt.Errorf("--cache: %w", err) // the library's error names the file, not the flag
	}
	return c, nil
}

func (f *fitFlags) run(args []string, stdout, stderr io.Writer) error {
	pos := f.fs.Args()
	if len(pos) != 1 {
		return usageError{errors.New("need exactly one input model")}
	}
	start := time.Now()
	in, err := gguf.Open(pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	opts := fit.Options{}
	if opts.Imatrix, err = loadImatrix(f.imatrix, f.include, f.exclude); err != nil {
		return err
	}
	opts.ImatrixPath = f.imatrix
	if len(f.place) > 0 || len(f.placeFiles) > 0 {
		pl := &planner.Placement{}
		for _, v := range f.place {
			if err := pl.AddFlag(v); err != nil {
				return usageError{err}
			}
		}
		for _, p := range f.placeFiles {
			if err := pl.AddFile(p); err != nil {
				return usageUnlessFile(fmt.Errorf("--place-file: %w", err))
			}
		}
		opts.Placement = pl
	}
	for _, v := range f.budgets {
		bs, err := planner.ParseBudgets(v)
		if err != nil {
			return usageError{fmt.Errorf("--budget: %w", err)}
		}
		opts.Budgets = append(opts.Budgets, bs...)
	}
	for _, v := range f.reserves {
		rs, err := fit.ParseReserves(v, in.Metadata)
		if err != nil {
			return usageError{fmt.Errorf("--reserve: %w", err)}
		}
		opts.Reserves = append(opts.Reserves, rs...)
	}
	if opts.Types, err = fit.ParseTypes(f.types); err != nil {
		return usageError{err}
	}
	if len(f.customQ) > 0 {
		opts.Pins = &recipes.RuleSet{}
		for _, c := range f.customQ {
			rs, err := recipes.ParseCustomQ(c)
			if err != nil {
				return usageError{err}
			}
			opts.Pins.Append(rs)
		}
	}
	for _, t := range f.ties {
		frags := strings.Split(t, ",")
		if len(frags) < 2 {
			return usageError{fmt.Errorf("--tie %q: give two or more name fragments, like ffn_gate_exps,ffn_up_exps", t)}
		}
		// An empty or repeated fragment ties nothing to anything: it was
		// only warned of as a --tie that ties nothing (or not at all,
		// beside fragments that tie), after the measuring.
		for k, fr := range frags {
			if fr == "" {
				return usageError{fmt.Errorf("--tie %q: fragment %d is empty", t, k+1)}
			}
			if slices.Contains(frags[:k], fr) {
				return usageError{fmt.Errorf("--tie %q: fragment %q is given twice", t, fr)}
			}
		}
		opts.Ties = append(opts.Ties, frags)
	}
	if f.gains != "" {
		g, err := fit.LoadGains(f.gains)
		if err != nil {
			return fmt.Errorf("--gains: %w", err) // the library's error names the file, not the flag
		}
		opts.Gains = &g
	}
	if opts.MoreBytes, err = bytesize.Parse(f.more); err != nil {
		return usageError{fmt.Errorf("--more: %w", err)}
	}
	if err := f.checkNumbers(); err != nil {
		return err
	}
	if opts.MoreBytes <= 0 {
		return usageError{fmt.Errorf("--more %s: give a size above zero", f.more)}
	}
	if err := f.checkFiles(in, nil, stderr); err != nil {
		return err
	}
	cache, err := f.cacheOf()
	if err != nil {
		return err
	}
	var done func()
	opts.Measure, done = f.measureOptions(stderr)
	opts.Measure.Cache = cache
	f.catchInterrupts(fitProgram, &opts.Measure, stderr)
	// Saved on the way out: after the recipe and the report, and also when
	// the fit fails after measuring (no recipe fits the budgets, a pin whose
	// type gives no finite weights) or writing the recipe fails: the
	// measurements made are minutes of work the next try need not redo.
	defer f.saveCache(cache, stderr)
	// Warnings the checks find before the measuring are printed at once
	// (a --tie that ties nothing should not wait for minutes of work);
	// the report then prints only the later ones. --json keeps them all
	// in its document.
	early := 0
	if !f.jsonOut {
		opts.Warn = func(w string) {
			fmt.Fprintln(stderr, "warning:", w)
			early++
		}
	}
	res, err := fit.Fit(in, opts)
	done()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	command := "gquant fit " + cli.ShellJoin(args)
	writeRecipe := func(w io.Writer) error { return res.WriteRecipe(w, command) }
	report := stdout
	switch {
	case f.output != "":
		if err := writeFile(f.output, f.force, writeRecipe); err != nil {
			return err
		}
	case !f.jsonOut:
		report = stderr
		if err := writeRecipe(stdout); err != nil {
			return err
		}
	}
	if f.jsonOut {
		return cli.WriteJSON(stdout, fitDoc{Schema: "gquant.fit/1", Result: res, Warnings: warningsOf(res.Warnings, nil)})
	}
	printFitReport(report, res, elapsed, res.Warnings[early:])
	return nil
}

// printFitReport prints per device the budget, use and predicted loss, and
// what more bytes would buy, then warnings.
func printFitReport(w io.Writer, res *fit.Result, elapsed time.Duration, warnings []string) {
	fmt.Fprintf(w, "predicted KL divergence %.4g; file %s; %d rules; measured %d samples (%d from the cache) in %s\n",
		res.KLD, humanBytes(res.FileSize), len(res.Rules), res.Measured.Measured+res.Measured.Cached, res.Measured.Cached, elapsed.Round(time.Millisecond))
	for _, d := range res.Devices {
		if d.BudgetText == "" {
			fmt.Fprintf(w, "  %-8s %s, no budget (every tensor at its best type)\n", d.Device, humanBytes(d.Bytes))
			continue
		}
		fmt.Fprintf(w, "  %-8s %s of %s for weights (%.2f %%; budget %s", d.Device, humanBytes(d.Bytes), humanBytes(d.Available), 100*d.Use, d.BudgetText)
		for _, r := range d.Reserves {
			fmt.Fprintf(w, ", reserve %s %s", r.Text, humanBytes(r.Bytes))
			if r.Why != "" {
				fmt.Fprintf(w, " [%s]", r.Why)
			}
		}
		fmt.Fprintf(w, "), loss %.4g\n", d.Loss)
		if m := d.More; m != nil {
			if !m.Binding {
				fmt.Fprintf(w, "           %s more would change nothing\n", humanBytes(m.Bytes))
				continue
			}
			fmt.Fprintf(w, "           %s more: KL divergence %.4g, by", humanBytes(m.Bytes), m.KLD)
			for i, c := range m.Changes {
				if i == 4 {
					fmt.Fprintf(w, " and %d more", len(m.Changes)-4)
					break
				}
				fmt.Fprintf(w, " %s %s->%s", c.Name, c.From, c.To)
			}
			fmt.Fprintln(w)
		}
	}
	for _, wn := range warnings {
		fmt.Fprintln(w, "warning:", wn)
	}
}

// calibrateFlags are the options of gquant fit that fit calibrate uses.
var calibrateFlags = map[string]bool{"imatrix": true, "include-weights": true, "exclude-weights": true, "gains": true, "cache": true,
	"output": true, "force": true, "threads": true, "chunk-weights": true, "max-chunks": true, "json": true, "quiet": true}

// runCalibrate is `gquant fit calibrate`: fit the gains to a table of
// measured KL divergences.
func runCalibrate(args []string, stdout, stderr io.Writer) int {
	f := newFitFlags(stderr)
	f.fs.Usage = func() {
		stderr := f.fs.Output()
		fmt.Fprintln(stderr, "usage: gquant fit calibrate [flags] IN.gguf KLD.tsv [-o gains.txt]")
		fmt.Fprintln(stderr, "\nKLD.tsv has a header and tab-separated mix, rules, bytes, kld_mean, kld_err per quant")
		fmt.Fprintln(stderr, "(as ../shared/models/medium/kld.tsv): mixes named filetype:X, X+NAME (file type X with the")
		fmt.Fprintln(stderr, "--custom-q rules), or with rules ending in \"(file type X)\". Measures what the mixes need and")
		fmt.Fprintln(stderr, "fits the gains so that the predicted loss matches the measured divergences.")
		fmt.Fprintln(stderr, "\nflags (of gquant fit, these apply):")
		fmt.Fprintln(stderr, "  --imatrix, --include-weights, --exclude-weights, --gains (start), --cache, -o, --force, --threads,")
		fmt.Fprintln(stderr, "  --chunk-weights, --max-chunks, --json, --quiet")
		cli.PrintExamples(stderr,
			cli.Example{About: "fit the quality model to the divergences llama-perplexity measured for some quants of this model",
				Line: "gquant fit calibrate --imatrix imatrix.dat --cache fit.cache model-bf16.gguf kld.tsv -o gains.txt"},
			cli.Example{About: "then fit with those gains",
				Line: "gquant fit --gains gains.txt --imatrix imatrix.dat --budget CPU=64GiB --cache fit.cache model-bf16.gguf -o recipe.txt"},
		)
	}
	const program = calibrateProgram
	if status, done := cli.ParseFlags(program, f.fs, args, stdout, stderr); done {
		return status
	}
	var unused []string // fit's options that calibrate would ignore
	f.fs.Visit(func(fl *pflag.Flag) {
		if !calibrateFlags[fl.Name] {
			unused = append(unused, "--"+fl.Name)
		}
	})
	if len(unused) > 0 {
		return cli.UsageError(program, f.fs, stderr, fmt.Errorf("%s: not an option of fit calibrate", strings.Join(unused, ", ")))
	}
	err := f.calibrate(stdout, stderr)
	if status, interrupted := f.finish(); interrupted {
		return status
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return cli.UsageError(program, f.fs, stderr, err)
		}
		fmt.Fprintln(stderr, program+":", err)
		return 1
	}
	return 0
}

func (f *fitFlags) calibrate(stdout, stderr io.Writer) error {
	pos := f.fs.Args()
	if len(pos) != 2 {
		return usageError{errors.New("need the model and the KLD table")}
	}
	in, err := gguf.Open(pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	rows, err := fit.LoadKLD(pos[1])
	if err != nil {
		return err
	}
	im, err := loadImatrix(f.imatrix, f.include, f.exclude)
	if err != nil {
		return err
	}
	start := fit.DefaultGains()
	if f.gains != "" {
		if start, err = fit.LoadGains(f.gains); err != nil {
			return fmt.Errorf("--gains: %w", err)
		}
	}
	if err := f.checkNumbers(); err != nil {
		return err
	}
	if err := f.checkFiles(in, pos[1:], stderr); err != nil {
		return err
	}
	cache, err := f.cacheOf()
	if err != nil {
		return err
	}
	mo, done := f.measureOptions(stderr)
	mo.Cache = cache
	f.catchInterrupts(calibrateProgram, &mo, stderr)
	// Saved on the way out: after the gains and the report, and also when
	// calibrating fails after measuring or writing the gains fails (see run).
	defer f.saveCache(cache, stderr)
	cal, _, err := fit.Calibrate(in, im, rows, mo, start)
	done()
	if err != nil {
		return err
	}
	comment := fmt.Sprintf("gains fitted by gquant fit calibrate to %s (%d quants of %s)\nlog-RMS error %.4g; %d of %d pairs ordered otherwise than measured",
		pos[1], len(rows), pos[0], cal.RMSLog, cal.Discordant, cal.Pairs)
	writeGains := func(w io.Writer) error { return fit.WriteGains(w, cal.Gains, comment) }
	report := stdout
	switch {
	case f.output != "":
		if err := writeFile(f.output, f.force, writeGains); err != nil {
			return err
		}
	case !f.jsonOut:
		report = stderr
		if err := writeGains(stdout); err != nil {
			return err
		}
	}
	for _, w := range cal.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if f.jsonOut {
		return cli.WriteJSON(stdout, newCalibrateDoc(cal))
	}
	fmt.Fprintf(report, "%-28s %12s %10s %10s %7s\n", "mix", "bytes", "kld", "predicted", "ratio")
	for _, r := range cal.Rows {
		// %g: a divergence of 1e-300 or 1e300 (refused by no check) stays
		// one short number.
		fmt.Fprintf(report, "%-28s %12d %10.5g %10.5g %7.4g\n", r.Mix, r.Bytes, r.KLD, r.Predicted, r.Predicted/r.KLD)
	}
	fmt.Fprintf(report, "log-RMS error %.4g; %d of %d pairs ordered otherwise than measured (%d of them by more than 2 standard errors)\n",
		cal.RMSLog, cal.Discordant, cal.Pairs, cal.Resolved)
	return nil
}

// fitDoc is the JSON of gquant fit (schema gquant.fit/1): the result, with
// its warnings as objects.
type fitDoc struct {
	Schema string `json:"schema"`
	*fit.Result
	Warnings []cli.Warning `json:"warnings"`
}

// calibrateDoc is the JSON of gquant fit calibrate (schema
// gquant.fit-calibrate/1).
type calibrateDoc struct {
	Schema string       `json:"schema"`
	Gains  fit.Gains    `json:"gains"`
	Rows   []calibrated `json:"rows"`
	// RMSLog is the root mean square of log(predicted / measured);
	// Discordant of Pairs pairs of rows are ordered otherwise than
	// measured, Resolved of them by more than two standard errors.
	RMSLog     float64       `json:"rms_log"`
	Discordant int           `json:"discordant_pairs"`
	Resolved   int           `json:"resolved_pairs"`
	Pairs      int           `json:"pairs"`
	Warnings   []cli.Warning `json:"warnings"`
}

// calibrated is one row of the KLD table with its prediction.
type calibrated struct {
	Mix       string  `json:"mix"`
	Rules     string  `json:"rules"`
	FileType  string  `json:"file_type"`
	Bytes     int64   `json:"bytes"`
	KLD       float64 `json:"kld"`
	KLDErr    float64 `json:"kld_err"`
	Predicted float64 `json:"predicted"`
}

func newCalibrateDoc(cal *fit.Calibration) calibrateDoc {
	d := calibrateDoc{Schema: "gquant.fit-calibrate/1", Gains: cal.Gains, Rows: []calibrated{}, RMSLog: cal.RMSLog,
		Discordant: cal.Discordant, Resolved: cal.Resolved, Pairs: cal.Pairs, Warnings: warningsOf(cal.Warnings, nil)}
	for _, r := range cal.Rows {
		d.Rows = append(d.Rows, calibrated{Mix: r.Mix, Rules: r.Rules, FileType: r.FileType.String(),
			Bytes: r.Bytes, KLD: r.KLD, KLDErr: r.Err, Predicted: r.Predicted})
	}
	return d
}
