package main

import (
	"errors"

	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
)

// advice is what the command line adds to an error: the flags that change
// the outcome. The libraries' errors state facts and name no flag.
func advice(err error) string {
	switch {
	case errors.Is(err, quantize.ErrNeedsImatrix):
		return "pass an importance matrix with --imatrix FILE (--ignore-imatrix-rules quantizes anyway where llama-quantize's rules refuse; the result will be poor)"
	case errors.Is(err, pipeline.ErrRequantize):
		return "pass --allow-requantize to quantize it again (the result is worse than quantizing the original weights)"
	}
	return ""
}
