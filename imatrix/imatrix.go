// Package imatrix reads and writes importance matrices: the legacy binary
// ".dat" files of llama-imatrix and the GGUF imatrix format. An importance
// matrix holds, per weight tensor, the sum of squared activations seen by
// each input column (per expert for 3-D tensors) and how many calls
// contributed; the quantizers weight their error by the per-column mean.
package imatrix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// Format names a file format.
type Format string

const (
	FormatDat  Format = "dat"  // legacy llama-imatrix binary
	FormatGGUF Format = "gguf" // GGUF with <name>.in_sum2 / <name>.counts tensors
)

// DefaultChunkSize is llama-imatrix's default context per chunk (tokens):
// the scale between a .dat file's call counts and a GGUF file's token
// counts when a GGUF file does not record its own (imatrix.chunk_size).
const DefaultChunkSize = 512

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

	// tokens marks the counts of a GGUF file: a matrix whose count is zero
	// never saw data and has the mean 1 (neutral), as mainline's
	// llama-quantize takes it, and as a .dat file made from the GGUF file
	// (WriteDat) stores it; a .dat entry without calls keeps its values,
	// as ik_llama.cpp's llama-quantize takes them.
	tokens bool

	// An entry of an index (ReadIndex) has no Sums: its n values are read
	// from src at byte at when asked for (ReadSums).
	src io.ReaderAt
	at  int64
	n   int
	// bad is an index entry's first invalid value or count, found while
	// indexing: reported unless the entry is filtered out first
	// (OpenIndexFiltered), as the reference checks only the entries it
	// keeps.
	bad error
}

// Values returns the number of stored values: len(Sums), or for an entry
// of an index, how many the file holds.
func (e *Entry) Values() int {
	if e.src != nil {
		return e.n
	}
	return len(e.Sums)
}

// ReadSums reads the stored values [from, from+len(dst)) into dst, from
// Sums or, for an entry of an index, from the file.
func (e *Entry) ReadSums(from int, dst []float32) error {
	if from < 0 || from+len(dst) > e.Values() {
		return fmt.Errorf("imatrix: entry %s: values %d..%d of %d", e.Name, from, from+len(dst), e.Values())
	}
	if e.src == nil {
		copy(dst, e.Sums[from:])
		return nil
	}
	raw := rawPool.Get().(*[]byte)
	defer rawPool.Put(raw)
	for len(dst) > 0 {
		k := min(len(dst), len(*raw)/4)
		if _, err := e.src.ReadAt((*raw)[:4*k], e.at+4*int64(from)); err != nil {
			return fmt.Errorf("imatrix: entry %s: reading values %d..%d: %w", e.Name, from, from+k, err)
		}
		decodeF32((*raw)[:4*k], dst[:k])
		dst, from = dst[k:], from+k
	}
	return nil
}

// rawPool holds ReadSums's read buffers.
var rawPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// decodeF32 decodes little-endian float32 values from raw into dst.
func decodeF32(raw []byte, dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
}

// ReadMean reads the means of the stored values [from, from+len(dst)) into
// dst, exactly as Mean computes them.
func (e *Entry) ReadMean(from int, dst []float32) error {
	if err := e.ReadSums(from, dst); err != nil {
		return err
	}
	e.divide(from, dst)
	return nil
}

// divide turns the stored values [from, from+len(v)) in v into means: each
// divided by its matrix's call count (a count of zero leaves it as stored,
// or makes it 1 for a GGUF entry: see Entry.tokens).
func (e *Entry) divide(from int, v []float32) {
	per := e.Values() / max(1, len(e.Counts))
	for j := range v {
		c := e.Counts[0]
		if len(e.Counts) > 1 {
			c = e.Counts[(from+j)/per]
		}
		if c > 0 {
			v[j] /= float32(c) // the reference divides in float32
		} else if e.tokens {
			v[j] = 1
		}
	}
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
// leaves the values of a .dat entry as stored, all zeros for a matrix that
// never saw data, and makes those of a GGUF entry 1).
// For an entry of an index it reads them from the file (see ReadMean for a
// part of them).
func (e *Entry) Mean() []float32 {
	out := make([]float32, e.Values())
	if e.src != nil {
		if e.ReadMean(0, out) != nil {
			return nil
		}
		return out
	}
	copy(out, e.Sums)
	if len(out) > 0 {
		e.divide(0, out)
	}
	return out
}

// Matrix is a whole importance-matrix file.
type Matrix struct {
	Format  Format
	Entries []Entry // file order
	Chunks  int     // calibration chunks processed (0 when the file does not say)
	// ChunkSize is the tokens per chunk a GGUF file records
	// (imatrix.chunk_size; 0 when it does not, and for a .dat file). A GGUF
	// file counts tokens, a .dat file calls (chunks): converting between
	// them scales by it, as llama-imatrix does.
	ChunkSize int
	Datasets  []string
	// Dropped lists the entries Merge left out: no calls in any input.
	Dropped []string
	index   map[string]int
	closer  io.Closer // the file of an index (OpenIndex)
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
		if e.bad != nil {
			return e.bad
		}
		if e.src != nil {
			continue // an index entry: its values were checked as they were read (bad)
		}
		if err := checkSums(e.Name, 0, e.Sums); err != nil {
			return err
		}
		if err := checkCounts(e.Name, e.Counts); err != nil {
			return err
		}
	}
	return nil
}

// checkSums checks the values of entry name from index from on, as
// Validate does.
func checkSums(name string, from int, sums []float32) error {
	for i, v := range sums {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("imatrix: entry %s: value %d is %v", name, from+i, v)
		}
		if v < 0 {
			return fmt.Errorf("imatrix: entry %s: value %d is negative (%v)", name, from+i, v)
		}
	}
	return nil
}

// checkCounts checks the call counts of entry name, as Validate does.
func checkCounts(name string, counts []float64) error {
	for i, c := range counts {
		if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return fmt.Errorf("imatrix: entry %s: call count %d is %v", name, i, c)
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
