package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/gquant/gquant/formats"
)

// File is the parsed header of one GGUF file. The tensor data stays in the
// underlying io.ReaderAt until TensorReader is asked for it.
type File struct {
	Version  uint32
	Metadata Metadata
	Tensors  []TensorInfo
	// Alignment is general.alignment, or DefaultAlignment without it.
	Alignment int64
	// DataOffset is where the data section starts, from the beginning of
	// the file: the header's end rounded up to Alignment.
	DataOffset int64
	// Size is the size of the file.
	Size int64

	r     io.ReaderAt
	index map[string]int
}

// TensorIndex returns the position of the named tensor in Tensors, or -1.
func (f *File) TensorIndex(name string) int {
	if i, ok := f.index[name]; ok {
		return i
	}
	return -1
}

// TensorReader returns a reader of tensor i's data (exactly Size bytes).
func (f *File) TensorReader(i int) *io.SectionReader {
	t := &f.Tensors[i]
	return io.NewSectionReader(f.r, f.DataOffset+t.Offset, t.Size)
}

// The smallest encodings, used to reject counts that cannot fit in the
// bytes left before allocating anything for them.
const (
	minKVBytes     = 8 + 4 + 1     // empty key, type, one-byte value
	minTensorBytes = 8 + 4 + 4 + 8 // empty name, n_dims 0, type, offset
	minArrayBytes  = 4 + 8         // element type, length
	maxNesting     = 8             // arrays of arrays deeper than this are refused
)

// A count read from a file is checked against the bytes left, but a sparse
// file (or a large model with one damaged count) has room for billions of
// items, so no allocation is sized from a count before the items are read:
// slices start at most maxPrealloc elements long and grow as items are
// parsed, and long strings and arrays of numbers are read maxChunk bytes at a
// time. Memory so grows only with the bytes really read; maxHeaderBytes
// bounds those (a sparse file reads as zeros: an array of empty strings, say,
// that the file has room for).
const (
	maxPrealloc = 4096
	maxChunk    = 1 << 20
	// maxHeaderBytes is the longest header read. Real headers hold a few
	// MB (a 256k-token vocabulary with its merges is about 12 MB).
	maxHeaderBytes = 256 << 20
)

// Read parses the header of the GGUF file held by r, which is size bytes
// long. It reads only the header (through a buffer, not one ReadAt per
// field) and checks it thoroughly: every count and length against the bytes
// left, value and tensor types, shapes, and that every tensor's data is
// aligned, inside the file and overlaps no other.
func Read(r io.ReaderAt, size int64) (*File, error) {
	d := &decoder{
		br:   bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10),
		size: size,
	}
	f, err := d.readHeader()
	if err != nil {
		return nil, err
	}
	f.r = r
	return f, nil
}

type decoder struct {
	br   *bufio.Reader
	off  int64 // bytes consumed so far
	size int64
	buf  [8]byte
	// scratch holds a short string while it is read.
	scratch [256]byte
}

func (d *decoder) left() int64 { return d.size - d.off }

// room is what is left of the header's bytes: the file's end or the
// header limit, whichever comes first.
func (d *decoder) room() int64 { return max(min(d.size, maxHeaderBytes)-d.off, 0) }

// tooLong is the error for a count (or length) n, read at byte at, that fits
// in the file but not in a header of at most maxHeaderBytes.
func (d *decoder) tooLong(what string, n uint64, at int64) error {
	return fmt.Errorf("%w: %s %d at byte %d runs past %d bytes, the longest header read", ErrCorrupt, what, n, at, int64(maxHeaderBytes))
}

// fullChunked is full for a long p, read maxChunk bytes at a time into the
// end of p (its length grows from len(p) to n), so that memory grows only
// with the bytes read: a file shorter than it claims fails with the error
// full gives, after reading at most what is there.
func (d *decoder) fullChunked(p []byte, n int) ([]byte, error) {
	start := d.off
	for len(p) < n {
		k := min(n-len(p), maxChunk)
		p = grow(p, k, n)
		if err := d.full(p[len(p) : len(p)+k]); err != nil {
			if errors.Is(err, ErrTruncated) {
				return nil, fmt.Errorf("%w: %d bytes needed at byte %d", ErrTruncated, n, start)
			}
			return nil, err
		}
		p = p[:len(p)+k]
	}
	return p, nil
}

func (d *decoder) full(p []byte) error {
	n, err := io.ReadFull(d.br, p)
	d.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %d bytes needed at byte %d", ErrTruncated, len(p), d.off-int64(n))
		}
		return fmt.Errorf("gguf: reading at byte %d: %w", d.off, err)
	}
	return nil
}

func (d *decoder) u8() (uint8, error) {
	err := d.full(d.buf[:1])
	return d.buf[0], err
}

func (d *decoder) u16() (uint16, error) {
	err := d.full(d.buf[:2])
	return binary.LittleEndian.Uint16(d.buf[:]), err
}

func (d *decoder) u32() (uint32, error) {
	err := d.full(d.buf[:4])
	return binary.LittleEndian.Uint32(d.buf[:]), err
}

func (d *decoder) u64() (uint64, error) {
	err := d.full(d.buf[:8])
	return binary.LittleEndian.Uint64(d.buf[:]), err
}

// count reads a 64-bit count of items of at least minBytes each and checks
// that they can fit in the rest of the file (and of the header).
func (d *decoder) count(what string, minBytes int64) (int, error) {
	at := d.off
	n, err := d.u64()
	if err != nil {
		return 0, err
	}
	if n > uint64(d.left()/minBytes) {
		return 0, fmt.Errorf("%w: %s %d at byte %d cannot fit in the %d bytes left", ErrTruncated, what, n, at, d.left())
	}
	if n > uint64(d.room()/minBytes) {
		return 0, d.tooLong(what, n, at)
	}
	return int(n), nil
}

// str reads a length-prefixed string without allocating more than the
// bytes read: a short one (all but a few) through a scratch buffer, so the
// string is its only allocation, a long one a chunk at a time.
func (d *decoder) str(what string) (string, error) {
	at := d.off
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(d.left()) {
		return "", fmt.Errorf("%w: %s at byte %d: length %d runs past the end of the file (%d bytes left)", ErrTruncated, what, at, n, d.left())
	}
	if n > uint64(d.room()) {
		return "", d.tooLong(what+" length", n, at)
	}
	if n <= uint64(len(d.scratch)) {
		p := d.scratch[:n]
		if err := d.full(p); err != nil {
			return "", err
		}
		return string(p), nil
	}
	p, err := d.fullChunked(nil, int(n))
	return string(p), err
}

func (d *decoder) readHeader() (*File, error) {
	var magic [4]byte
	if err := d.full(magic[:]); err != nil {
		return nil, fmt.Errorf("%w (%d bytes)", ErrNotGGUF, d.size)
	}
	if string(magic[:]) != Magic {
		return nil, fmt.Errorf("%w: magic %q", ErrNotGGUF, magic[:])
	}
	version, err := d.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case version&0xffff == 0 && (version>>24 == 2 || version>>24 == 3):
		return nil, fmt.Errorf("%w: big-endian GGUF (version %d byte-swapped) is not supported", ErrVersion, version>>24)
	default:
		return nil, fmt.Errorf("%w %d (only 2 and 3 are read)", ErrVersion, version)
	}
	f := &File{Version: version, Size: d.size}
	nTensors, err := d.u64()
	if err != nil {
		return nil, err
	}
	nKV, err := d.count("key/value count", minKVBytes)
	if err != nil {
		return nil, err
	}
	// The tensor count precedes the key count; check it now that the
	// header's fixed part is read.
	if nTensors > uint64(d.left()/minTensorBytes) {
		return nil, fmt.Errorf("%w: tensor count %d cannot fit in the %d bytes left", ErrTruncated, nTensors, d.left())
	}
	if nTensors > uint64(d.room()/minTensorBytes) {
		return nil, d.tooLong("tensor count", nTensors, 8)
	}

	f.Metadata = make(Metadata, 0, min(nKV, maxPrealloc))
	keys := make(map[string]bool, min(nKV, maxPrealloc))
	for i := 0; i < nKV; i++ {
		at := d.off
		key, err := d.str("key")
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if keys[key] {
			return nil, fmt.Errorf("%w: key %q at byte %d appears twice", ErrCorrupt, key, at)
		}
		keys[key] = true
		typ, err := d.u32()
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		v, err := d.value(ValueType(typ), 0)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		f.Metadata = append(grow(f.Metadata, 1, nKV), KV{Key: key, Value: v})
	}

	n := int(nTensors)
	f.Tensors = make([]TensorInfo, 0, min(n, maxPrealloc))
	f.index = make(map[string]int, min(n, maxPrealloc))
	// One backing array for the Shapes of many tensors: each Shape keeps
	// the array it was cut from when dims grows into a new one.
	dims := make([]int64, 0, 2*min(n, maxPrealloc))
	for i := 0; i < n; i++ {
		f.Tensors = append(grow(f.Tensors, 1, n), TensorInfo{})
		t := &f.Tensors[i]
		at := d.off
		if t.Name, err = d.str("tensor name"); err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		// One map operation per name: a duplicate shows as a map that did
		// not grow.
		f.index[t.Name] = i
		if len(f.index) != i+1 {
			j := slices.IndexFunc(f.Tensors[:i], func(o TensorInfo) bool { return o.Name == t.Name })
			return nil, fmt.Errorf("%w %q: tensors %d and %d (at byte %d)", ErrDuplicateTensor, t.Name, j, i, at)
		}
		nd, err := d.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if nd > MaxDims {
			return nil, fmt.Errorf("%w: tensor %q has %d dimensions, at most %d allowed", ErrCorrupt, t.Name, nd, MaxDims)
		}
		start := len(dims)
		dims = grow(dims, int(nd), MaxDims*n)
		for j := uint32(0); j < nd; j++ {
			ne, err := d.u64()
			if err != nil {
				return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
			}
			if ne > math.MaxInt64 {
				return nil, fmt.Errorf("%w: tensor %q: dimension %d is %d", ErrCorrupt, t.Name, j, ne)
			}
			dims = append(dims, int64(ne))
		}
		t.Shape = dims[start:len(dims):len(dims)]
		typ, err := d.u32()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		t.Type = formats.Type(typ)
		if !t.Type.Known() {
			return nil, fmt.Errorf("%w: tensor %q: %w id %d", ErrCorrupt, t.Name, formats.ErrUnknownType, typ)
		}
		off, err := d.u64()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if off > math.MaxInt64 {
			return nil, fmt.Errorf("%w: tensor %q: offset %d", ErrTensorData, t.Name, off)
		}
		t.Offset = int64(off)
		if t.Size, err = t.Type.TensorSize(t.Shape); err != nil {
			return nil, fmt.Errorf("%w: tensor %q (%s %v): %w", ErrCorrupt, t.Name, t.Type, t.Shape, err)
		}
	}

	if f.Alignment, err = alignment(f.Metadata); err != nil {
		return nil, err
	}
	f.DataOffset = align(d.off, f.Alignment)
	if err := f.checkLayout(); err != nil {
		return nil, err
	}
	return f, nil
}

// alignment returns general.alignment, which the reference reads as a u32
// and uses as a power-of-two mask.
func alignment(md Metadata) (int64, error) {
	v, ok := md.Lookup(KeyAlignment)
	if !ok {
		return DefaultAlignment, nil
	}
	a, isInt := v.Uint()
	if v.Type() != TypeUint32 || !isInt {
		return 0, fmt.Errorf("%w: %s is a %s, must be u32", ErrCorrupt, KeyAlignment, v.Type())
	}
	if a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("%w: %s %d is not a power of two", ErrCorrupt, KeyAlignment, a)
	}
	return int64(a), nil
}

// checkLayout checks that every tensor's data is aligned, lies inside the
// data section and overlaps no other tensor.
func (f *File) checkLayout() error {
	avail := f.Size - f.DataOffset
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset%f.Alignment != 0 {
			return fmt.Errorf("%w: tensor %q: offset %d is not a multiple of the alignment %d", ErrTensorData, t.Name, t.Offset, f.Alignment)
		}
		if t.Offset > avail || t.Size > avail-t.Offset {
			// Offset and size as stored: their sum may not fit an int64.
			return fmt.Errorf("%w: tensor %q: data at offset %d, %d bytes, runs past the end of the file (data section is %d bytes)",
				ErrTensorData, t.Name, t.Offset, t.Size, max(avail, 0))
		}
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	// Files written by the reference store tensors in offset order; only
	// others pay for the sort.
	byOffset := func(a, b int) int {
		ta, tb := &f.Tensors[a], &f.Tensors[b]
		switch {
		case ta.Offset != tb.Offset:
			return cmpInt64(ta.Offset, tb.Offset)
		default:
			return cmpInt64(ta.Size, tb.Size)
		}
	}
	if !slices.IsSortedFunc(order, byOffset) {
		slices.SortFunc(order, byOffset)
	}
	for k := 1; k < len(order); k++ {
		prev, cur := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if prev.Offset+prev.Size > cur.Offset {
			return fmt.Errorf("%w: tensors %q [%d, %d) and %q [%d, %d) overlap", ErrTensorData,
				prev.Name, prev.Offset, prev.Offset+prev.Size, cur.Name, cur.Offset, cur.Offset+cur.Size)
		}
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// value reads one value of type typ; depth counts enclosing arrays.
func (d *decoder) value(typ ValueType, depth int) (Value, error) {
	at := d.off
	switch typ {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeFloat32, TypeUint64, TypeInt64, TypeFloat64:
		var bits uint64
		var err error
		switch typ.size() {
		case 1:
			var b uint8
			b, err = d.u8()
			bits = uint64(b)
			if typ == TypeInt8 {
				bits = uint64(int64(int8(b)))
			}
		case 2:
			var b uint16
			b, err = d.u16()
			bits = uint64(b)
			if typ == TypeInt16 {
				bits = uint64(int64(int16(b)))
			}
		case 4:
			var b uint32
			b, err = d.u32()
			bits = uint64(b)
			if typ == TypeInt32 {
				bits = uint64(int64(int32(b)))
			}
		case 8:
			bits, err = d.u64()
		}
		return Value{typ: typ, bits: bits, ok: true}, err
	case TypeBool:
		b, err := d.u8()
		if err != nil {
			return Value{}, err
		}
		if b > 1 {
			return Value{}, fmt.Errorf("%w: bool at byte %d is %d, not 0 or 1", ErrCorrupt, at, b)
		}
		return Value{typ: TypeBool, bits: uint64(b), ok: true}, nil
	case TypeString:
		s, err := d.str("string")
		return Value{typ: TypeString, str: s, ok: true}, err
	case TypeArray:
		return d.array(depth)
	}
	return Value{}, fmt.Errorf("%w: unknown value type %d at byte %d", ErrCorrupt, uint32(typ), at-4)
}

func (d *decoder) array(depth int) (Value, error) {
	at := d.off
	if depth >= maxNesting {
		return Value{}, fmt.Errorf("%w: arrays nested more than %d deep at byte %d", ErrCorrupt, maxNesting, at)
	}
	et, err := d.u32()
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		return Value{}, fmt.Errorf("%w: array at byte %d: unknown element type %d", ErrCorrupt, at, et)
	}
	minBytes := elem.size()
	switch elem {
	case TypeString:
		minBytes = 8
	case TypeArray:
		minBytes = minArrayBytes
	}
	n, err := d.count("array of "+elem.String()+": length", minBytes)
	if err != nil {
		return Value{}, err
	}
	v := Value{typ: TypeArray, elem: elem, n: n, ok: true}
	switch elem {
	case TypeString:
		s := make([]string, 0, min(n, maxPrealloc))
		for i := 0; i < n; i++ {
			e, err := d.str("string")
			if err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
			s = append(grow(s, 1, n), e)
		}
		v.arr = s
		return v, nil
	case TypeArray:
		s := make([]Value, 0, min(n, maxPrealloc))
		for i := 0; i < n; i++ {
			e, err := d.array(depth + 1)
			if err != nil {
				return Value{}, fmt.Errorf("element %d: %w", i, err)
			}
			s = append(grow(s, 1, n), e)
		}
		v.arr = s
		return v, nil
	case TypeUint8:
		// The bytes are the array.
		raw, err := d.fullChunked(make([]byte, 0, min(n, maxChunk)), n)
		if err != nil {
			return Value{}, err
		}
		v.arr = raw
		return v, nil
	}
	// Numbers are read and decoded a chunk of at most maxChunk bytes at a
	// time; the slice of them grows as they are.
	start := d.off
	size := int(minBytes)
	per := maxChunk / size // elements in a chunk
	raw := make([]byte, min(n, per)*size)
	switch elem {
	case TypeInt8:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []int8, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = int8(raw[i])
			}
			return nil
		})
	case TypeBool:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []bool, raw []byte, first int, at int64) error {
			for i := range s {
				if raw[i] > 1 {
					return fmt.Errorf("%w: bool array element %d at byte %d is %d, not 0 or 1", ErrCorrupt, first+i, at+int64(i), raw[i])
				}
				s[i] = raw[i] == 1
			}
			return nil
		})
	case TypeUint16:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []uint16, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = le.Uint16(raw[2*i:])
			}
			return nil
		})
	case TypeInt16:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []int16, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = int16(le.Uint16(raw[2*i:]))
			}
			return nil
		})
	case TypeUint32, TypeFloat32:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []uint32, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = le.Uint32(raw[4*i:])
			}
			return nil
		})
	case TypeInt32:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []int32, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = int32(le.Uint32(raw[4*i:]))
			}
			return nil
		})
	case TypeUint64, TypeFloat64:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []uint64, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = le.Uint64(raw[8*i:])
			}
			return nil
		})
	case TypeInt64:
		v.arr, err = decodeChunks(d, n, size, raw, start, func(s []int64, raw []byte, _ int, _ int64) error {
			for i := range s {
				s[i] = int64(le.Uint64(raw[8*i:]))
			}
			return nil
		})
	}
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

var le = binary.LittleEndian

// grow returns s with room for k more elements, of the n that a count read
// from the file claims. It doubles the capacity (up to n), so that a slice
// that starts small for a count not yet proven grows in few steps, and to
// exactly n for the common case of a count that holds.
func grow[E any](s []E, k, n int) []E {
	if cap(s)-len(s) >= k {
		return s
	}
	t := make([]E, len(s), min(max(2*cap(s), len(s)+k), max(n, len(s)+k)))
	copy(t, s)
	return t
}

// decodeChunks reads the n elements, of size bytes each, of an array of
// numbers that starts at byte start, len(raw) bytes at a time (a whole
// number of elements, at least one unless n is 0), and decodes each chunk
// with decode, which is given the chunk's elements (to set), its bytes, the
// index of its first element and the byte it starts at. The slice starts no
// longer than a chunk and grows as chunks are read. A file shorter than it
// claims fails as one read of the whole array would.
func decodeChunks[E any](d *decoder, n, size int, raw []byte, start int64, decode func(s []E, raw []byte, first int, at int64) error) ([]E, error) {
	per := len(raw) / size
	s := make([]E, 0, min(n, per))
	for len(s) < n {
		k := min(n-len(s), per)
		chunk := raw[:k*size]
		at := d.off
		if err := d.full(chunk); err != nil {
			if errors.Is(err, ErrTruncated) {
				return nil, fmt.Errorf("%w: %d bytes needed at byte %d", ErrTruncated, n*size, start)
			}
			return nil, err
		}
		first := len(s)
		s = grow(s, k, n)[:first+k]
		if err := decode(s[first:], chunk, first, at); err != nil {
			return nil, err
		}
	}
	return s, nil
}
