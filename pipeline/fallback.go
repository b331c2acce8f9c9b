package pipeline

import "github.com/gquant/gquant/quantize"

// A Fallback lists the rows of one tensor that the reference cannot
// quantize (its kernel stops the process on them: iq2_xxs blocks whose
// non-zero weights all have importance 0, iq1_s blocks of all-zero
// importance) and that were written with the substitute encoding of
// quantize.Fallback; its rows are rows of the tensor (matrix x ne1 + row).
// Run reports it once per tensor, on the tensor's Finished event; the
// caller warns.
type Fallback = quantize.Fallback

// mergeFallback adds the rows of b (a later piece of the same tensor) to f.
func mergeFallback(f, b *Fallback) *Fallback {
	switch {
	case b == nil:
		return f
	case f == nil:
		c := *b
		c.Rows = append([]int64(nil), b.Rows...)
		return &c
	}
	f.Rows = append(f.Rows, b.Rows...)
	return f
}
