// Package imatrix reads and writes importance matrices: the legacy binary
// ".dat" files of llama-imatrix and the GGUF imatrix format. An importance
// matrix holds, per weight tensor, the sum of squared activations seen by
// each input column (per expert for 3-D tensors) and how many calls
// contributed; the quantizers weight their error by the per-column mean.
package imatrix

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Format names a file format.
type Format string

const (
	FormatDat  Format = "dat"  // legacy llama-imatrix binary
	FormatGGUF Format = "gguf" // GGUF with <name>.in_sum2 / <name>.counts tensors
)

// ErrFormat reports a file that is not a well-formed importance matrix.
var ErrFormat = errors.New("imatrix: malformed file")

// Entry is the data for one weight tensor.
type Entry struct {
	Name string
	// Sums holds the stored values: ne0 values per matrix, matrices (experts)
	// one after another.
	Sums []float32
	// Counts holds the number of calls per matrix. A legacy .dat entry has one
	// count for all its matrices (len 1); a GGUF entry has one per matrix.
	Counts []float64
}

// Matrices returns how many matrices the entry covers (1 when unknown, as for
// a .dat entry whose tensor shape is not known).
func (e *Entry) Matrices() int {
	if len(e.Counts) > 1 {
		return len(e.Counts)
	}
	return 1
}

// Mean returns the per-column mean of squared activations, as the reference
// computes it: each stored value divided by its call count (a count of zero
// leaves the values as stored, all zeros for a matrix that never saw data).
func (e *Entry) Mean() []float32 {
	out := make([]float32, len(e.Sums))
	per := len(e.Sums) / max(1, len(e.Counts))
	for i, v := range e.Sums {
		c := e.Counts[0]
		if len(e.Counts) > 1 {
			c = e.Counts[i/per]
		}
		if c > 0 {
			v /= float32(c) // the reference divides in float32
		}
		out[i] = v
	}
	return out
}

// Matrix is a whole importance-matrix file.
type Matrix struct {
	Format   Format
	Entries  []Entry // file order
	Chunks   int     // calibration chunks processed (0 when the file does not say)
	Datasets []string
	index    map[string]int
}

// Lookup returns the entry stored under exactly name.
func (m *Matrix) Lookup(name string) (*Entry, bool) {
	if m.index == nil {
		m.index = make(map[string]int, len(m.Entries))
		for i, e := range m.Entries {
			m.index[e.Name] = i // a later duplicate wins, as in the reference's map
		}
	}
	i, ok := m.index[name]
	if !ok {
		return nil, false
	}
	return &m.Entries[i], true
}

// Find returns the entry the reference's quantizer would use for tensor name,
// trying its fallbacks in its order when there is no exact entry: merged and
// unmerged ffn_gate_up_exps, ffn_up data for ffn_gate, and the MLA
// attn_kv_b / attn_v_b pair. from is the name of the entry found.
func (m *Matrix) Find(name string) (e *Entry, from string, ok bool) {
	if e, ok := m.Lookup(name); ok {
		return e, name, true
	}
	for _, alt := range fallbackNames(name) {
		if e, ok := m.Lookup(alt); ok {
			return e, alt, true
		}
	}
	return nil, "", false
}

// fallbackNames lists, in order, the other entry names the reference tries
// for a tensor without its own entry.
func fallbackNames(name string) []string {
	if pos := indexAny(name, "ffn_up_exps.weight", "ffn_gate_exps.weight"); pos >= 0 {
		return []string{name[:pos] + "ffn_gate_up_exps.weight", name[:pos] + "ffn_up_exps.weight"}
	}
	if pos := strings.Index(name, "ffn_gate_up_exps.weight"); pos >= 0 {
		return []string{name[:pos] + "ffn_up_exps.weight"}
	}
	if pos := strings.Index(name, "ffn_gate.weight"); pos >= 0 {
		return []string{name[:pos] + "ffn_up.weight"}
	}
	alts := [2]string{".attn_v_b.weight", ".attn_kv_b.weight"}
	for j, a := range alts {
		if pos := strings.Index(name, a); pos >= 0 {
			return []string{name[:pos] + alts[(j+1)%2]}
		}
	}
	return nil
}

// indexAny returns the position of the first of subs found in s (trying them
// in order, as the reference does), or -1.
func indexAny(s string, subs ...string) int {
	for _, sub := range subs {
		if pos := strings.Index(s, sub); pos >= 0 {
			return pos
		}
	}
	return -1
}

// Validate checks every value is finite and every count non-negative.
func (m *Matrix) Validate() error {
	for _, e := range m.Entries {
		for i, v := range e.Sums {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("imatrix: entry %s: value %d is %v", e.Name, i, v)
			}
			if v < 0 {
				return fmt.Errorf("imatrix: entry %s: value %d is negative (%v)", e.Name, i, v)
			}
		}
		for i, c := range e.Counts {
			if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
				return fmt.Errorf("imatrix: entry %s: call count %d is %v", e.Name, i, c)
			}
		}
	}
	return nil
}

// Filter keeps only the entries whose name contains one of include (when
// include is non-empty) and drops those containing one of exclude, as the
// reference's --include-weights / --exclude-weights do.
func (m *Matrix) Filter(include, exclude []string) {
	var kept []Entry
	for _, e := range m.Entries {
		if len(exclude) > 0 && containsAny(e.Name, exclude) {
			continue
		}
		if len(include) > 0 && !containsAny(e.Name, include) {
			continue
		}
		kept = append(kept, e)
	}
	m.Entries = kept
	m.index = nil
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Len returns the number of distinct entry names (the reference's entry
// count, which collapses duplicates).
func (m *Matrix) Len() int {
	seen := make(map[string]bool, len(m.Entries))
	for _, e := range m.Entries {
		seen[e.Name] = true
	}
	return len(seen)
}
