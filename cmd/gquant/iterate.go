package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
)

// iterateFlags are quantize's options for iterating on a recipe without
// starting over: --reuse earlier outputs, --resume an interrupted run
// (issue 20). --partial-requant's sidecar check is here too.
type iterateFlags struct {
	reuse  []string
	resume bool
}

func (f *iterateFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.reuse, "reuse", nil, "copy the tensors of an earlier output `PREV.gguf` (any shard of a set) that its sidecar shows are what this run would write, instead of quantizing them; repeatable")
	fs.BoolVar(&f.resume, "resume", false, "continue the interrupted run of the same command from its last complete tensor; on Ctrl-C keep the temporary files for that")
}

// iteration is what the flags prepared for one run.
type iteration struct {
	reuse  *pipeline.Reuse
	resume []*pipeline.Resumable
	keep   bool
	notes  func(string)
}

// prepare runs after the plan, before the output checks: it verifies the
// outputs --partial-requant keeps, opens the --reuse files (inputs from
// then on) and finds what --resume continues, telling files to spare it.
func (f *iterateFlags) prepare(in *gguf.Model, plan *pipeline.Plan, files *cli.Files, stderr io.Writer) (*iteration, error) {
	notes := func(s string) { fmt.Fprintln(stderr, "note:", cli.Escape(s)) }
	it := &iteration{keep: f.resume, notes: notes}
	warnings, err := pipeline.VerifyKept(context.Background(), in, plan)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", cli.Escape(w))
	}
	if len(f.reuse) > 0 {
		if it.reuse, err = pipeline.OpenReuse(f.reuse, notes); err != nil {
			return nil, err
		}
		files.Read(it.reuse.Paths()...)
		if !it.reuse.Usable() {
			notes("--reuse: no earlier output has a sidecar: every tensor is quantized")
		}
	}
	if f.resume {
		files.Keep = true
		// Another run writing an output stops this one before anything
		// is said of its temporary files or done to them.
		var outs []string
		for _, o := range plan.Outputs {
			if !o.Elsewhere {
				outs = append(outs, o.Path, pipeline.SidecarPath(o.Path))
			}
		}
		if err := cli.CheckBusy(outs...); err != nil {
			it.close()
			return nil, err
		}
		if it.resume, err = pipeline.FindResumable(context.Background(), in, plan.Outputs, notes); err != nil {
			it.close()
			return nil, err
		}
		for i, r := range it.resume {
			switch {
			case r != nil:
				files.Continue = append(files.Continue, r.Temp)
			case !plan.Outputs[i].Skip && !lexists(plan.Outputs[i].Path):
				// (An existing output that is not kept is the output
				// checks' to refuse or, with --force, replace.)
				notes(fmt.Sprintf("--resume: no interrupted write of %s to continue: it is written from the start", plan.Outputs[i].Path))
			}
		}
	}
	return it, nil
}

// options adds the iteration's part to the run's options.
func (it *iteration) options(o pipeline.Options) pipeline.Options {
	o.Reuse, o.Resume, o.Keep, o.Notes = it.reuse, it.resume, it.keep, it.notes
	return o
}

func (it *iteration) close() {
	if it != nil {
		it.reuse.Close()
	}
}

// previewReuse is prepare's --reuse part for a run that writes nothing: the
// earlier outputs are opened (and closed) as the run would open them, and
// become inputs of files, which no output may be.
func (f *iterateFlags) previewReuse(files *cli.Files) error {
	if len(f.reuse) == 0 {
		return nil
	}
	r, err := pipeline.OpenReuse(f.reuse, nil)
	if err != nil {
		return err
	}
	files.Read(r.Paths()...)
	return r.Close()
}
