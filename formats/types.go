// Package formats knows the ggml tensor types: their ids and names, block
// geometry, per-row metadata, row interleaving, the fp16/bf16 conversions and
// a dequantizer per type.
package formats

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gquant/gquant/internal/text"
)

// Type is a ggml tensor type id. It prints by the reference's name ("q4_K").
type Type uint32

// TypeInfo is the descriptor of a type: every fact the project keeps about
// it, in one place (table.go), so that no package keeps a table of its own.
// The facts are the reference's; where a field restates a reference table or
// function, the comment names it.
type TypeInfo struct {
	ID        Type
	Name      string // exact spelling used by the reference
	BlockSize int    // weights per block
	TypeSize  int    // bytes per block
	RowMeta   int    // bytes of per-row header (row scales) before the blocks
	Quantized bool
	// NeedsImatrix: the reference's kernel refuses to quantize it without
	// an importance matrix (ggml_quantize_requires_imatrix).
	NeedsImatrix bool
	// RefusedWithoutImatrix: llama-quantize refuses a tensor of this type
	// that has no importance data, unless --ignore-imatrix-rules (its
	// is_very_low_bpw_quant; q2_K joins them in Q2_K_S files, a rule of the
	// file type that recipes.NeedsImatrix adds).
	RefusedWithoutImatrix bool
	// ZeroImportanceFails: the reference's kernel cannot handle an
	// importance slice that is all zeros (NaN scales, or reads of
	// uninitialised memory, so its output is not reproducible).
	ZeroImportanceFails bool
	// TinyImportanceNaN: the kernel writes NaN scales for a block whose
	// importance weights are all zero or tiny (the reference too, whose
	// llama-quantize then stops: "quantized data validation failed");
	// quantize.UniformWhereNotFinite writes such rows otherwise.
	TinyImportanceNaN bool
	// ImatrixFails: the reference's kernel stops on importance weights
	// (the ARM repacks of q4_0 write only plain q4_0 rows, and with
	// weights return no bytes, which ggml_quantize_chunk asserts against).
	ImatrixFails bool
	// Base and Interleave describe row-interleaved types: Interleave rows of
	// Base stored together (q4_k_r4 = 4 rows of q4_K). For every other type
	// Base is the type itself and Interleave is 1.
	Base       Type
	Interleave int
	// RepackTo is the row-interleaved type llama-quantize --repack turns a
	// tensor of this type into (iqk get_repack_info), the type itself when
	// there is none. bf16 and f16 have one only in a reference built for
	// AVX512-BF16.
	RepackTo Type
	// RepackLossy: that conversion changes values (q8_K's fp32 block scales
	// become fp16, f16 becomes bf16), so it is no byte shuffle and
	// RepackTarget does not offer it.
	RepackLossy bool
	// Quantizable: the reference's ggml_quantize_chunk writes this type.
	Quantizable bool
	// ToFloat: the reference has a dequantizer for it (type_traits to_float).
	ToFloat bool
	// CUDA: the reference's CUDA backend multiplies matrices stored in this
	// type (ggml_backend_cuda_supports_op, GGML_OP_MUL_MAT).
	CUDA bool
	// NotLoaded: llama-quantize's loader refuses a tensor of this type,
	// whatever its bytes ("tensor has invalid data"): the check it runs on
	// every tensor it reads (ggml_validate_row_data) has no case for the
	// activation types (q8_1, the _x4 forms, q8_K16 ...), which ggml makes
	// for matrix products and model files do not hold.
	NotLoaded bool
}

// ErrUnknownType is returned for type ids or names the reference does not know.
var ErrUnknownType = errors.New("formats: unknown type")

// ErrNotLoaded is returned for a tensor of a type TypeInfo.NotLoaded: one
// llama-quantize's loader refuses.
var ErrNotLoaded = errors.New("formats: a type llama-quantize's loader refuses (invalid data)")

var (
	byID   = map[Type]*TypeInfo{}
	byName = map[string]*TypeInfo{} // lower-cased names
)

func init() {
	for i := range typeTable {
		t := &typeTable[i]
		// The table leaves out what is the same for most types: a type that
		// is not interleaved is its own base, and one without a repack
		// target is its own (a zero RepackTo is no target, f32 being id 0).
		if t.Interleave == 0 {
			t.Base, t.Interleave = t.ID, 1
		}
		if t.RepackTo == 0 {
			t.RepackTo = t.ID
		}
		if _, dup := byID[t.ID]; dup {
			panic(fmt.Sprintf("formats: type id %d listed twice", uint32(t.ID)))
		}
		byID[t.ID] = t
		key := strings.ToLower(t.Name)
		if _, dup := byName[key]; dup {
			panic("formats: two type names differ only by case: " + t.Name)
		}
		byName[key] = t
	}
}

// Types returns every known type in id order.
func Types() []Type {
	out := make([]Type, 0, len(typeTable))
	for _, t := range typeTable {
		out = append(out, t.ID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Info returns the descriptor of t; ok is false for an unknown id.
func (t Type) Info() (info TypeInfo, ok bool) {
	p := byID[t]
	if p == nil {
		return TypeInfo{}, false
	}
	return *p, true
}

// Known reports whether the reference knows t.
func (t Type) Known() bool { return byID[t] != nil }

func (t Type) String() string {
	if p := byID[t]; p != nil {
		return p.Name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// The accessors below read the descriptor. Type ids come from files, so an
// unknown id never panics: it has the zero geometry, is its own base with
// rows stored singly (Interleave 1), and none of the properties; Info and
// Known tell it apart.

// BlockSize is the number of weights per block (1 for plain float types).
func (t Type) BlockSize() int { return t.info().BlockSize }

// TypeSize is the number of bytes per block.
func (t Type) TypeSize() int { return t.info().TypeSize }

// RowMeta is the number of per-row header bytes.
func (t Type) RowMeta() int { return t.info().RowMeta }

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool { return t.info().Quantized }

// NotLoaded reports TypeInfo.NotLoaded: llama-quantize's loader refuses a
// tensor of type t.
func (t Type) NotLoaded() bool { return t.info().NotLoaded }

// Base returns the type whose rows an interleaved type stores, or t itself.
func (t Type) Base() Type {
	if p := byID[t]; p != nil {
		return p.Base
	}
	return t
}

// Interleave returns how many rows an interleaved type stores together (1 if not interleaved).
func (t Type) Interleave() int { return max(t.info().Interleave, 1) }

// IsInterleaved reports whether t stores several rows together.
func (t Type) IsInterleaved() bool { return t.info().Interleave > 1 }

// unknownInfo is what the accessors read for an id the table lacks.
var unknownInfo TypeInfo

func (t Type) info() *TypeInfo {
	if p := byID[t]; p != nil {
		return p
	}
	return &unknownInfo
}

// RepackTarget returns the interleaved type that base repacks to without
// requantizing (its descriptor's RepackTo, unless that conversion changes
// values), if there is one.
func RepackTarget(base Type) (Type, bool) {
	p := byID[base]
	if p == nil || p.RepackTo == base || p.RepackLossy {
		return base, false
	}
	return p.RepackTo, true
}

// RepackableTypes lists the base types RepackTarget accepts, in id order.
func RepackableTypes() []Type {
	var out []Type
	for _, b := range Types() {
		if _, ok := RepackTarget(b); ok {
			out = append(out, b)
		}
	}
	return out
}

// ParseType finds a type by name, in any case ("q5_k" is q5_K).
// An unknown name gets an error that suggests the nearest real names.
func ParseType(name string) (Type, error) {
	if p := byName[strings.ToLower(strings.TrimSpace(name))]; p != nil {
		return p.ID, nil
	}
	if s := text.Suggest(name, TypeNames(), 3); len(s) > 0 {
		return 0, fmt.Errorf("%w %q (did you mean %s?)", ErrUnknownType, name, strings.Join(s, ", "))
	}
	return 0, fmt.Errorf("%w %q", ErrUnknownType, name)
}

// TypeNames lists every type name in id order.
func TypeNames() []string {
	var out []string
	for _, t := range Types() {
		out = append(out, t.String())
	}
	return out
}

// RowSize returns the bytes of one row of ne0 weights, including the row
// header. ne0 must be a multiple of the block size.
func (t Type) RowSize(ne0 int64) (int64, error) {
	p := byID[t]
	if p == nil {
		return 0, fmt.Errorf("%w id %d", ErrUnknownType, uint32(t))
	}
	if ne0 < 0 || ne0%int64(p.BlockSize) != 0 {
		return 0, fmt.Errorf("formats: %s: row of %d weights is not a multiple of the block size %d", p.Name, ne0, p.BlockSize)
	}
	if ne0/int64(p.BlockSize) > (math.MaxInt64-int64(p.RowMeta))/int64(p.TypeSize) {
		return 0, fmt.Errorf("formats: %s: a row of %d weights overflows", p.Name, ne0)
	}
	return int64(p.RowMeta) + int64(p.TypeSize)*(ne0/int64(p.BlockSize)), nil
}

// MaxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
const MaxDims = 4

// TensorSize returns the bytes a tensor of this type and shape (ne0 first)
// occupies, in memory and in a GGUF file: the reference's ggml_nbytes for
// the shapes its GGUF reader accepts (gguf_tensor_info_sanitize). It fails
// on an unknown type, on more than MaxDims dimensions, on a dimension that
// is not positive, on a row that is not a multiple of the block size and
// on sizes that overflow int64. No dimensions is one weight.
func (t Type) TensorSize(shape []int64) (int64, error) {
	p := byID[t]
	if p == nil {
		return 0, fmt.Errorf("%w id %d", ErrUnknownType, uint32(t))
	}
	if len(shape) > MaxDims {
		return 0, fmt.Errorf("formats: %d dimensions, at most %d allowed", len(shape), MaxDims)
	}
	elements := int64(1)
	for i, d := range shape {
		if d <= 0 {
			return 0, fmt.Errorf("formats: dimension %d is %d, must be positive", i, d)
		}
		if elements > math.MaxInt64/d {
			return 0, fmt.Errorf("formats: shape %v overflows", shape)
		}
		elements *= d
	}
	if t == I2_S {
		// ggml_nbytes sizes BitNet's i2_s tensors specially: 2 bits per
		// weight plus a 32-byte scale trailer.
		return elements/4 + 32, nil
	}
	ne0 := int64(1)
	if len(shape) > 0 {
		ne0 = shape[0]
	}
	row, err := t.RowSize(ne0)
	if err != nil {
		return 0, err
	}
	rows := elements / ne0
	if row > math.MaxInt64/rows {
		return 0, fmt.Errorf("formats: shape %v overflows", shape)
	}
	return row * rows, nil
}

// BitsPerWeight is the storage cost per weight of a row of ne0 weights
// (row headers included).
func (t Type) BitsPerWeight(ne0 int64) float64 {
	rs, err := t.RowSize(ne0)
	if err != nil || ne0 == 0 {
		return 0
	}
	return float64(rs) * 8 / float64(ne0)
}
