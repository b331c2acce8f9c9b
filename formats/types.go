// Package formats knows the ggml tensor types: their ids and names, block
// geometry, per-row metadata, row interleaving, the fp16/bf16 conversions and
// a dequantizer per type.
package formats

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Type is a ggml tensor type id. It prints by the reference's name ("q4_K").
type Type uint32

// TypeInfo describes the on-disk geometry of a type.
type TypeInfo struct {
	ID           Type
	Name         string // exact spelling used by the reference
	BlockSize    int    // weights per block
	TypeSize     int    // bytes per block
	RowMeta      int    // bytes of per-row header (row scales) before the blocks
	Quantized    bool
	NeedsImatrix bool // the reference's kernel refuses to quantize it without an importance matrix
	// Base and Interleave describe row-interleaved types: Interleave rows of
	// Base stored together (q4_k_r4 = 4 rows of q4_K). For every other type
	// Base is the type itself and Interleave is 1.
	Base       Type
	Interleave int
}

// ErrUnknownType is returned for type ids or names the reference does not know.
var ErrUnknownType = errors.New("formats: unknown type")

var (
	byID   = map[Type]*TypeInfo{}
	byName = map[string]*TypeInfo{} // lower-cased names
)

func init() {
	for i := range typeTable {
		t := &typeTable[i]
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

// Info returns the geometry of t; ok is false for an unknown id.
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

// BlockSize is the number of weights per block (1 for plain float types).
func (t Type) BlockSize() int { return t.mustInfo().BlockSize }

// TypeSize is the number of bytes per block.
func (t Type) TypeSize() int { return t.mustInfo().TypeSize }

// RowMeta is the number of per-row header bytes.
func (t Type) RowMeta() int { return t.mustInfo().RowMeta }

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool { return t.mustInfo().Quantized }

// Base returns the type whose rows an interleaved type stores, or t itself.
func (t Type) Base() Type { return t.mustInfo().Base }

// Interleave returns how many rows an interleaved type stores together (1 if not interleaved).
func (t Type) Interleave() int { return t.mustInfo().Interleave }

// IsInterleaved reports whether t stores several rows together.
func (t Type) IsInterleaved() bool { return t.mustInfo().Interleave > 1 }

// repackable maps each base type to the interleaved type the reference can
// produce from it by a pure byte shuffle (iqk get_repack_info, plus bf16).
var repackable = map[Type]Type{
	Q2_K: Q2_K_R4, Q3_K: Q3_K_R4, Q4_K: Q4_K_R4, Q5_K: Q5_K_R4, Q6_K: Q6_K_R4,
	Q4_0: Q4_0_R8, Q5_0: Q5_0_R4, Q6_0: Q6_0_R4, Q8_0: Q8_0_R8, Q8_KV: Q8_KV_R8,
	IQ2_XXS: IQ2_XXS_R4, IQ2_XS: IQ2_XS_R4, IQ2_S: IQ2_S_R4, IQ3_XXS: IQ3_XXS_R4, IQ3_S: IQ3_S_R4,
	IQ4_NL: IQ4_NL_R4, IQ4_XS: IQ4_XS_R8,
	IQ2_K: IQ2_K_R4, IQ3_K: IQ3_K_R4, IQ4_K: IQ4_K_R4, IQ5_K: IQ5_K_R4, IQ4_KS: IQ4_KS_R4, IQ5_KS: IQ5_KS_R4,
	IQ2_BN: IQ2_BN_R4, MXFP4: MXFP4_R8, BF16: BF16_R16,
}

// RepackTarget returns the interleaved type that base repacks to without
// requantizing, if there is one.
func RepackTarget(base Type) (Type, bool) {
	t, ok := repackable[base]
	return t, ok
}

// RepackableTypes lists the base types RepackTarget accepts, in id order.
func RepackableTypes() []Type {
	var out []Type
	for b := range repackable {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (t Type) mustInfo() *TypeInfo {
	p := byID[t]
	if p == nil {
		panic(fmt.Sprintf("formats: unknown type id %d", uint32(t)))
	}
	return p
}

// ParseType finds a type by name, in any case ("q5_k" is q5_K).
// An unknown name gets an error that suggests the nearest real names.
func ParseType(name string) (Type, error) {
	if p := byName[strings.ToLower(strings.TrimSpace(name))]; p != nil {
		return p.ID, nil
	}
	if s := Suggest(name, TypeNames(), 3); len(s) > 0 {
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
	return int64(p.RowMeta) + int64(p.TypeSize)*(ne0/int64(p.BlockSize)), nil
}

// TensorSize returns the bytes of a tensor of the given shape (ne0 first).
// It fails on a row that is not a multiple of the block size, on negative
// dimensions and on sizes that overflow int64.
func (t Type) TensorSize(shape []int64) (int64, error) {
	if len(shape) == 0 {
		return t.RowSize(1)
	}
	row, err := t.RowSize(shape[0])
	if err != nil {
		return 0, err
	}
	size := row
	for _, d := range shape[1:] {
		if d < 0 {
			return 0, fmt.Errorf("formats: negative dimension %d", d)
		}
		if d != 0 && size > (1<<62)/d {
			return 0, fmt.Errorf("formats: tensor size overflows")
		}
		size *= d
	}
	return size, nil
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
