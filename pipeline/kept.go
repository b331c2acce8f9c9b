package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/gguf"
)

// --partial-requant keeps an existing output only if it is this plan's
// output. The header check (CheckExisting) sees names, types, shapes and
// offsets; the sidecar adds what the header cannot show: what each tensor
// was made from. An output with a sidecar is kept only if the sidecar has
// the plan's records (checkSidecarPlan, when planning) and the bytes agree
// with it (VerifyKept, before the run: the input tensors hash to the
// recorded input hashes, the file's tensors to the recorded output
// hashes). An output without a sidecar (written by llama-quantize, or
// before sidecars) is kept on its header alone, and the plan says so.

// checkSidecarPlan compares the sidecar of the existing output o with the
// plan's records. It returns the sidecar (nil when there is none) and,
// when the output is not this plan's, why.
func checkSidecarPlan(in *gguf.Model, o Output, size int64) (*Sidecar, error) {
	sc, err := ReadSidecar(o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	plan, _, err := planRecords(in, o)
	if err != nil {
		return nil, err
	}
	if sc.Size != size || len(sc.Tensors) != len(plan) {
		return nil, fmt.Errorf("its sidecar describes %d tensors in %d bytes, the plan has %d in %d", len(sc.Tensors), sc.Size, len(plan), size)
	}
	for i := range plan {
		if why := sc.Tensors[i].differs(&plan[i]); why != "" {
			return nil, fmt.Errorf("its sidecar says %s", why)
		}
	}
	return sc, nil
}

// VerifyKept reads the bytes behind the sidecars of the outputs
// --partial-requant or --resume keeps (Skip): every input tensor they were made from
// must hash to its recorded input hash, and every tensor of the file to its
// recorded output hash. An output that fails is written again (Replace
// instead of Skip; one --resume kept is no longer skipped, for the check of
// existing outputs) and a warning says why; the warnings are returned.
// Outputs kept on their header alone (no sidecar) are not read.
func VerifyKept(ctx context.Context, in *gguf.Model, plan *Plan) ([]string, error) {
	var warnings []string
	buf := make([]byte, 8<<20)
	for i := range plan.Outputs {
		o := &plan.Outputs[i]
		if !o.Skip || o.kept == nil {
			continue
		}
		why, err := verifyKept(ctx, in, *o, buf)
		if err != nil {
			return nil, err
		}
		if why != "" {
			plan.Notes = slices.DeleteFunc(plan.Notes, func(n string) bool { return strings.HasPrefix(n, keptNote(o.Path)) })
		}
		switch {
		case why != "" && o.resumed:
			// Not replaced without being asked: the check of existing
			// outputs then refuses it, naming --force.
			o.Skip, o.resumed, o.kept = false, false, nil
			warnings = append(warnings, fmt.Sprintf("%s exists but is not this plan's output (%s): not kept (--resume)", o.Path, why))
		case why != "":
			o.Skip, o.Replace, o.kept = false, true, nil
			warnings = append(warnings, fmt.Sprintf("%s exists but is not this plan's output (%s): written again (--partial-requant)", o.Path, why))
		}
	}
	return warnings, nil
}

func verifyKept(ctx context.Context, in *gguf.Model, o Output, buf []byte) (string, error) {
	f, size, err := gguf.OpenRegular(o.Path)
	if err != nil {
		return err.Error(), nil
	}
	defer f.Close()
	if size != o.kept.Size {
		return fmt.Sprintf("%d bytes, its sidecar says %d", size, o.kept.Size), nil
	}
	if o.kept.Header != "" {
		hh, err := hashHeader(o.Path, dataOffset(o.kept.Tensors, o.kept.Size))
		if err != nil {
			return "", fmt.Errorf("%s: %w", o.Path, err)
		}
		if hh != o.kept.Header {
			return "its header is not the one its sidecar recorded", nil
		}
	}
	for k, rec := range o.kept.Tensors {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		d := xxhash.New()
		if _, err := io.CopyBuffer(d, io.NewSectionReader(f, rec.Offset, rec.Size), buf); err != nil {
			return "", fmt.Errorf("%s: %w", o.Path, err)
		}
		if hashString(d.Sum64()) != rec.Output {
			return fmt.Sprintf("the bytes of %s are not the ones its sidecar recorded", rec.Name), nil
		}
		sum, err := hashTensor(in, o.Tensors[k].Source, buf)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", o.Tensors[k].Name, err)
		}
		if hashString(sum) != rec.Input {
			return fmt.Sprintf("%s was made from another input tensor", rec.Name), nil
		}
	}
	return "", nil
}
