package imatrix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// The GGUF imatrix layout (llama-imatrix's current format): general.type =
// "imatrix", imatrix.datasets (array of strings), imatrix.chunk_count and
// imatrix.chunk_size (u32); per weight tensor NAME two f32 tensors,
// NAME.in_sum2 of shape [ne0, n_mat] and NAME.counts of shape [1, n_mat].
const (
	keyType       = "general.type"
	keyDatasets   = "imatrix.datasets"
	keyChunkCount = "imatrix.chunk_count"
	keyChunkSize  = "imatrix.chunk_size"
	suffixSums    = ".in_sum2"
	suffixCounts  = ".counts"
)

// maxTensorName is ggml's GGML_MAX_NAME: llama.cpp refuses a GGUF file with
// a tensor name of this many bytes or more.
const maxTensorName = 64

// ErrNotImatrix is returned for a GGUF file that holds no importance data
// (a model, say).
var ErrNotImatrix = errors.New("imatrix: not an importance-matrix file")

// Open reads an importance matrix in either format, told apart by the GGUF
// magic at the start of the file.
func Open(path string) (*Matrix, error) {
	f, size, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("imatrix: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err == nil && string(magic[:]) == gguf.Magic {
		m, err := ReadGGUF(f, size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
	m, err := ReadDat(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadGGUF reads a GGUF importance matrix.
func ReadGGUF(r io.ReaderAt, size int64) (*Matrix, error) {
	return readGGUF(r, size, false)
}

// readGGUF reads a GGUF importance matrix; as an index (see ReadIndex) it
// checks the values as they stream past, a chunk at a time, and keeps only
// where they are.
func readGGUF(r io.ReaderAt, size int64, index bool) (*Matrix, error) {
	g, err := gguf.Read(r, size)
	if err != nil {
		return nil, err
	}
	t, typed, err := g.Metadata.LookupText(keyType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if typed && t != "imatrix" {
		return nil, fmt.Errorf("%w: general.type is %q", ErrNotImatrix, t)
	}
	m := &Matrix{Format: FormatGGUF}
	if m.Datasets, _, err = g.Metadata.LookupStrings(keyDatasets); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	n, _, err := g.Metadata.LookupUint(keyChunkCount)
	if err == nil && n > math.MaxInt32 {
		err = fmt.Errorf("%s is %d, out of range", keyChunkCount, n)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	m.Chunks = int(n)
	cs, _, err := g.Metadata.LookupUint(keyChunkSize)
	if err == nil && cs > math.MaxInt32 {
		err = fmt.Errorf("%s is %d, out of range", keyChunkSize, cs)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	m.ChunkSize = int(cs)
	for i, t := range g.Tensors {
		name, ok := strings.CutSuffix(t.Name, suffixSums)
		if !ok {
			continue
		}
		ci := g.TensorIndex(name + suffixCounts)
		if ci < 0 {
			return nil, fmt.Errorf("%w: %s has no %s tensor", ErrFormat, t.Name, name+suffixCounts)
		}
		c := g.Tensors[ci]
		if t.Type != formats.F32 || c.Type != formats.F32 {
			return nil, fmt.Errorf("%w: %s: sums are %s and counts %s, want f32", ErrFormat, name, t.Type, c.Type)
		}
		nmat := t.Rows()
		if c.Elements() != nmat {
			return nil, fmt.Errorf("%w: %s: %d counts for %d matrices", ErrFormat, name, c.Elements(), nmat)
		}
		var sums []float32
		var src *io.SectionReader
		var bad error // an index entry's first invalid value or count
		if index {
			src = g.TensorReader(i)
			if err := streamF32(src, name, t.Elements(), &bad); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
		} else if sums, err = readF32(g.TensorReader(i), t.Elements()); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		counts32, err := readF32(g.TensorReader(ci), nmat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		counts := make([]float64, len(counts32))
		for j, v := range counts32 {
			counts[j] = float64(v)
		}
		e := Entry{Name: name, Sums: sums, Counts: counts, tokens: true}
		if index {
			e.src, e.n = src, int(t.Elements())
			if bad == nil {
				bad = checkCounts(name, counts)
			}
			e.bad = bad
		}
		m.Entries = append(m.Entries, e)
	}
	if len(m.Entries) == 0 {
		if arch, ok, _ := g.Metadata.LookupText("general.architecture"); ok {
			return nil, fmt.Errorf("%w: it is a %s model (%d tensors, no %s tensors)", ErrNotImatrix, arch, len(g.Tensors), suffixSums)
		}
		return nil, fmt.Errorf("%w: no %s tensors", ErrNotImatrix, suffixSums)
	}
	if !index {
		if err := m.Validate(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// streamF32 reads the n float32 values of entry name from r a chunk at a
// time, checking them as Validate does (the first error goes to *firstBad
// unless it holds one), where readF32 would fail the same way.
func streamF32(r io.Reader, name string, n int64, firstBad *error) error {
	var raw [4 << 10]byte
	var vals [1 << 10]float32
	for done := int64(0); done < n; {
		k := int(min(n-done, int64(len(vals))))
		if _, err := io.ReadFull(r, raw[:4*k]); err != nil {
			return err
		}
		decodeF32(raw[:4*k], vals[:k])
		if *firstBad == nil {
			*firstBad = checkSums(name, int(done), vals[:k])
		}
		done += int64(k)
	}
	return nil
}

// A count read from a file is checked against the bytes left, which a
// damaged count in a large or sparse file fits: nothing is allocated for
// more than maxPrealloc entries, or chunkValues values, before they are read.
const (
	maxPrealloc = 4096
	chunkValues = 1 << 18 // 1 MiB of float32 values
)

// readF32 reads n float32 values from r a chunk at a time; the slice grows
// (doubling, up to n) as they are read, so a short read fails having
// allocated no more than what was there. Its error is io.ReadFull's for the
// whole read.
func readF32(r io.Reader, n int64) ([]float32, error) {
	raw := make([]byte, 4*min(n, chunkValues))
	out := make([]float32, 0, min(n, chunkValues))
	for int64(len(out)) < n {
		k := int(min(n-int64(len(out)), chunkValues))
		if _, err := io.ReadFull(r, raw[:4*k]); err != nil {
			if errors.Is(err, io.EOF) && len(out) > 0 {
				err = io.ErrUnexpectedEOF // part of the values was there
			}
			return nil, err
		}
		first := len(out)
		if cap(out)-first < k {
			out = append(make([]float32, 0, min(int64(2*cap(out)), n)), out...)
		}
		out = out[:first+k]
		decodeF32(raw[:4*k], out[first:])
	}
	return out, nil
}

// WriteGGUF writes m as a GGUF importance matrix at path (atomically).
// nmat gives the number of matrices of each entry whose count is a single
// number (a .dat entry); entries not in it are written as one matrix.
// Tensors are written in name order, as llama-imatrix does. A file at path
// is replaced only with replace (see gguf.CreateOptions.NoReplace).
//
// A matrix of a .dat file (Format dat) counts calls, a GGUF file tokens:
// as llama-imatrix converts one, its values and counts are multiplied by
// chunkSize (the tokens per call), which is recorded as imatrix.chunk_size,
// and the chunk count is the largest call count. The means stay exact for
// a power-of-two chunkSize. Another matrix keeps its counts, its chunk
// count and the chunk size it records (chunkSize when it records none).
func WriteGGUF(path string, m *Matrix, nmat map[string]int, chunkSize int, replace bool) error {
	if chunkSize <= 0 {
		return fmt.Errorf("imatrix: chunk size %d: must be positive", chunkSize)
	}
	fromDat := m.Format == FormatDat
	chunks := m.Chunks
	if fromDat {
		chunks = m.datChunks()
	} else if m.ChunkSize > 0 {
		chunkSize = m.ChunkSize
	}
	if uint64(chunks) > math.MaxUint32 {
		return fmt.Errorf("imatrix: chunk count %d does not fit imatrix.chunk_count", chunks)
	}
	md := gguf.Metadata{}
	md.Set(keyType, gguf.StringValue("imatrix"))
	md.Set(keyDatasets, gguf.ArrayValue(append([]string{}, m.Datasets...)))
	md.Set(keyChunkCount, gguf.Uint32Value(uint32(chunks)))
	md.Set(keyChunkSize, gguf.Uint32Value(uint32(chunkSize)))
	entries := append([]Entry(nil), m.Entries...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	type data struct{ sums, counts []float32 }
	var infos []gguf.TensorInfo
	var payload []data
	for _, e := range entries {
		n := e.Matrices()
		if len(e.Counts) == 1 {
			if k := nmat[e.Name]; k > 1 {
				n = k
			}
		}
		if n < 1 || len(e.Sums)%n != 0 {
			return fmt.Errorf("imatrix: entry %s: %d values do not split into %d matrices", e.Name, len(e.Sums), n)
		}
		counts := make([]float32, n)
		for j := range counts {
			c := e.Counts[0]
			if len(e.Counts) > 1 {
				c = e.Counts[j]
			}
			if fromDat {
				c *= float64(chunkSize) // the reference: ncall * chunk_size, in integers
			}
			counts[j] = float32(c)
		}
		sums := e.Sums
		if fromDat {
			sums = make([]float32, len(e.Sums))
			for i, v := range e.Sums {
				sums[i] = v * float32(chunkSize)
				if math.IsInf(float64(sums[i]), 0) {
					return fmt.Errorf("imatrix: entry %s: value %d (%v) times the chunk size %d overflows float32", e.Name, i, v, chunkSize)
				}
			}
		}
		if len(e.Name)+len(suffixSums) >= maxTensorName {
			return fmt.Errorf("imatrix: entry %s: the tensor name %s is %d bytes, llama.cpp reads names of %d at most",
				e.Name, e.Name+suffixSums, len(e.Name)+len(suffixSums), maxTensorName-1)
		}
		ne0 := int64(len(e.Sums) / n)
		infos = append(infos,
			gguf.TensorInfo{Name: e.Name + suffixSums, Type: formats.F32, Shape: []int64{ne0, int64(n)}},
			gguf.TensorInfo{Name: e.Name + suffixCounts, Type: formats.F32, Shape: []int64{1, int64(n)}})
		payload = append(payload, data{sums, counts})
	}
	w, err := gguf.Create(path, md, infos, &gguf.CreateOptions{NoReplace: !replace})
	if err != nil {
		return err
	}
	defer w.Abort()
	for _, p := range payload {
		for _, vals := range [][]float32{p.sums, p.counts} {
			buf := make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// Written returns the entry and chunk counts a file of format f made from m
// (WriteDat, WriteGGUF) records: a .dat from a GGUF matrix leaves out the
// entries without data and counts chunks of its chunk size, a GGUF file
// from a .dat matrix records the largest call count.
func Written(m *Matrix, f Format) (entries, chunks int) {
	switch {
	case f == FormatDat && m.Format == FormatGGUF:
		var top float64
		for _, e := range m.Entries {
			top = max(top, slices.Max(append([]float64{0}, e.Counts...)))
		}
		return m.Len() - len(DatSkipped(m)), int(math.Round(top)) / int(m.chunkSize())
	case f == FormatGGUF && m.Format == FormatDat:
		return m.Len(), m.datChunks()
	}
	return m.Len(), m.Chunks
}

// datChunks returns the chunk count of a GGUF file made from the .dat
// matrix m: its largest call count, as llama-imatrix counts it.
func (m *Matrix) datChunks() int {
	chunks := 0
	for _, e := range m.Entries {
		for _, c := range e.Counts {
			chunks = max(chunks, int(c))
		}
	}
	return chunks
}
