package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrInvalidData is the error of a tensor that holds what FirstInvalid
// finds: llama-quantize's loader refuses it ("tensor has invalid data").
var ErrInvalidData = errors.New("invalid data (an infinity or NaN llama-quantize refuses)")

// The reference's model loader checks every tensor it reads
// (ggml_validate_row_data, llama-quantize loads with check_tensors), copied
// or converted: float values must not be infinities or NaN, and neither
// may the fp16 (or f32) block scales of the older quantized types. The ik
// types and the row-interleaved ones are not checked. FirstInvalid is that
// check.

// validated is, for each checked quantized type, where its scales are in
// a unit of UnitBytes: fp16 byte offsets (f32 for q8_K).
var validated = map[Type]struct {
	fp16 []int
	f32  []int
}{
	Q4_0: {fp16: []int{0}}, Q4_1: {fp16: []int{0, 2}}, Q5_0: {fp16: []int{0}}, Q5_1: {fp16: []int{0, 2}},
	Q8_0: {fp16: []int{0}},
	// block_q2_K ends with d and dmin; block_q3_K and block_q6_K with d.
	Q2_K: {fp16: []int{80, 82}}, Q3_K: {fp16: []int{108}}, Q4_K: {fp16: []int{0, 2}}, Q5_K: {fp16: []int{0, 2}},
	Q6_K: {fp16: []int{208}}, Q8_K: {f32: []int{0}},
	IQ1_S: {fp16: []int{0}}, IQ2_XXS: {fp16: []int{0}}, IQ2_XS: {fp16: []int{0}}, IQ2_S: {fp16: []int{0}},
	IQ3_XXS: {fp16: []int{0}}, IQ3_S: {fp16: []int{0}}, IQ4_XS: {fp16: []int{0}}, IQ4_NL: {fp16: []int{0}},
	// The ARM repacks hold the scales of their 4 or 8 rows first.
	Q4_0_4X4: {fp16: []int{0, 2, 4, 6}}, Q4_0_4X8: {fp16: []int{0, 2, 4, 6}},
	Q4_0_8X8: {fp16: []int{0, 2, 4, 6, 8, 10, 12, 14}},
	IQ1_M:    {}, // its fp16 scale is spread over the block's last 8 bytes
}

// CheckUnit is the bytes FirstInvalid judges at a time for type t: a value
// of a float type, a block (the 4 or 8 rows' blocks of the ARM repacks) of
// a checked quantized type; 0 for a type the reference does not check.
func CheckUnit(t Type) int {
	switch t {
	case F32:
		return 4
	case F16, BF16:
		return 2
	case F64:
		return 8
	}
	if _, ok := validated[t]; !ok {
		return 0
	}
	return t.TypeSize() * t.Interleave()
}

// FirstInvalid returns the index of the first unit (CheckUnit bytes) of
// data, bytes of type t, that the reference's loader refuses, and what it
// holds ("NaN" or "infinity"), or -1. data is whole units.
func FirstInvalid(t Type, data []byte) (index int, what string) {
	switch t {
	case F32:
		return firstInvalidWords(data, 4, 0x7f8000007f800000, 0x0080000000800000, 0x8000000080000000, func(i int) string {
			return nanOrInf(binary.LittleEndian.Uint32(data[4*i:])&0x7fffff != 0)
		})
	case F16:
		return firstInvalidWords(data, 2, 0x7c007c007c007c00, 0x0400040004000400, 0x8000800080008000, func(i int) string {
			return nanOrInf(binary.LittleEndian.Uint16(data[2*i:])&0x3ff != 0)
		})
	case BF16:
		// (v & 0x7fff) >= 0x7f80: adding 0x80 to the 15 low bits carries
		// into the sign bit exactly then.
		return firstInvalidWords(data, 2, 0x7fff7fff7fff7fff, 0x0080008000800080, 0x8000800080008000, func(i int) string {
			return nanOrInf(binary.LittleEndian.Uint16(data[2*i:])&0x7fff != 0x7f80)
		})
	case F64:
		for i := 0; i+8 <= len(data); i += 8 {
			if v := math.Float64frombits(binary.LittleEndian.Uint64(data[i:])); math.IsNaN(v) || math.IsInf(v, 0) {
				return i / 8, nanOrInf(math.IsNaN(v))
			}
		}
		return -1, ""
	}
	spec, ok := validated[t]
	unit := CheckUnit(t)
	if !ok || unit == 0 {
		return -1, ""
	}
	for i := 0; i+unit <= len(data); i += unit {
		b := data[i : i+unit]
		for _, off := range spec.fp16 {
			if h := binary.LittleEndian.Uint16(b[off:]); h&0x7c00 == 0x7c00 {
				return i / unit, nanOrInf(h&0x3ff != 0)
			}
		}
		for _, off := range spec.f32 {
			if w := binary.LittleEndian.Uint32(b[off:]); w&0x7f800000 == 0x7f800000 {
				return i / unit, nanOrInf(w&0x7fffff != 0)
			}
		}
		if t == IQ1_M {
			// block_iq1_m: qs[32], qh[16], scales[8]; the top nibble of
			// each of the four uint16 scales is a nibble of the fp16 scale.
			sc := b[48:56]
			s := func(k int) uint16 { return binary.LittleEndian.Uint16(sc[2*k:]) }
			h := s(0)>>12 | s(1)>>8&0x00f0 | s(2)>>4&0x0f00 | s(3)&0xf000
			if h&0x7c00 == 0x7c00 {
				return i / unit, nanOrInf(h&0x3ff != 0)
			}
		}
	}
	return -1, ""
}

// firstInvalidWords scans data 8 bytes at a time for a lane of size bytes
// whose bits under mask, plus add, reach a lane's top bit (top): an
// exponent of all ones (or, for bf16, a magnitude of at least infinity's).
// The rest is checked a lane at a time. kind says what the lane found holds.
func firstInvalidWords(data []byte, size int, mask, add, top uint64, kind func(i int) string) (int, string) {
	lanes := 8 / size
	laneMask := uint64(1)<<(8*size) - 1
	i := 0
	// 32 bytes at a time while nothing is found (one branch per 32 bytes:
	// the check runs on every byte a run copies), then word by word.
	for ; i+32 <= len(data); i += 32 {
		b := data[i : i+32]
		w0 := binary.LittleEndian.Uint64(b[0:])&mask + add
		w1 := binary.LittleEndian.Uint64(b[8:])&mask + add
		w2 := binary.LittleEndian.Uint64(b[16:])&mask + add
		w3 := binary.LittleEndian.Uint64(b[24:])&mask + add
		if (w0|w1|w2|w3)&top != 0 {
			break
		}
	}
	for ; i+8 <= len(data); i += 8 {
		if (binary.LittleEndian.Uint64(data[i:])&mask+add)&top == 0 {
			continue
		}
		for k := range lanes {
			v := binary.LittleEndian.Uint64(data[i:]) >> (8 * size * k) & laneMask
			if (v&mask+add)&top&laneMask != 0 {
				return i/size + k, kind(i/size + k)
			}
		}
	}
	for ; i+size <= len(data); i += size {
		var v uint64
		for k := size - 1; k >= 0; k-- {
			v = v<<8 | uint64(data[i+k])
		}
		if (v&mask+add)&top&laneMask != 0 {
			return i / size, kind(i / size)
		}
	}
	return -1, ""
}

func nanOrInf(nan bool) string {
	if nan {
		return "NaN"
	}
	return "infinity"
}

// InvalidError locates what FirstInvalid finds in a tensor: Row is the
// tensor's row (the first of an interleaved group of Rows rows), Column the
// value's column for a float type (-1 for a block), Block the block in the
// row (group) for a quantized type, Value the value, What "NaN" or
// "infinity". It unwraps to ErrInvalidData.
type InvalidError struct {
	Type   Type
	Row    int64
	Rows   int64
	Column int64
	Block  int64
	Value  float32
	What   string
}

func (e *InvalidError) Error() string {
	if e.Column >= 0 {
		return fmt.Sprintf("row %d column %d: value %v is not finite", e.Row, e.Column, e.Value)
	}
	rows := fmt.Sprintf("row %d", e.Row)
	if e.Rows > 1 {
		rows = fmt.Sprintf("rows %d..%d", e.Row, e.Row+e.Rows-1)
	}
	return fmt.Sprintf("%s block %d: a %s block scale is %s, which llama-quantize refuses (invalid data)", rows, e.Block, e.Type, e.What)
}

func (e *InvalidError) Unwrap() error { return ErrInvalidData }

// CheckStored checks data, the bytes of a tensor of type t with rows of ne0
// weights from byte off on (whole units of CheckUnit), as llama-quantize's
// loader checks every tensor it reads, and returns an *InvalidError for the
// first value or block it refuses, or nil.
func CheckStored(t Type, ne0, off int64, data []byte) error {
	unit := CheckUnit(t)
	if unit == 0 {
		return nil
	}
	i, what := FirstInvalid(t, data)
	if i < 0 {
		return nil
	}
	rowSize, err := t.RowSize(ne0)
	if err != nil {
		return err
	}
	at := off + int64(i)*int64(unit)
	group := int64(t.Interleave())
	e := &InvalidError{Type: t, Row: at / (rowSize * group) * group, Rows: group, Column: -1, What: what}
	within := at % (rowSize * group)
	if !t.IsQuantized() {
		v := make([]float32, 1)
		if err := DequantizeRows(t, 1, data[i*unit:(i+1)*unit], v); err != nil {
			return err
		}
		e.Column, e.Value = within/int64(unit), v[0]
		return e
	}
	e.Block = within / int64(unit)
	return e
}
