package main

import (
	"errors"
	"io"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// runRepackForm handles llama-quantize's --repack form.
func runRepackForm(in *gguf.Model, cfg pipeline.Config, sel recipes.Options, dryRun bool, stdout, stderr io.Writer) error {
	return errors.New("--repack: not wired yet; use 'gquant repack'")
}
