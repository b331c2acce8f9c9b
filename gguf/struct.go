package gguf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gquant/gquant/formats"
)

// On-disk constants.
const (
	// Magic is the first four bytes of every GGUF file.
	Magic = "GGUF"
	// DefaultAlignment aligns the data section and every tensor when the
	// metadata has no general.alignment key.
	DefaultAlignment = 32
	// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
	MaxDims = formats.MaxDims
	// Version is the version the writer produces by default.
	Version = 3

	// Metadata keys this package interprets.
	KeyAlignment         = "general.alignment"
	KeySplitNo           = "split.no"            // u16, 0-based index of this shard
	KeySplitCount        = "split.count"         // u16, number of shards
	KeySplitTensorsCount = "split.tensors.count" // i32, tensors in all shards together
)

// Sentinel errors. Every error this package returns for bad input wraps one
// of them, so callers can test with errors.Is; the message carries the detail
// (which key or tensor, at which byte).
var (
	ErrNotGGUF = errors.New("gguf: not a GGUF file")
	ErrVersion = errors.New("gguf: unsupported GGUF version")
	// ErrTruncated is returned when the file ends before the header does,
	// or a length or count runs past the end of the file.
	ErrTruncated = errors.New("gguf: unexpected end of file")
	ErrCorrupt   = errors.New("gguf: corrupt file")
	// ErrTensorData is returned when a tensor's data lies outside the data
	// section, overlaps another tensor or is not aligned.
	ErrTensorData      = errors.New("gguf: bad tensor data layout")
	ErrDuplicateTensor = errors.New("gguf: duplicate tensor name")
	// ErrShard is returned when a shard set is incomplete or inconsistent.
	ErrShard = errors.New("gguf: bad shard set")
	// ErrSameFile is returned by Create when the output would overwrite an input.
	ErrSameFile = errors.New("gguf: output file is one of the inputs")
	// ErrKeyType is wrapped by *KeyTypeError: a metadata key read as one
	// type holds another.
	ErrKeyType = errors.New("gguf: metadata key of the wrong type")
	// ErrWriter is returned for misuse of a Writer: too much or too little
	// data for a tensor, writes after Close, invalid tensor infos.
	ErrWriter = errors.New("gguf: writer")
)

// ValueType is the type id of a metadata value. It prints by the
// reference's short name ("u32", "str", "arr").
type ValueType uint32

// The GGUF metadata value types, with their on-disk ids.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Valid reports whether t is one of the thirteen GGUF value types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// size is the encoded size of one scalar of type t; 0 for strings and arrays.
func (t ValueType) size() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

func (t ValueType) isSigned() bool {
	return t == TypeInt8 || t == TypeInt16 || t == TypeInt32 || t == TypeInt64
}

func (t ValueType) isInteger() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

// Value is one metadata value with its exact GGUF type, so that writing it
// back produces the bytes it was read from. The zero Value is invalid.
//
// Scalars keep their bits (integers zero- or sign-extended, floats as IEEE
// bits, so NaN payloads survive); strings keep their bytes; arrays keep a
// typed slice: []uint8, []int8, []uint16, []int16, []uint32, []int32,
// []float32 (as []uint32 bits), []bool, []string, []uint64, []int64,
// []float64 (as []uint64 bits), or []Value for arrays of arrays.
type Value struct {
	typ  ValueType
	elem ValueType // element type of an array
	bits uint64    // scalar numbers and bools
	str  string
	arr  any
	n    int // array length
	ok   bool
}

// Scalar constructors.

func Uint8Value(v uint8) Value   { return Value{typ: TypeUint8, bits: uint64(v), ok: true} }
func Int8Value(v int8) Value     { return Value{typ: TypeInt8, bits: uint64(int64(v)), ok: true} }
func Uint16Value(v uint16) Value { return Value{typ: TypeUint16, bits: uint64(v), ok: true} }
func Int16Value(v int16) Value   { return Value{typ: TypeInt16, bits: uint64(int64(v)), ok: true} }
func Uint32Value(v uint32) Value { return Value{typ: TypeUint32, bits: uint64(v), ok: true} }
func Int32Value(v int32) Value   { return Value{typ: TypeInt32, bits: uint64(int64(v)), ok: true} }
func Uint64Value(v uint64) Value { return Value{typ: TypeUint64, bits: v, ok: true} }
func Int64Value(v int64) Value   { return Value{typ: TypeInt64, bits: uint64(v), ok: true} }
func Float32Value(v float32) Value {
	return Value{typ: TypeFloat32, bits: uint64(math.Float32bits(v)), ok: true}
}
func Float64Value(v float64) Value {
	return Value{typ: TypeFloat64, bits: math.Float64bits(v), ok: true}
}
func BoolValue(v bool) Value {
	var b uint64
	if v {
		b = 1
	}
	return Value{typ: TypeBool, bits: b, ok: true}
}
func StringValue(v string) Value { return Value{typ: TypeString, str: v, ok: true} }

// ArrayElem lists the Go element types an array Value can be built from.
// float32 and float64 elements are stored as their bits.
type ArrayElem interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64 | Value
}

// ArrayValue returns an array of the GGUF type matching T. A []Value makes
// an array of arrays; every element must itself be an array. The slice is
// kept, not copied (float slices are converted to their bits).
func ArrayValue[T ArrayElem](elems []T) Value {
	v := Value{typ: TypeArray, n: len(elems), ok: true}
	switch s := any(elems).(type) {
	case []uint8:
		v.elem, v.arr = TypeUint8, s
	case []int8:
		v.elem, v.arr = TypeInt8, s
	case []uint16:
		v.elem, v.arr = TypeUint16, s
	case []int16:
		v.elem, v.arr = TypeInt16, s
	case []uint32:
		v.elem, v.arr = TypeUint32, s
	case []int32:
		v.elem, v.arr = TypeInt32, s
	case []float32:
		bits := make([]uint32, len(s))
		for i, f := range s {
			bits[i] = math.Float32bits(f)
		}
		v.elem, v.arr = TypeFloat32, bits
	case []bool:
		v.elem, v.arr = TypeBool, s
	case []string:
		v.elem, v.arr = TypeString, s
	case []uint64:
		v.elem, v.arr = TypeUint64, s
	case []int64:
		v.elem, v.arr = TypeInt64, s
	case []float64:
		bits := make([]uint64, len(s))
		for i, f := range s {
			bits[i] = math.Float64bits(f)
		}
		v.elem, v.arr = TypeFloat64, bits
	case []Value:
		v.elem, v.arr = TypeArray, s
	}
	return v
}

// Type is the value's GGUF type.
func (v Value) Type() ValueType { return v.typ }

// IsValid reports whether v holds a value (the zero Value does not).
func (v Value) IsValid() bool { return v.ok }

// ElemType is the element type of an array (meaningless for scalars).
func (v Value) ElemType() ValueType { return v.elem }

// Len is the number of elements of an array, the length in bytes of a
// string, and 1 for other scalars.
func (v Value) Len() int {
	switch v.typ {
	case TypeArray:
		return v.n
	case TypeString:
		return len(v.str)
	}
	return 1
}

// Elem returns element i of an array as a scalar Value (or array Value for
// arrays of arrays). It panics if v is not an array or i is out of range.
func (v Value) Elem(i int) Value {
	if v.typ != TypeArray {
		panic("gguf: Elem of a non-array value")
	}
	switch s := v.arr.(type) {
	case []uint8:
		return Uint8Value(s[i])
	case []int8:
		return Int8Value(s[i])
	case []uint16:
		return Uint16Value(s[i])
	case []int16:
		return Int16Value(s[i])
	case []uint32:
		if v.elem == TypeFloat32 {
			return Value{typ: TypeFloat32, bits: uint64(s[i]), ok: true}
		}
		return Uint32Value(s[i])
	case []int32:
		return Int32Value(s[i])
	case []bool:
		return BoolValue(s[i])
	case []string:
		return StringValue(s[i])
	case []uint64:
		if v.elem == TypeFloat64 {
			return Value{typ: TypeFloat64, bits: s[i], ok: true}
		}
		return Uint64Value(s[i])
	case []int64:
		return Int64Value(s[i])
	case []Value:
		return s[i]
	}
	panic("gguf: array value without elements")
}

// Uint returns an integer value as uint64; ok is false for other types and
// for negative values.
func (v Value) Uint() (uint64, bool) {
	if !v.typ.isInteger() || (v.typ.isSigned() && int64(v.bits) < 0) {
		return 0, false
	}
	return v.bits, true
}

// Int returns an integer value as int64; ok is false for other types and
// for uint64 values above math.MaxInt64.
func (v Value) Int() (int64, bool) {
	if !v.typ.isInteger() || (v.typ == TypeUint64 && v.bits > math.MaxInt64) {
		return 0, false
	}
	return int64(v.bits), true
}

// Float returns a float32 or float64 value as float64.
func (v Value) Float() (float64, bool) {
	switch v.typ {
	case TypeFloat32:
		return float64(math.Float32frombits(uint32(v.bits))), true
	case TypeFloat64:
		return math.Float64frombits(v.bits), true
	}
	return 0, false
}

// Bool returns a bool value.
func (v Value) Bool() (b, ok bool) {
	if v.typ != TypeBool {
		return false, false
	}
	return v.bits != 0, true
}

// Text returns a string value.
func (v Value) Text() (string, bool) {
	if v.typ != TypeString {
		return "", false
	}
	return v.str, true
}

// Strings returns an array of strings (the slice is shared, not copied).
func (v Value) Strings() ([]string, bool) {
	s, ok := v.arr.([]string)
	return s, ok && v.typ == TypeArray
}

// Slice returns the typed slice behind an array value (see Value); it is
// shared, not copied. float32 and float64 arrays come back as []float32 and
// []float64 copies.
func (v Value) Slice() any {
	if v.typ != TypeArray {
		return nil
	}
	switch v.elem {
	case TypeFloat32:
		bits := v.arr.([]uint32)
		out := make([]float32, len(bits))
		for i, b := range bits {
			out[i] = math.Float32frombits(b)
		}
		return out
	case TypeFloat64:
		bits := v.arr.([]uint64)
		out := make([]float64, len(bits))
		for i, b := range bits {
			out[i] = math.Float64frombits(b)
		}
		return out
	}
	return v.arr
}

// Equal reports whether v and w have the same type and encode to the same bytes.
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ || v.ok != w.ok {
		return false
	}
	switch v.typ {
	case TypeString:
		return v.str == w.str
	case TypeArray:
		if v.elem != w.elem || v.n != w.n {
			return false
		}
		for i := 0; i < v.n; i++ {
			if !v.Elem(i).Equal(w.Elem(i)) {
				return false
			}
		}
		return true
	}
	return v.bits == w.bits
}

// String formats the value for people: numbers as numbers, strings quoted,
// arrays with at most their first 8 elements.
func (v Value) String() string {
	if !v.ok {
		return "<invalid>"
	}
	switch v.typ {
	case TypeString:
		return strconv.Quote(v.str)
	case TypeBool:
		return strconv.FormatBool(v.bits != 0)
	case TypeFloat32:
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(v.bits))), 'g', -1, 32)
	case TypeFloat64:
		return strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64)
	case TypeArray:
		const show = 8
		var b strings.Builder
		fmt.Fprintf(&b, "[%s x %d:", v.elem, v.n)
		for i := 0; i < v.n && i < show; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
			b.WriteString(v.Elem(i).String())
		}
		if v.n > show {
			b.WriteString(", ...")
		}
		b.WriteByte(']')
		return b.String()
	}
	if v.typ.isSigned() {
		return strconv.FormatInt(int64(v.bits), 10)
	}
	return strconv.FormatUint(v.bits, 10)
}

// KV is one metadata key with its value.
type KV struct {
	Key   string
	Value Value
}

// Metadata is the key/value section of a GGUF file in file order. Writers
// reproduce key order exactly, so it is a slice, not a map; lookups are
// linear (files hold tens of keys, not thousands).
type Metadata []KV

// Index returns the position of key, or -1.
func (m Metadata) Index(key string) int {
	for i := range m {
		if m[i].Key == key {
			return i
		}
	}
	return -1
}

// Lookup returns the value of key.
func (m Metadata) Lookup(key string) (Value, bool) {
	if i := m.Index(key); i >= 0 {
		return m[i].Value, true
	}
	return Value{}, false
}

// Text returns the value of a string key.
func (m Metadata) Text(key string) (string, bool) {
	v, _ := m.Lookup(key)
	return v.Text()
}

// Uint returns the value of a non-negative integer key of any integer type.
func (m Metadata) Uint(key string) (uint64, bool) {
	v, _ := m.Lookup(key)
	return v.Uint()
}

// Int returns the value of an integer key of any integer type.
func (m Metadata) Int(key string) (int64, bool) {
	v, _ := m.Lookup(key)
	return v.Int()
}

// KeyTypeError is returned by the typed metadata reads (LookupText,
// LookupInt, ...) for a key that is present but holds a value of another
// type. It wraps ErrKeyType.
type KeyTypeError struct {
	Key   string
	Want  string // what the reader expected: "str", "integer", "array of str" ...
	Found Value
}

func (e *KeyTypeError) Error() string {
	found := e.Found.Type().String()
	if e.Found.Type() == TypeArray {
		found = "array of " + e.Found.ElemType().String()
	}
	return fmt.Sprintf("%v: %s is %s %s, want %s", ErrKeyType, e.Key, found, e.Found, e.Want)
}

func (e *KeyTypeError) Unwrap() error { return ErrKeyType }

// LookupText returns the value of a string key. present is false when the
// key is absent; err is a *KeyTypeError when it holds something else.
func (m Metadata) LookupText(key string) (s string, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return "", false, nil
	}
	s, ok := v.Text()
	if !ok {
		return "", true, &KeyTypeError{Key: key, Want: "str", Found: v}
	}
	return s, true, nil
}

// LookupInt returns the value of an integer key of any integer type (a
// uint64 above math.MaxInt64 is a *KeyTypeError, as is any other type).
func (m Metadata) LookupInt(key string) (n int64, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return 0, false, nil
	}
	n, ok := v.Int()
	if !ok {
		return 0, true, &KeyTypeError{Key: key, Want: "an integer", Found: v}
	}
	return n, true, nil
}

// LookupUint returns the value of a non-negative integer key of any integer
// type (a negative value is a *KeyTypeError, as is any other type).
func (m Metadata) LookupUint(key string) (n uint64, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return 0, false, nil
	}
	n, ok := v.Uint()
	if !ok {
		return 0, true, &KeyTypeError{Key: key, Want: "a non-negative integer", Found: v}
	}
	return n, true, nil
}

// LookupStrings returns the value of an array-of-strings key.
func (m Metadata) LookupStrings(key string) (s []string, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return nil, false, nil
	}
	s, ok := v.Strings()
	if !ok {
		return nil, true, &KeyTypeError{Key: key, Want: "an array of str", Found: v}
	}
	return s, true, nil
}

// LookupArrayLen returns the length of an array key of any element type.
func (m Metadata) LookupArrayLen(key string) (n int, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return 0, false, nil
	}
	if v.Type() != TypeArray {
		return 0, true, &KeyTypeError{Key: key, Want: "an array", Found: v}
	}
	return v.Len(), true, nil
}

// LookupIntOrFirst returns an integer key, or element i of a per-layer
// array of integers (some architectures store head counts per layer). An
// empty array reads as absent.
func (m Metadata) LookupIntOrFirst(key string, i int) (n int64, present bool, err error) {
	v, present := m.Lookup(key)
	if !present {
		return 0, false, nil
	}
	if v.Type() != TypeArray {
		return m.LookupInt(key)
	}
	if !v.ElemType().isInteger() && v.ElemType() != TypeBool {
		return 0, true, &KeyTypeError{Key: key, Want: "an integer or an array of integers", Found: v}
	}
	if i < 0 || i >= v.Len() {
		return 0, false, nil
	}
	if b, ok := v.Elem(i).Bool(); ok && v.ElemType() == TypeBool {
		// The reference's loader reads a per-layer array of bools as 0s
		// and 1s.
		if b {
			return 1, true, nil
		}
		return 0, true, nil
	}
	n, ok := v.Elem(i).Int()
	if !ok {
		return 0, true, &KeyTypeError{Key: fmt.Sprintf("%s[%d]", key, i), Want: "an integer up to 2^63-1", Found: v.Elem(i)}
	}
	return n, true, nil
}

// Set replaces the value of key where it stands, or appends the key at the
// end, the way the reference's gguf_set_val_* does.
func (m *Metadata) Set(key string, v Value) {
	if i := m.Index(key); i >= 0 {
		(*m)[i].Value = v
		return
	}
	*m = append(*m, KV{Key: key, Value: v})
}

// Delete removes key, keeping the order of the others; it reports whether
// the key was there.
func (m *Metadata) Delete(key string) bool {
	i := m.Index(key)
	if i < 0 {
		return false
	}
	*m = append((*m)[:i], (*m)[i+1:]...)
	return true
}

// Clone returns a copy of m that can be changed without changing m (values
// are immutable and shared).
func (m Metadata) Clone() Metadata {
	return append(Metadata(nil), m...)
}

// TensorInfo describes one tensor: its name, shape, type, and where its
// data lies.
type TensorInfo struct {
	Name string
	// Shape lists the dimensions, ne0 (the row length) first, exactly as
	// many as the file stores.
	Shape []int64
	Type  formats.Type
	// Offset is the start of the data relative to the data section. The
	// Writer computes it; values given to Create are ignored.
	Offset int64
	// Size is the data size in bytes, computed from Shape and Type.
	Size int64
}

// Elements returns the number of weights of the tensor.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rows is the number of rows (all dimensions but the first).
func (t TensorInfo) Rows() int64 {
	n := int64(1)
	for _, d := range t.Shape[min(1, len(t.Shape)):] {
		n *= d
	}
	return n
}

// Dims splits a shape as the kernels see it: the row length ne0, the rows
// of each matrix ne1, and the matrices (ne2 x ne3, experts or heads).
// Missing dimensions count as 1.
func Dims(shape []int64) (ne0, rows, mats int64) {
	ne0, rows, mats = 1, 1, 1
	if len(shape) > 0 {
		ne0 = shape[0]
	}
	if len(shape) > 1 {
		rows = shape[1]
	}
	for _, d := range shape[min(2, len(shape)):] {
		mats *= d
	}
	return ne0, rows, mats
}

// align rounds n up to a multiple of a (a power of two).
func align(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }
