package imatrix

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The legacy .dat layout, all little-endian int32 / float32:
//
//	n_entries
//	n_entries times: name_len, name bytes, ncall, nval, nval float32 sums
//	optional trailer: chunk count, dataset_len, dataset bytes

// ReadDat reads a legacy .dat importance matrix. size is the file size, used
// to reject absurd lengths before allocating.
func ReadDat(r io.Reader, size int64) (*Matrix, error) {
	return readDat(r, size, nil)
}

// readDat reads a .dat file from r. With at nil it keeps every entry's
// values; otherwise (an index, see ReadIndex) it checks them as they stream
// past, in chunks, and records where they are in at, the same file.
func readDat(r io.Reader, size int64, at io.ReaderAt) (*Matrix, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	left := size
	readI32 := func(what string) (int32, error) {
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return 0, fmt.Errorf("%w: reading %s: %v", ErrFormat, what, unexpected(err))
		}
		left -= 4
		return int32(binary.LittleEndian.Uint32(b[:])), nil
	}
	// readName reads a name of n bytes a chunk at a time and ends it at
	// its first NUL byte, as the reference reads the names of a .dat file
	// (a C string made of the bytes). Memory grows only with the bytes
	// kept, not with a damaged length, nor with the zeros of a sparse file.
	var chunk []byte
	readName := func(n int32, what string) ([]byte, error) {
		if n < 0 || int64(n) > left {
			return nil, fmt.Errorf("%w: %s of %d bytes with %d left in the file", ErrFormat, what, n, left)
		}
		if chunk == nil {
			chunk = make([]byte, 4<<10)
		}
		var name []byte
		cut := false
		for done := 0; done < int(n); {
			p := chunk[:min(int(n)-done, len(chunk))]
			if _, err := io.ReadFull(br, p); err != nil {
				return nil, fmt.Errorf("%w: reading %s: %v", ErrFormat, what, unexpected(err))
			}
			done += len(p)
			if cut {
				continue
			}
			if i := bytes.IndexByte(p, 0); i >= 0 {
				p, cut = p[:i], true
			}
			name = append(name, p...)
		}
		left -= int64(n)
		return name, nil
	}
	n, err := readI32("entry count")
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: entry count %d", ErrFormat, n)
	}
	if int64(n)*16 > left {
		return nil, fmt.Errorf("%w: %d entries cannot fit in %d bytes", ErrFormat, n, size)
	}
	// Room for the entries grows as they are read: a damaged count in a
	// large (or sparse) file fits in it but must not be allocated for.
	m := &Matrix{Format: FormatDat, Entries: make([]Entry, 0, min(n, maxPrealloc))}
	seen := make(map[string]int, min(n, maxPrealloc))
	for i := 0; i < int(n); i++ {
		nameLen, err := readI32(fmt.Sprintf("name length of entry %d", i+1))
		if err != nil {
			return nil, err
		}
		name, err := readName(nameLen, fmt.Sprintf("name of entry %d", i+1))
		if err != nil {
			return nil, err
		}
		// The reference keeps the last of two entries of one name, so
		// which data a tensor gets depends on the order; a file with
		// duplicates is damaged or a careless concatenation.
		if first, dup := seen[string(name)]; dup {
			return nil, fmt.Errorf("%w: entry %q appears twice (entries %d and %d)", ErrFormat, name, first+1, i+1)
		}
		seen[string(name)] = i
		ncall, err := readI32(fmt.Sprintf("call count of %s", name))
		if err != nil {
			return nil, err
		}
		if ncall < 0 {
			return nil, fmt.Errorf("%w: entry %s: negative call count %d", ErrFormat, name, ncall)
		}
		nval, err := readI32(fmt.Sprintf("value count of %s", name))
		if err != nil {
			return nil, err
		}
		if nval < 1 || int64(nval)*4 > left {
			return nil, fmt.Errorf("%w: entry %s: %d values with %d bytes left", ErrFormat, name, nval, left)
		}
		if at != nil {
			e := Entry{Name: string(name), Counts: []float64{float64(ncall)}, src: at, at: size - left, n: int(nval)}
			if err := streamDat(br, e.Name, int(nval), &e.bad); err != nil {
				return nil, err
			}
			left -= int64(nval) * 4
			m.Entries = append(m.Entries, e)
			continue
		}
		sums, err := readF32(br, int64(nval))
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %v", ErrFormat, "values of "+string(name), unexpected(err))
		}
		left -= int64(nval) * 4
		m.Entries = append(m.Entries, Entry{Name: string(name), Sums: sums, Counts: []float64{float64(ncall)}})
	}
	if left > 0 {
		chunks, err := readI32("chunk count")
		if err != nil {
			return nil, err
		}
		if chunks < 0 {
			return nil, fmt.Errorf("%w: negative chunk count %d", ErrFormat, chunks)
		}
		m.Chunks = int(chunks)
		dlen, err := readI32("dataset name length")
		if err != nil {
			return nil, err
		}
		ds, err := readName(dlen, "dataset name")
		if err != nil {
			return nil, err
		}
		if len(ds) > 0 {
			m.Datasets = []string{string(ds)}
		}
	}
	if at == nil {
		if err := m.Validate(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// streamDat reads the n values of entry name from br a chunk at a time,
// checking them as Validate does; the first invalid value's error goes to
// *firstBad (unless it holds one), reported by Validate.
func streamDat(br *bufio.Reader, name string, n int, firstBad *error) error {
	var raw [4 << 10]byte
	var vals [1 << 10]float32
	for done := 0; done < n; {
		k := min(n-done, len(vals))
		if _, err := io.ReadFull(br, raw[:4*k]); err != nil {
			return fmt.Errorf("%w: reading %s: %v", ErrFormat, "values of "+name, unexpected(err))
		}
		decodeF32(raw[:4*k], vals[:k])
		if *firstBad == nil {
			*firstBad = checkSums(name, done, vals[:k])
		}
		done += k
	}
	return nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteDat writes m in the legacy layout. A matrix read from a GGUF file
// (Format GGUF: token counts, one per matrix) is converted as llama-imatrix
// converts one (its save_imatrix_legacy), byte for byte: entries in name
// order, each with the call count ceil(largest count / chunk size) and
// every value stored as (value / its matrix's count) * that call count in
// float32; a matrix that never saw data stores 1 (a mean of 1, neutral, as
// the reference's quantizers take a GGUF matrix without data); an entry
// without any data is left out (DatSkipped lists them); the trailer's chunk
// count is the largest count / chunk size, its dataset the last one. The
// chunk size is m.ChunkSize, DefaultChunkSize when the file did not record
// one. Other matrices are written as they are: one call count per entry
// (an entry with one count per matrix is scaled to a single count), the
// chunk count, and the datasets joined with ", ".
func WriteDat(w io.Writer, m *Matrix) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	put := func(v int32) { binary.Write(bw, binary.LittleEndian, v) }
	if m.Format == FormatGGUF {
		if err := writeDatFromGGUF(bw, m); err != nil {
			return err
		}
		return bw.Flush()
	}
	if len(m.Entries) == 0 {
		return errNoEntries
	}
	if m.Chunks < 0 || m.Chunks > math.MaxInt32 {
		return fmt.Errorf("imatrix: chunk count %d does not fit a .dat file", m.Chunks)
	}
	put(int32(len(m.Entries)))
	for _, e := range m.Entries {
		put(int32(len(e.Name)))
		bw.WriteString(e.Name)
		count, sums := e.singleCount()
		if count > math.MaxInt32 {
			return fmt.Errorf("imatrix: entry %s: call count %d does not fit a .dat file", e.Name, count)
		}
		put(int32(count))
		put(int32(len(sums)))
		for _, v := range sums {
			binary.Write(bw, binary.LittleEndian, math.Float32bits(v))
		}
	}
	put(int32(m.Chunks))
	ds := joinDatasets(m.Datasets)
	put(int32(len(ds)))
	bw.WriteString(ds)
	return bw.Flush()
}

// errNoEntries refuses a .dat file without entries, which every reader
// refuses ("no data in file").
var errNoEntries = errors.New("imatrix: no entry to write: a .dat file needs one at least")

// chunkSize returns the tokens per chunk that converts m's counts.
func (m *Matrix) chunkSize() int64 {
	if m.ChunkSize > 0 {
		return int64(m.ChunkSize)
	}
	return DefaultChunkSize
}

// tokenCounts returns the entry's counts as the reference holds a GGUF
// file's (int64, each rounded to the nearest integer: std::lround).
func (e *Entry) tokenCounts() []int64 {
	out := make([]int64, len(e.Counts))
	for i, c := range e.Counts {
		out[i] = int64(math.Round(c))
	}
	return out
}

// DatSkipped lists the entries WriteDat leaves out of a .dat file made from
// m: for a matrix of a GGUF file, those whose counts are all zero (no data
// at all), as llama-imatrix does when it writes the legacy format.
func DatSkipped(m *Matrix) []string {
	if m.Format != FormatGGUF {
		return nil
	}
	var out []string
	for _, e := range m.Entries {
		if !slices.ContainsFunc(e.Counts, func(c float64) bool { return math.Round(c) > 0 }) {
			out = append(out, e.Name)
		}
	}
	return out
}

// writeDatFromGGUF writes the GGUF matrix m as a .dat file, as WriteDat
// describes.
func writeDatFromGGUF(bw *bufio.Writer, m *Matrix) error {
	put := func(v int32) { binary.Write(bw, binary.LittleEndian, v) }
	cs := m.chunkSize()
	skip := DatSkipped(m)
	entries := make([]*Entry, 0, len(m.Entries))
	var top int64 // the largest count of all: the trailer's chunk count
	for i := range m.Entries {
		e := &m.Entries[i]
		if slices.Contains(skip, e.Name) {
			continue
		}
		if len(e.Counts) == 0 || len(e.Sums)%len(e.Counts) != 0 {
			return fmt.Errorf("imatrix: entry %s: %d values do not split into %d matrices", e.Name, len(e.Sums), len(e.Counts))
		}
		// Checked before any conversion to an integer, which would wrap.
		for _, c := range e.Counts {
			if c > float64(math.MaxInt32)*float64(cs) {
				return fmt.Errorf("imatrix: entry %s: count %v is more than a .dat file's calls (int32) of %d tokens", e.Name, c, cs)
			}
		}
		top = max(top, slices.Max(e.tokenCounts()))
		entries = append(entries, e)
	}
	slices.SortStableFunc(entries, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	if len(entries) == 0 {
		return errNoEntries
	}
	put(int32(len(entries)))
	for _, e := range entries {
		counts := e.tokenCounts()
		ncall := (slices.Max(counts) + cs - 1) / cs // ceiling: no accidental zeros
		if ncall > math.MaxInt32 {
			return fmt.Errorf("imatrix: entry %s: call count %d does not fit a .dat file", e.Name, ncall)
		}
		put(int32(len(e.Name)))
		bw.WriteString(e.Name)
		put(int32(ncall))
		put(int32(len(e.Sums)))
		per := len(e.Sums) / len(counts)
		for i, v := range e.Sums {
			c := float32(counts[i/per])
			if c == 0 {
				v, c = 1, 1 // a matrix without data: mean 1
			}
			binary.Write(bw, binary.LittleEndian, math.Float32bits(float32(v/c)*float32(ncall)))
		}
	}
	put(int32(top / cs))
	ds := ""
	if len(m.Datasets) > 0 {
		ds = m.Datasets[len(m.Datasets)-1] // the reference keeps the last
	}
	put(int32(len(ds)))
	bw.WriteString(ds)
	return nil
}

// singleCount returns one call count for the entry and the values scaled to it.
func (e *Entry) singleCount() (int, []float32) {
	if len(e.Counts) <= 1 {
		c := 0
		if len(e.Counts) == 1 {
			c = int(math.Round(e.Counts[0]))
		}
		return c, e.Sums
	}
	var top float64
	same := true
	for _, c := range e.Counts {
		top = max(top, c)
		same = same && (c == e.Counts[0] || c == 0)
	}
	if top == 0 {
		return 0, e.Sums
	}
	if same && top == math.Round(top) {
		// One count for every matrix that saw data: nothing to scale,
		// only a matrix without calls is cleared.
		out, copied := e.Sums, false
		per := len(e.Sums) / len(e.Counts)
		for j, c := range e.Counts {
			if c != 0 {
				continue
			}
			if !copied {
				out, copied = append([]float32(nil), e.Sums...), true
			}
			clear(out[j*per : (j+1)*per])
		}
		return int(top), out
	}
	// Scale to a power of two near the largest count: then mean * count
	// and its division by count are exact, so every matrix's mean survives
	// bit for bit; the count stays within a factor of sqrt(2) of the
	// largest, which is what a later merge weighs the file by.
	count := math.Exp2(math.Round(math.Log2(top)))
	out := make([]float32, len(e.Sums))
	if !e.scaleTo(float32(count), out) {
		count = 1 // a mean so large that scaling overflows: store the means
		e.scaleTo(1, out)
	}
	return int(count), out
}

// scaleTo writes each matrix's mean times count into out (zeros for a
// matrix without calls) and reports whether every value stayed finite.
func (e *Entry) scaleTo(count float32, out []float32) bool {
	per := len(e.Sums) / len(e.Counts)
	for j, c := range e.Counts {
		for i := j * per; i < (j+1)*per; i++ {
			out[i] = 0
			if c != 0 {
				out[i] = e.Sums[i] / float32(c) * count
				if math.IsInf(float64(out[i]), 0) {
					return false
				}
			}
		}
	}
	return true
}

func joinDatasets(ds []string) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ", "
		}
		out += d
	}
	return out
}
