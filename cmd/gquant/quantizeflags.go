package main

import (
	"fmt"
	"github.com/spf13/pflag"

	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/recipes"
)

// The rule options of quantize and plan. ik_llama.cpp's --custom-q and
// mainline llama.cpp's --tensor-type and --tensor-type-file all give
// regex=type rules searched in tensor names, first match wins; they are
// kept in the order given on the command line, whichever option gave them.

type ruleKind int

const (
	ruleCustomQ        ruleKind = iota // --custom-q A=t,B=u
	ruleTensorType                     // --tensor-type A=t
	ruleTensorTypeFile                 // --tensor-type-file FILE
)

type ruleArg struct {
	kind  ruleKind
	value string
}

// ruleFlags collects the rule options in command-line order.
type ruleFlags struct{ args []ruleArg }

// kind returns the pflag.Value of one of the options.
func (r *ruleFlags) kind(k ruleKind) pflag.Value { return &ruleValue{r, k} }

// ruleSet parses every rule option, in order.
func (r *ruleFlags) ruleSet() (*recipes.RuleSet, error) {
	rules := &recipes.RuleSet{}
	nTensorType := 0
	for _, a := range r.args {
		var rs *recipes.RuleSet
		var err error
		switch a.kind {
		case ruleCustomQ:
			rs, err = recipes.ParseCustomQ(a.value)
		case ruleTensorType:
			nTensorType++
			rs, err = recipes.ParseTensorType(a.value, nTensorType)
		case ruleTensorTypeFile:
			if rs, err = recipes.LoadTensorTypeFile(a.value); err != nil {
				err = fmt.Errorf("--tensor-type-file: %w", err)
			}
		}
		if err != nil {
			return nil, err
		}
		rules.Append(rs)
	}
	return rules, nil
}

// files are the --tensor-type-file inputs.
func (r *ruleFlags) files() []string {
	var out []string
	for _, a := range r.args {
		if a.kind == ruleTensorTypeFile {
			out = append(out, a.value)
		}
	}
	return out
}

type ruleValue struct {
	r    *ruleFlags
	kind ruleKind
}

func (v *ruleValue) Set(s string) error {
	v.r.args = append(v.r.args, ruleArg{v.kind, s})
	return nil
}

func (v *ruleValue) String() string { return "" }

func (v *ruleValue) Type() string {
	if v.kind == ruleTensorTypeFile {
		return "string"
	}
	return "stringArray"
}

// registerForeignQuantizeFlags makes the options of mainline llama.cpp's
// llama-quantize that gquant does not take fail with what to do instead.
func registerForeignQuantizeFlags(fs *pflag.FlagSet) {
	const fit = "use 'gquant fit --budget DEVICE=SIZE' to choose the types for a size from measured errors, then 'gquant quantize --recipe'"
	cli.Unsupported(fs, "target-bpw", true, "mainline llama.cpp's automatic type choice is not supported; "+fit)
	cli.Unsupported(fs, "target-size", true, "mainline llama.cpp's automatic type choice is not supported; "+fit)
	cli.Unsupported(fs, "state-file", true, "mainline llama.cpp's --target-bpw state is not supported; 'gquant fit --cache FILE' keeps its measurements")
	cli.Unsupported(fs, "save-state", false, "mainline llama.cpp's --target-bpw state is not supported; 'gquant fit --cache FILE' keeps its measurements")
	cli.Unsupported(fs, "prune-layers", true, "mainline llama.cpp's layer pruning is not supported (ik_llama.cpp's llama-quantize has no such option either)")
}
