package imatrix

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Layout says how many matrices (experts, heads) each entry covers and how
// that was learned. A GGUF file knows (one count per matrix); a .dat file
// does not, so the number comes from the model's tensor shapes when they are
// given, or is inferred for the expert tensors.
type Layout struct {
	Matrices map[string]int    // entry name -> matrices (1 when not split)
	Source   map[string]string // entry name -> how Matrices was found
	// Experts is the expert count inferred for the ffn_*_exps entries of a
	// file without shapes (0 when nothing was inferred) and Inference says
	// how it was found.
	Experts   int
	Inference string
}

// IsExpertEntry reports whether name is a 3-D expert tensor's entry
// (ffn_up_exps, ffn_gate_exps, ffn_down_exps, ffn_gate_up_exps, ...).
func IsExpertEntry(name string) bool {
	return strings.Contains(name, "_exps.") || strings.HasSuffix(name, "_exps")
}

// NewLayout decides the matrix count of every entry of m. ne2, if not nil,
// maps model tensor names to their third dimension (1 for 2-D tensors): it
// overrides inference for the entries named like a tensor.
func NewLayout(m *Matrix, ne2 map[string]int) *Layout {
	l := &Layout{Matrices: map[string]int{}, Source: map[string]string{}}
	needInference := false
	for _, e := range m.Entries {
		switch n, ok := ne2[e.Name]; {
		case len(e.Counts) > 1:
			l.Matrices[e.Name], l.Source[e.Name] = len(e.Counts), "counts in the file"
		case ok && n >= 1 && len(e.Sums)%n == 0:
			l.Matrices[e.Name], l.Source[e.Name] = n, "model tensor shape"
		case IsExpertEntry(e.Name):
			needInference = true
		default:
			l.Matrices[e.Name], l.Source[e.Name] = 1, "not an expert tensor"
		}
	}
	if !needInference {
		return l
	}
	l.Experts, l.Inference = InferExperts(m)
	for _, e := range m.Entries {
		if _, done := l.Matrices[e.Name]; done {
			continue
		}
		if l.Experts > 1 && len(e.Sums)%l.Experts == 0 {
			l.Matrices[e.Name], l.Source[e.Name] = l.Experts, "inferred"
		} else {
			l.Matrices[e.Name], l.Source[e.Name] = 1, "unknown (pass the model)"
		}
	}
	return l
}

// InferExperts guesses the number of experts of a file that does not record
// it (a .dat file): an expert entry holds experts x ne0 values, and ne0 is
// the input width of the layer, which the file's other (2-D) entries share.
// Every expert count that splits the expert entries into matrices of a size
// seen among the other entries is scored by how common that size is; the best
// wins. It returns 0 and the reason when nothing fits.
func InferExperts(m *Matrix) (experts int, how string) {
	sizes := map[int]int{} // value count of non-expert entries -> how many
	others := 0
	for _, e := range m.Entries {
		if !IsExpertEntry(e.Name) {
			sizes[len(e.Sums)]++
			others++
		}
	}
	score := map[int]int{}
	perSize := map[int]int{}
	nexp := 0
	for _, e := range m.Entries {
		if !IsExpertEntry(e.Name) || len(e.Counts) > 1 {
			continue
		}
		nexp++
		for s, n := range sizes {
			if s > 0 && len(e.Sums)%s == 0 && len(e.Sums)/s > 1 {
				k := len(e.Sums) / s
				score[k] += n
				perSize[k] = s
			}
		}
	}
	if nexp == 0 {
		return 0, "no expert entries"
	}
	if len(score) == 0 {
		return 0, "the expert entries' sizes are no multiple of any other entry's size: pass --model"
	}
	best, bestScore := 0, -1
	for k, s := range score {
		if s > bestScore || (s == bestScore && k > best) {
			best, bestScore = k, s
		}
	}
	s := perSize[best]
	return best, fmt.Sprintf("%d experts inferred: expert entries of %d values are %d matrices of %d columns, the most common size of the other entries (%d of %d)",
		best, s*best, best, s, sizes[s], others)
}

// EntryStats summarises one entry.
type EntryStats struct {
	Name     string
	Values   int
	Matrices int
	Calls    []float64 // as stored: one count, or one per matrix
	// Min, Mean and Max are over the per-column means of the whole entry.
	Min, Mean, Max float64
	// ZeroColumns counts columns whose mean is exactly zero (ZeroShare is
	// their share of all columns).
	ZeroColumns int
	ZeroShare   float64
	// MatrixMeans is the average per-column mean of each matrix.
	MatrixMeans []float64
	// Empty lists the matrices (experts, heads) that never received data:
	// a zero count or all values zero.
	Empty []int
	// Uniform lists those of Empty that are quantized with importance 1
	// all the same: a GGUF file's matrices with a zero count (see Mean).
	Uniform []int
}

// Stats summarises e taken as nmat matrices (nmat < 1 or not dividing the
// values means one).
func (e *Entry) Stats(nmat int) EntryStats {
	if len(e.Counts) > 1 {
		nmat = len(e.Counts)
	}
	if nmat < 1 || len(e.Sums)%nmat != 0 {
		nmat = 1
	}
	st := EntryStats{Name: e.Name, Values: len(e.Sums), Matrices: nmat, Calls: e.Counts, Min: math.Inf(1), Max: math.Inf(-1)}
	mean := e.Mean()
	per := len(mean) / nmat
	if e.tokens {
		// A GGUF matrix without data is used as 1s, but reported as what
		// it is: no data, zero columns.
		for j, c := range e.Counts {
			if c == 0 && len(e.Counts) == nmat {
				clear(mean[j*per : (j+1)*per])
			}
		}
	}
	var total float64
	for j := 0; j < nmat; j++ {
		var sum float64
		allZero := true
		for _, v := range mean[j*per : (j+1)*per] {
			x := float64(v)
			sum += x
			st.Min = math.Min(st.Min, x)
			st.Max = math.Max(st.Max, x)
			if x == 0 {
				st.ZeroColumns++
			} else {
				allZero = false
			}
		}
		total += sum
		st.MatrixMeans = append(st.MatrixMeans, sum/float64(max(per, 1)))
		countZero := len(e.Counts) > 1 && e.Counts[j] == 0 || len(e.Counts) == 1 && e.Counts[0] == 0
		if allZero || countZero {
			st.Empty = append(st.Empty, j)
			if countZero && e.tokens {
				st.Uniform = append(st.Uniform, j)
			}
		}
	}
	if len(mean) > 0 {
		st.Mean = total / float64(len(mean))
		st.ZeroShare = float64(st.ZeroColumns) / float64(len(mean))
	} else {
		st.Min, st.Max = 0, 0
	}
	return st
}

// Group is the kind of layer part an entry belongs to, for summaries.
type Group string

const (
	GroupAttn    Group = "attn"    // attention projections
	GroupFFN     Group = "ffn"     // dense feed-forward
	GroupExperts Group = "experts" // routed experts (ffn_*_exps)
	GroupShared  Group = "shared"  // shared experts (ffn_*_shexp)
	GroupOther   Group = "other"   // output, token embeddings, ...
)

// Groups lists the groups in display order (a new slice each call).
func Groups() []Group {
	return []Group{GroupAttn, GroupFFN, GroupExperts, GroupShared, GroupOther}
}

// EntryGroup returns the layer (-1 outside blk.N.) and group of an entry name.
func EntryGroup(name string) (layer int, g Group) {
	layer = -1
	rest := name
	if after, ok := strings.CutPrefix(name, "blk."); ok {
		num, tail, _ := strings.Cut(after, ".")
		if n, err := strconv.Atoi(num); err == nil {
			layer, rest = n, tail
		}
	}
	switch {
	case layer < 0:
		g = GroupOther
	case IsExpertEntry(rest):
		g = GroupExperts
	case strings.Contains(rest, "shexp"):
		g = GroupShared
	case strings.HasPrefix(rest, "attn"):
		g = GroupAttn
	case strings.HasPrefix(rest, "ffn"):
		g = GroupFFN
	default:
		g = GroupOther
	}
	return layer, g
}

// LayerSummary is the importance of one layer's parts.
type LayerSummary struct {
	Layer int
	// Mean is the average per-column mean importance of the group's entries
	// (NaN where the layer has no entry of that group).
	Mean map[Group]float64
	// Experts is each expert's importance relative to the layer's average
	// expert with data (1 = average), averaged over the layer's expert
	// entries; nil
	// for layers without experts. Empty lists experts without any data.
	Experts []float64
	Empty   []int
}

// Summarize computes per-layer importance for the entries in blk.N. (the
// others are summarised under layer -1, last).
func Summarize(m *Matrix, l *Layout) []LayerSummary {
	type acc struct {
		sum   map[Group]float64
		n     map[Group]int
		rel   []float64
		nrel  int
		empty map[int]int
		nexp  int
	}
	accs := map[int]*acc{}
	for _, e := range m.Entries {
		layer, g := EntryGroup(e.Name)
		a := accs[layer]
		if a == nil {
			a = &acc{sum: map[Group]float64{}, n: map[Group]int{}, empty: map[int]int{}}
			accs[layer] = a
		}
		st := e.Stats(l.Matrices[e.Name])
		a.sum[g] += st.Mean
		a.n[g]++
		if g != GroupExperts || st.Matrices < 2 {
			continue
		}
		a.nexp++
		for _, j := range st.Empty {
			a.empty[j]++
		}
		if st.Mean == 0 || len(st.Empty) == st.Matrices {
			continue
		}
		if a.rel == nil {
			a.rel = make([]float64, st.Matrices)
		}
		if len(a.rel) != st.Matrices {
			continue // inconsistent entries: keep the first layout
		}
		// Relative to the average of the experts that have data, so that a
		// missing expert does not lift the others above 1.
		empty := map[int]bool{}
		for _, j := range st.Empty {
			empty[j] = true
		}
		avg := st.Mean * float64(st.Matrices) / float64(st.Matrices-len(st.Empty))
		for j, v := range st.MatrixMeans {
			if !empty[j] {
				a.rel[j] += v / avg
			}
		}
		a.nrel++
	}
	var layers []int
	for k := range accs {
		layers = append(layers, k)
	}
	sort.Slice(layers, func(i, j int) bool {
		a, b := layers[i], layers[j]
		if (a < 0) != (b < 0) {
			return b < 0
		}
		return a < b
	})
	var out []LayerSummary
	for _, k := range layers {
		a := accs[k]
		s := LayerSummary{Layer: k, Mean: map[Group]float64{}}
		for _, g := range Groups() {
			if a.n[g] > 0 {
				s.Mean[g] = a.sum[g] / float64(a.n[g])
			} else {
				s.Mean[g] = math.NaN()
			}
		}
		if a.nrel > 0 {
			s.Experts = make([]float64, len(a.rel))
			for j, v := range a.rel {
				s.Experts[j] = v / float64(a.nrel)
			}
		}
		for j, n := range a.empty {
			if n == a.nexp { // no data in any of the layer's expert entries
				s.Empty = append(s.Empty, j)
			}
		}
		sort.Ints(s.Empty)
		out = append(out, s)
	}
	return out
}
