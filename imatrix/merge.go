package imatrix

import (
	"fmt"
	"math"
	"slices"
)

// Merge combines importance matrices computed on different calibration data
// as llama-imatrix --in-file accumulates files: for every entry the stored
// values are summed (in float32, in input order) and the call counts are
// summed, so the merged mean is the call-weighted mean of the inputs'
// means. Entries found in only some inputs are kept as they are; dataset
// names are kept in order (each once unless a GGUF file is among the
// inputs: see below). names labels the inputs in errors
// (file paths); it may be nil.
//
// When every input is a .dat file the result is what ik_llama.cpp's
// llama-imatrix writes for them: each value stored as (sum / calls) * calls
// in float32, an entry with no calls at all left out (Dropped lists it), the
// chunk counts added up (the reference writes 0, having processed none
// itself). The result is FormatDat.
//
// When any input is a GGUF file the result is what mainline llama-imatrix
// holds after loading them: GGUF counts are tokens, so a .dat input's values
// and calls are multiplied by the chunk size, that of the first GGUF input
// that records one, else chunkSize (DefaultChunkSize when not positive);
// counts are summed matrix by matrix, a .dat count applying to each of its
// entry's matrices; the chunk count is the largest count over the chunk
// size; the datasets are every input's, in order, a dataset used by two
// inputs listed twice. The result is FormatGGUF, with that ChunkSize.
func Merge(names []string, chunkSize int, ms ...*Matrix) (*Matrix, error) {
	label := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("input %d", i+1)
	}
	out := &Matrix{Format: FormatDat}
	cs := 0
	for _, m := range ms {
		if m.Format == FormatGGUF {
			out.Format = FormatGGUF
			if cs == 0 {
				cs = m.ChunkSize
			}
		}
	}
	if cs <= 0 {
		cs = chunkSize
	}
	if cs <= 0 {
		cs = DefaultChunkSize
	}
	type acc struct {
		sums   []float32
		counts []float64
		from   string // first input holding the entry, for errors
	}
	accs := map[string]*acc{}
	var order []string
	for i, m := range ms {
		out.Chunks += m.Chunks
		for _, d := range m.Datasets {
			// Mainline lists every input's datasets, in order, a dataset
			// used twice twice; a .dat keeps them joined in one string,
			// each once.
			if out.Format == FormatGGUF || !slices.Contains(out.Datasets, d) {
				out.Datasets = append(out.Datasets, d)
			}
		}
		// A .dat input among GGUF ones: its calls become tokens.
		scale := out.Format == FormatGGUF && m.Format != FormatGGUF
		for _, e := range m.Entries {
			if len(e.Counts) == 0 {
				return nil, fmt.Errorf("imatrix: %s: entry %s has no call count", label(i), e.Name)
			}
			a := accs[e.Name]
			if a == nil {
				a = &acc{sums: make([]float32, len(e.Sums)), counts: make([]float64, len(e.Counts)), from: label(i)}
				accs[e.Name] = a
				order = append(order, e.Name)
			}
			if len(a.sums) != len(e.Sums) {
				return nil, fmt.Errorf("imatrix: entry %s has %d values in %s but %d in %s: the files are for different models",
					e.Name, len(a.sums), a.from, len(e.Sums), label(i))
			}
			add := e.Counts
			if out.Format == FormatGGUF {
				add = make([]float64, len(e.Counts))
				for j, c := range e.Counts {
					if scale {
						add[j] = c * float64(cs)
					} else {
						add[j] = math.Round(c) // the reference holds integers: std::lround
					}
				}
			}
			counts, err := mergeCounts(a.counts, add, len(e.Sums))
			if err != nil {
				return nil, fmt.Errorf("imatrix: entry %s (%s and %s): %w", e.Name, a.from, label(i), err)
			}
			a.counts = counts
			for j, v := range e.Sums {
				if scale {
					v *= float32(cs)
				}
				a.sums[j] += v
			}
		}
	}
	var top float64
	for _, name := range order {
		a := accs[name]
		e := Entry{Name: name, Sums: a.sums, Counts: a.counts, tokens: out.Format == FormatGGUF}
		if out.Format == FormatDat && len(e.Counts) == 1 {
			n := float32(e.Counts[0])
			if n == 0 {
				// llama-imatrix: "has no data - skipping".
				out.Dropped = append(out.Dropped, name)
				continue
			}
			for j, v := range e.Sums {
				e.Sums[j] = float32(v/n) * n // as the reference stores it
			}
		}
		top = max(top, slices.Max(e.Counts))
		out.Entries = append(out.Entries, e)
	}
	if out.Format == FormatGGUF {
		out.ChunkSize = cs
		out.Chunks = int(min(top/float64(cs), math.MaxInt32))
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
