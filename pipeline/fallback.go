package pipeline

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/formats"
)

// A Fallback lists the rows of one tensor that the reference cannot
// quantize (its kernel stops the process on them: iq2_xxs blocks whose
// non-zero weights all have importance 0, iq1_s blocks of all-zero
// importance) and that were written with the substitute encoding of
// quantize.Fallback. Run reports it once per tensor, on the tensor's
// Finished event; the caller warns.
type Fallback struct {
	Type   formats.Type
	Rows   []int64 // rows of the tensor (matrix x ne1 + row), ascending
	Reason string
}

// merge adds the rows of b (a later piece of the same tensor) to f.
func (f *Fallback) merge(b *Fallback) *Fallback {
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

// String names the rows (the first ten, then how many more) and the
// reason: "iq2_xxs rows 3, 17: ...".
func (f *Fallback) String() string {
	var b strings.Builder
	for i, r := range f.Rows {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(f.Rows)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, r)
	}
	row := "rows"
	if len(f.Rows) == 1 {
		row = "row"
	}
	return fmt.Sprintf("%s %s %s: %s", f.Type, row, b.String(), f.Reason)
}
