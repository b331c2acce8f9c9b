package imatrix

import (
	"fmt"
	"io"

	"github.com/gquant/gquant/gguf"
)

// An index is a Matrix whose entries hold no values (Sums is nil): names,
// call counts, value counts (Entry.Values) and where the values are in the
// file, read on demand by Entry.ReadSums and Entry.ReadMean. A quantize run
// of a model with per-expert data (an imatrix of a gigabyte or more) so
// holds one tensor's worth at a time, not the whole file. Opening one reads
// the whole file once, in chunks, and fails exactly where Open fails, with
// the same errors. Find, Lookup, Filter and Len work as for a whole matrix;
// what needs the values (Stats, WriteDat, WriteGGUF, Merge) wants Open.

// OpenIndex opens the importance matrix at path, in either format, as an
// index. The file stays open until Close.
func OpenIndex(path string) (*Matrix, error) {
	m, _, err := OpenIndexFiltered(path, nil, nil)
	return m, err
}

// OpenIndexFiltered is OpenIndex followed by Filter(include, exclude), with
// the values checked after the filter, as the reference checks them: an
// entry with a NaN that --exclude-weights drops is no error. loaded is the
// number of entries before the filter (the reference's "loaded N importance
// matrix entries").
func OpenIndexFiltered(path string, include, exclude []string) (m *Matrix, loaded int, err error) {
	f, size, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, 0, fmt.Errorf("imatrix: %w", err)
	}
	if m, err = readIndex(f, size); err == nil {
		loaded = m.Len()
		m.Filter(include, exclude)
		err = m.Validate()
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	m.closer = f
	return m, loaded, nil
}

// ReadIndex reads the importance matrix in r (size bytes, either format) as
// an index; r must stay readable while its entries are read.
func ReadIndex(r io.ReaderAt, size int64) (*Matrix, error) {
	m, err := readIndex(r, size)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// readIndex is ReadIndex without the check of the values (Validate).
func readIndex(r io.ReaderAt, size int64) (*Matrix, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err == nil && string(magic[:]) == gguf.Magic {
		return readGGUF(r, size, true)
	}
	return readDat(io.NewSectionReader(r, 0, size), size, r)
}

// Close closes the file of a matrix opened by OpenIndex (nothing to do for
// others).
func (m *Matrix) Close() error {
	if m == nil || m.closer == nil {
		return nil
	}
	err := m.closer.Close()
	m.closer = nil
	return err
}
