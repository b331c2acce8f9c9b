// Package kernel holds what the quantizer families share: the signature of a
// quantization kernel and the numeric helpers the reference's searches use.
//
// Assembly, in every family, follows one scheme. The portable Go code is
// always built and is the reference the assembly is tested against bit for
// bit. Assembly and its Go declarations live in *_amd64.s / *_amd64.go
// files tagged amd64 && !purego; each file pairs with a *_other.go tagged
// !amd64 || purego that sets the same switches (use...) to false and
// declares the same functions as stubs that do nothing and return zero
// values ("nothing done", as klauspost/compress's generic files do): the
// code calls assembly behind its switch, or reads a stub's zero result (n
// = 0 values done, ok = false) and falls back. Struct fields the assembly
// reads come from go_asm.h (qkx3Lanes_D ...), never from hand-written
// offsets. The CI (.ci/run) checks that -tags purego builds list no
// assembly.
package kernel

import "github.com/gquant/gquant/formats"

// Func quantizes nrows rows of ne0 float32 weights (src, row-major) into dst,
// exactly as one reference ggml_quantize_chunk call over the same rows does.
// dst has exactly nrows * RowSize(ne0) bytes. imatrix is nil or holds ne0
// importance weights. Callers (quantize.QuantizeRows) have already checked
// sizes, row-group multiples and finiteness; a Func returns an error only for
// conditions the reference itself refuses.
type Func func(dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error

// Set maps each type a family implements to its kernel.
type Set map[formats.Type]Func

// Options choose among the kernels of a family (each family's Kernels
// takes them): the reference's switches, which quantize.Options carries,
// and Portable for tests. They are a value: kernels made with different
// Options run side by side.
type Options struct {
	// SymmetricQ40 is --symmetric-q40: q4_0 (not q4_0_r8) in the symmetric
	// [-7, 7] range, importance ignored.
	SymmetricQ40 bool
	// SlowIQ2KS is --slow-iq2ks: iq2_ks by the reference's original
	// exhaustive block search.
	SlowIQ2KS bool
	// Portable makes the kernels call the searches of this package with
	// Search.Portable. The families' own assembly has switches of its own,
	// which only their tests set.
	Portable bool
}

// Search returns the searches o asks for.
func (o Options) Search() Search { return Search{Portable: o.Portable} }
