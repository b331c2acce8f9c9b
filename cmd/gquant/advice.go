package main

import (
	"errors"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/quantize"
)

// advice is what the command line adds to an error: the flags that change
// the outcome. The libraries' errors state facts and name no flag.
func advice(err error) string {
	switch {
	case errors.Is(err, quantize.ErrKernelNeedsImatrix):
		return "pass an importance matrix with --imatrix FILE, or give the tensor another type with --custom-q (--ignore-imatrix-rules cannot help: the type's kernel itself needs importance data)"
	case errors.Is(err, quantize.ErrNeedsImatrix):
		return "pass an importance matrix with --imatrix FILE (--ignore-imatrix-rules quantizes anyway where llama-quantize's rules refuse; the result will be poor)"
	case errors.Is(err, gguf.ErrCommit):
		return "once what stopped the rename is fixed, the same command with --resume puts the kept files in place without quantizing again; a run without --resume removes them"
	case errors.Is(err, pipeline.ErrNotResumable):
		return "nothing was removed: give the command that wrote it (the same file type, flags and inputs) to continue it, or run without --resume to start over, which removes it (a damaged file can only be started over)"
	case errors.Is(err, pipeline.ErrRequantize):
		return "pass --allow-requantize to quantize it again (the result is worse than quantizing the original weights)"
	case errors.Is(err, quantize.ErrImatrixRefused):
		return "Q4_0_4_4, Q4_0_4_8 and Q4_0_8_8 (q4_0_4x4, q4_0_4x8, q4_0_8x8) store plain q4_0 rows and llama-quantize aborts on importance data for them: leave out --imatrix, or choose Q4_0 or Q4_0_R8, which use it"
	case errors.Is(err, quantize.ErrUnsupported):
		return "gquant has no kernel for this type: choose another type, or give the tensor another with --custom-q"
	}
	return ""
}
