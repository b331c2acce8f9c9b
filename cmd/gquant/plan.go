package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
)

// printPlan prints what a quantize run will do: per tensor the chosen type
// and why, per file the exact size.
func printQuantizePlan(w io.Writer, in *gguf.Model, plan *pipeline.Plan, asJSON bool) error {
	if asJSON {
		type tensor struct {
			Name    string  `json:"name"`
			Shape   []int64 `json:"shape"`
			Source  string  `json:"source_type"`
			Type    string  `json:"type"`
			Convert bool    `json:"quantized"`
			Why     string  `json:"why"`
			Bytes   int64   `json:"bytes"`
			File    int     `json:"file"`
			Imatrix string  `json:"imatrix,omitempty"`
		}
		type file struct {
			Path  string `json:"path"`
			Bytes int64  `json:"bytes"`
		}
		var out struct {
			Tensors []tensor `json:"tensors"`
			Files   []file   `json:"files"`
			Total   int64    `json:"total_bytes"`
		}
		for _, t := range plan.Tensors {
			out.Tensors = append(out.Tensors, tensor{t.Name, t.Shape, t.Source.String(), t.Type.String(), t.Quantize, t.Why, t.Bytes, t.Output, t.ImatrixFrom})
		}
		for i, o := range plan.Outputs {
			out.Files = append(out.Files, file{o.Path, plan.Sizes[i]})
		}
		out.Total = plan.Total()
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, t := range plan.Tensors {
		fmt.Fprintf(w, "[%4d/%4d] %s\n", i+1, len(plan.Tensors), t.Choice.String())
	}
	for i, o := range plan.Outputs {
		fmt.Fprintf(w, "file %s: %d bytes (%s)\n", o.Path, plan.Sizes[i], humanBytes(plan.Sizes[i]))
	}
	fmt.Fprintf(w, "total: %d bytes (%s), input %s\n", plan.Total(), humanBytes(plan.Total()), humanBytes(in.Size()))
	return nil
}
