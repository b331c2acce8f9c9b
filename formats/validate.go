package formats

import (
	"encoding/binary"
	"errors"
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
