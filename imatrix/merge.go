package imatrix

import (
	"fmt"
	"slices"
)

// Merge combines importance matrices computed on different calibration data,
// as llama-imatrix --in-file accumulates files: for every entry the stored
// values are summed and the call counts are summed, so the merged mean is the
// call-weighted mean of the inputs' means. Counts are summed matrix by
// matrix when any input has one count per matrix (a GGUF file); an input with
// a single count for the whole entry (a .dat file) then contributes that
// count to each of its matrices, which is what its mean means. Entries found
// in only some inputs are kept as they are. Chunk counts add up; dataset names
// are kept in order, each once. names labels the inputs in errors (file
// paths); it may be nil.
//
// The merged matrix is FormatGGUF when any entry has per-matrix counts and
// FormatDat otherwise.
func Merge(names []string, ms ...*Matrix) (*Matrix, error) {
	label := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("input %d", i+1)
	}
	out := &Matrix{Format: FormatDat}
	type acc struct {
		sums   []float64
		counts []float64
		from   string // first input holding the entry, for errors
	}
	accs := map[string]*acc{}
	var order []string
	for i, m := range ms {
		out.Chunks += m.Chunks
		for _, d := range m.Datasets {
			if !slices.Contains(out.Datasets, d) {
				out.Datasets = append(out.Datasets, d)
			}
		}
		for _, e := range m.Entries {
			if len(e.Counts) == 0 {
				return nil, fmt.Errorf("imatrix: %s: entry %s has no call count", label(i), e.Name)
			}
			a := accs[e.Name]
			if a == nil {
				a = &acc{sums: make([]float64, len(e.Sums)), counts: make([]float64, len(e.Counts)), from: label(i)}
				accs[e.Name] = a
				order = append(order, e.Name)
			}
			if len(a.sums) != len(e.Sums) {
				return nil, fmt.Errorf("imatrix: entry %s has %d values in %s but %d in %s: the files are for different models",
					e.Name, len(a.sums), a.from, len(e.Sums), label(i))
			}
			counts, err := mergeCounts(a.counts, e.Counts, len(e.Sums))
			if err != nil {
				return nil, fmt.Errorf("imatrix: entry %s (%s and %s): %w", e.Name, a.from, label(i), err)
			}
			a.counts = counts
			for j, v := range e.Sums {
				a.sums[j] += float64(v)
			}
		}
	}
	for _, name := range order {
		a := accs[name]
		e := Entry{Name: name, Sums: make([]float32, len(a.sums)), Counts: a.counts}
		for j, v := range a.sums {
			e.Sums[j] = float32(v)
		}
		if len(e.Counts) > 1 {
			out.Format = FormatGGUF
		}
		out.Entries = append(out.Entries, e)
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeCounts adds the counts add to sum (either may be one count for the
// whole entry or one per matrix) and returns the result, widened to one count
// per matrix when either side has that.
func mergeCounts(sum, add []float64, nvals int) ([]float64, error) {
	switch {
	case len(sum) == len(add):
		for j := range sum {
			sum[j] += add[j]
		}
		return sum, nil
	case len(sum) == 1 && nvals%len(add) == 0:
		wide := make([]float64, len(add))
		for j := range wide {
			wide[j] = sum[0] + add[j]
		}
		return wide, nil
	case len(add) == 1 && nvals%len(sum) == 0:
		for j := range sum {
			sum[j] += add[0]
		}
		return sum, nil
	}
	return nil, fmt.Errorf("%d values counted as %d matrices in one file and %d in the other", nvals, len(sum), len(add))
}
