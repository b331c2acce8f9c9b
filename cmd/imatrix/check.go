package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/recipes"
)

func init() {
	register(&command{
		Name:    "check",
		Summary: "check an importance matrix against a model and a quantize plan before any work",
		JSON:    true,
		Run:     runCheck,
	})
}

type checkFlags struct {
	model              string
	customQ, recipes   []string
	pure, leaveOutput  bool
	ignoreImatrixRules bool
	strict, verbose    bool
	asJSON             bool
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", "check --model MODEL.gguf FILE [--recipe R | --custom-q RULES] [TYPE]",
		"Checks an importance matrix against a model before quantizing: the tensors without\n"+
			"data, entries whose size does not fit, experts and heads without data, and the\n"+
			"tensors whose chosen type the quantizer refuses without data. Types are chosen as\n"+
			"'gquant quantize' chooses them for TYPE (default: the model's own file type if it\n"+
			"is quantized, else Q4_K_M) with the given rules. Exit status 1 when the quantize\n"+
			"would fail (with --strict also on warnings).",
		stderr,
		cli.Example{About: "before a long run: does the imatrix cover what IQ2_K_R4 needs on this model?",
			Line: "imatrix check --model model-bf16.gguf imatrix.dat IQ2_K_R4"},
		cli.Example{About: "with the recipe the run will use; exit 1 on warnings too, for CI",
			Line: "imatrix check --strict --model model-bf16.gguf --recipe recipe.txt imatrix.dat"},
	)
	var c checkFlags
	fs.StringVar(&c.model, "model", "", "the model `GGUF` to be quantized (required; any shard of a split model)")
	fs.StringArrayVar(&c.customQ, "custom-q", nil, "per-tensor rules `regex=type,...` as for quantize; repeatable")
	fs.StringArrayVar(&c.recipes, "recipe", nil, "recipe `FILE` as for quantize; repeatable")
	fs.BoolVar(&c.pure, "pure", false, "plan as quantize --pure")
	fs.BoolVar(&c.leaveOutput, "leave-output-tensor", false, "plan as quantize --leave-output-tensor")
	fs.BoolVar(&c.ignoreImatrixRules, "ignore-imatrix-rules", false, "plan as quantize --ignore-imatrix-rules")
	fs.BoolVar(&c.strict, "strict", false, "exit status 1 on warnings too")
	fs.BoolVarP(&c.verbose, "verbose", "v", false, "also list harmless findings (borrowed data, unused entries), and each finding of a kind that has many (else one line stands for them)")
	fs.BoolVar(&c.asJSON, "json", false, "print the findings as JSON (schema gquant.imatrix-check/1)")
	if status, done := parseFlags(fs, args, stdout, stderr); done {
		return status
	}
	if c.model == "" {
		return badArgs(fs, stderr, "--model MODEL.gguf is required: the check is against a model")
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return badArgs(fs, stderr, "want FILE [TYPE], got %d argument(s)", fs.NArg())
	}
	typ := ""
	if fs.NArg() == 2 {
		typ = fs.Arg(1)
	}
	return finish("check", c.run(fs.Arg(0), typ, stdout), stderr)
}

// checkResult is check's JSON output. Errors and Warnings hold the
// findings of that severity in the shape every command's warnings have;
// Findings holds every finding with all its fields (info included).
type checkResult struct {
	Schema   string        `json:"schema"`
	Imatrix  string        `json:"imatrix"`
	Model    string        `json:"model"`
	FileType string        `json:"file_type"`
	Tensors  int           `json:"tensors_quantized"`
	WithData int           `json:"tensors_with_data"`
	Failed   bool          `json:"failed"` // the quantize would stop
	Errors   []cli.Warning `json:"errors"`
	Warnings []cli.Warning `json:"warnings"`
	Findings []jsonFinding `json:"findings"`
}

// jsonFinding adds the planned type's name to a finding.
type jsonFinding struct {
	imatrix.Finding
	Type string `json:"type,omitempty"`
}

func (c *checkFlags) run(path, typ string, stdout io.Writer) error {
	m, err := imatrix.Open(path)
	if err != nil {
		return err
	}
	model, err := gguf.Open(c.model)
	if err != nil {
		return err
	}
	defer model.Close()
	ft, why, err := c.fileType(model, typ)
	if err != nil {
		return err
	}
	plan, err := c.plan(model, ft, len(m.Entries) > 0)
	if err != nil {
		return err
	}
	rep := imatrix.Check(m, plan)
	if c.asJSON {
		res := checkResult{Schema: cli.Schema(1, "imatrix", "check"), Imatrix: path, Model: c.model, FileType: ft.String(),
			Tensors: rep.Tensors, WithData: rep.WithData, Failed: rep.Failed(), Errors: []cli.Warning{}, Warnings: []cli.Warning{},
			Findings: []jsonFinding{}}
		for _, f := range rep.Findings {
			jf := jsonFinding{Finding: f}
			if f.Tensor != "" {
				jf.Type = f.Type.String()
			}
			res.Findings = append(res.Findings, jf)
			switch f.Severity {
			case imatrix.Error:
				res.Errors = append(res.Errors, findingWarning(f))
			case imatrix.Warning:
				res.Warnings = append(res.Warnings, findingWarning(f))
			}
		}
		if err := cli.WriteJSON(stdout, res); err != nil {
			return err
		}
	} else {
		c.print(stdout, path, m, ft, why, rep)
	}
	if rep.Failed() || c.strict && rep.Count(imatrix.Warning) > 0 {
		return errCheckFailed
	}
	return nil
}

// fileType decides the file type to plan for and says why.
func (c *checkFlags) fileType(model *gguf.Model, typ string) (recipes.FileType, string, error) {
	if typ != "" {
		ft, copyOnly, err := recipes.ParseFileType(typ)
		if err != nil {
			return 0, "", usageError{err}
		}
		if copyOnly {
			return 0, "", usageError{fmt.Errorf("COPY quantizes nothing: there is nothing to check")}
		}
		return ft, "as given", nil
	}
	v, ok, err := model.Metadata.LookupUint("general.file_type")
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", c.model, err)
	}
	if ok {
		ft := recipes.FileType(v) &^ recipes.FileTypeGuessed
		if t, err := ft.DefaultType(); err == nil && t.IsQuantized() {
			return ft, "the model's file type", nil
		}
	}
	return recipes.FileTypeQ4_K_M, "default: give TYPE to check another", nil
}

// plan decides every tensor's type the way quantize would.
func (c *checkFlags) plan(model *gguf.Model, ft recipes.FileType, haveData bool) ([]imatrix.PlannedTensor, error) {
	sel := recipes.Options{FileType: ft, Pure: c.pure, LeaveOutputTensor: c.leaveOutput,
		IgnoreImatrixRules: c.ignoreImatrixRules, HasImatrix: haveData}
	rules := &recipes.RuleSet{}
	for _, q := range c.customQ {
		rs, err := recipes.ParseCustomQ(q)
		if err != nil {
			return nil, usageError{fmt.Errorf("--custom-q: %w", err)}
		}
		rules.Append(rs)
	}
	for _, p := range c.recipes {
		rs, err := recipes.LoadRecipe(p)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err // a recipe that cannot be read is no wrong command line (exit 1, as gquant's)
		}
		if err != nil {
			return nil, usageError{err}
		}
		rules.Append(rs)
	}
	if rules.Len() > 0 {
		sel.Rules = rules
	}
	params, err := recipes.ModelParams(model.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.model, err)
	}
	rp, err := recipes.Select(sel, params, model.Infos())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.model, err)
	}
	out := make([]imatrix.PlannedTensor, len(rp.Choices))
	for i, ch := range rp.Choices {
		out[i] = imatrix.PlannedTensor{Name: ch.Name, Shape: ch.Shape, Type: ch.Type, Quantize: ch.Quantize,
			NeedsImatrix: ch.NeedsImatrix && !c.ignoreImatrixRules}
	}
	return out, nil
}

func (c *checkFlags) print(w io.Writer, path string, m *imatrix.Matrix, ft recipes.FileType, why string, rep *imatrix.CheckReport) {
	fmt.Fprintln(w, describe(path, m))
	fmt.Fprintf(w, "model %s, planned as %s (%s)\n", c.model, ft, why)
	fmt.Fprintf(w, "%d tensors quantized, %d with importance data\n\n", rep.Tensors, rep.WithData)
	// Each finding is one line; on a large model a kind with many
	// findings (an expert without data in each of 60 layers) is one line
	// unless --verbose.
	var lines []cli.Warning
	for _, f := range rep.Findings {
		if f.Severity == imatrix.Info && !c.verbose && f.Kind != imatrix.KindMLA && f.Kind != imatrix.KindNotNeeded {
			continue
		}
		lines = append(lines, cli.Warning{Kind: f.Kind, Message: f.String()})
	}
	for _, l := range cli.SummarizeWarnings(lines, cli.SummaryLimit, c.verbose) {
		fmt.Fprintln(w, cli.EscapeInline(l)) // a name with a newline must not make a line of its own
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
	}
	nerr, nwarn := rep.Count(imatrix.Error), rep.Count(imatrix.Warning)
	switch {
	case nerr > 0:
		fmt.Fprintf(w, "FAIL: the quantize would stop: %d error(s), %d warning(s)\n", nerr, nwarn)
	case nwarn > 0 && c.strict:
		// The run would go on, but --strict makes the check fail: say
		// that the status comes from the option.
		fmt.Fprintf(w, "FAIL (--strict): %d warning(s); the quantize runs, the tensors above get less or no weighting\n", nwarn)
	case nwarn > 0:
		fmt.Fprintf(w, "ok with %d warning(s): the quantize runs, the tensors above get less or no weighting\n", nwarn)
	default:
		fmt.Fprintln(w, "ok: every quantized tensor that can use importance data has it")
	}
}

// findingWarning is a finding in the JSON warning shape: the model tensor
// it is about, or for an unused entry the entry's name.
func findingWarning(f imatrix.Finding) cli.Warning {
	name := f.Tensor
	if name == "" {
		name = f.Entry
	}
	return cli.Warning{Kind: f.Kind, Tensor: name, Message: f.Message}
}
