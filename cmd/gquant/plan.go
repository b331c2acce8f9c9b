package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/planner"
)

// planFlags are the planner's own options, taken by `gquant plan` and
// `gquant quantize` (where they act with --dry-run, and a budget is also
// checked before a real run starts).
//
// Split limits are quantize's own (--split-max-size, --split-max-tensors):
// the pipeline lays out the shards, so the plan's files are the shards.
type planFlags struct {
	place, placeFiles, budgets []string
	summary, strict            bool
}

func (p *planFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&p.place, "place", nil, "put tensors on a device: `REGEX=DEVICE[,...]` as llama.cpp's -ot takes it (searched in the name, first match wins); repeatable")
	fs.StringArrayVar(&p.placeFiles, "place-file", nil, "placement rules from `FILE`, one REGEX=DEVICE per line, # comments; after the --place rules")
	fs.StringArrayVar(&p.budgets, "budget", nil, "bytes each device may hold: `DEVICE=SIZE[,...]` (240GiB, 23.5GiB, 500GB; B, KB..TB, KiB..TiB); checked against --place")
	fs.BoolVar(&p.summary, "summary", false, "with --dry-run: leave out the per-tensor table")
	fs.BoolVar(&p.strict, "strict", false, "with --dry-run: exit status 1 when the plan has any warning (a rule that matches nothing or more than meant, ...), for CI")
}

// options turns the flags into planner options; errors are usage errors,
// but for a --place-file that cannot be read (usageUnlessFile).
func (p *planFlags) options() (planner.Options, error) {
	var opts planner.Options
	if len(p.place) > 0 || len(p.placeFiles) > 0 {
		pl := &planner.Placement{}
		for _, v := range p.place {
			if err := pl.AddFlag(v); err != nil {
				return opts, usageError{err}
			}
		}
		for _, f := range p.placeFiles {
			if err := pl.AddFile(f); err != nil {
				return opts, usageUnlessFile(fmt.Errorf("--place-file: %w", err))
			}
		}
		opts.Placement = pl
	}
	for _, v := range p.budgets {
		bs, err := planner.ParseBudgets(v)
		if err != nil {
			return opts, usageError{fmt.Errorf("--budget: %w", err)}
		}
		opts.Budgets = append(opts.Budgets, bs...)
	}
	return opts, nil
}

// errOverBudget is returned after the plan is printed when a device does
// not fit its budget.
var errOverBudget = errors.New("the plan does not fit the budget")

// errStrict is returned after the plan is printed when --strict is given
// and the plan has warnings.
var errStrict = errors.New("--strict")

// printQuantizePlan prints what a quantize run will do (per tensor the
// chosen type and why, per file the exact size, per rule and device what it
// gets) and fails with errOverBudget if a device is over its budget.
func printQuantizePlan(w io.Writer, in *gguf.Model, plan *pipeline.Plan, q *quantizeFlags, refused error) error {
	opts, err := q.planning.options()
	if err != nil {
		return err
	}
	rep, err := planner.New(in, plan, opts)
	if err != nil {
		return usageError{err}
	}
	switch {
	case q.jsonOut:
		doc := newPlanDoc(rep, plan)
		if refused != nil {
			doc.Refused = refused.Error()
		}
		if q.shards.list {
			l := newShardList(in, plan, q.shards.parts, q.threads)
			doc.shardList = &l
		}
		if err := cli.WriteJSON(w, doc); err != nil {
			return err
		}
	case q.shards.list:
		if err := newShardList(in, plan, q.shards.parts, q.threads).writeText(w, q.planning.summary); err != nil {
			return err
		}
	default:
		if err := rep.WriteText(w, planner.TextOptions{Tensors: !q.planning.summary, SkipWarnings: len(plan.Warnings)}); err != nil {
			return err
		}
	}
	if err := budgetError(rep); err != nil {
		return err
	}
	if q.planning.strict && len(rep.Warnings) > 0 {
		return fmt.Errorf("%w: the plan has %d warning(s)", errStrict, len(rep.Warnings))
	}
	return nil
}

// planDoc is the JSON of a plan (gquant plan --json, quantize --dry-run
// --json): the planner's report with the schema, tensors numbered from 1
// as in the text, and warnings as objects.
type planDoc struct {
	Schema string `json:"schema"`
	*planner.Report
	Tensors  []planTensor  `json:"tensors"`
	Warnings []cli.Warning `json:"warnings"`
	// Refused says why the run would stop before any work (its output
	// checks: an output that is an input, read-only, busy, no room).
	Refused string `json:"refused,omitempty"`
	// With --shards: the shard list (shards.go).
	*shardList
}

type planTensor struct {
	Index int `json:"index"` // from 1, the text's # column
	planner.Tensor
}

func newPlanDoc(rep *planner.Report, plan *pipeline.Plan) planDoc {
	doc := planDoc{Schema: cli.Schema(1, "plan"), Report: rep, Tensors: make([]planTensor, len(rep.Tensors)),
		Warnings: warningsOf(rep.Warnings, planNames(plan))}
	for i, t := range rep.Tensors {
		doc.Tensors[i] = planTensor{Index: i + 1, Tensor: t}
	}
	return doc
}

// planNames are the tensor names of a plan, for warningOf.
func planNames(plan *pipeline.Plan) map[string]bool {
	names := make(map[string]bool, len(plan.Tensors))
	for _, t := range plan.Tensors {
		names[t.Name] = true
	}
	return names
}

func budgetError(rep *planner.Report) error {
	if rep.Fits() {
		return nil
	}
	var over []string
	for _, d := range rep.Devices {
		if d.Budget != nil && !d.Budget.Fits {
			over = append(over, fmt.Sprintf("%s holds %s, %s over its %s budget", d.Device, humanBytes(d.Bytes), humanBytes(-d.Budget.Margin), d.Budget.Text))
		}
	}
	return fmt.Errorf("%w: %s", errOverBudget, strings.Join(over, "; "))
}

// report is the planner's part of a real quantize run: the plan's report,
// whose warnings the run prints before it starts and whose budget check
// (budgetError) stops it before any work is done.
func (p *planFlags) report(in *gguf.Model, plan *pipeline.Plan) (*planner.Report, error) {
	opts, err := p.options()
	if err != nil {
		return nil, err
	}
	rep, err := planner.New(in, plan, opts)
	if err != nil {
		return nil, usageError{err}
	}
	return rep, nil
}
