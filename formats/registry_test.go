package formats_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
	"github.com/gquant/gquant/repack"
)

// The registries other packages keep (kernels, dequantizers, interleavers,
// file types) must agree with the type descriptors. Where the project does
// not (yet) cover what the reference has, the gap is listed here, so that
// closing it, or opening a new one, fails the test. (types.tsv is checked
// against the descriptors by TestTableMatchesGolden.)

// kernelGaps are the types the reference's ggml_quantize_chunk writes that
// quantize.QuantizeRows does not, and why.
var kernelGaps = map[formats.Type]string{
	formats.F32:      "the pipeline writes f32 itself (the reference's memcpy)",
	formats.Q8_K_R16: "not ported",
}

// dequantGaps are the types the reference can dequantize (to_float) that
// formats.DequantizeRows cannot.
var dequantGaps = map[formats.Type]string{
	formats.I2_S:     "BitNet's layout, not ported",
	formats.Q8_K_R16: "not ported",
}

// dequantExtras are the types formats.DequantizeRows reads although the
// reference has no dequantizer for them.
var dequantExtras = map[formats.Type]string{
	formats.Q8_K:     "ik_llama.cpp's type_traits have no to_float for it (mainline's have); files may still hold it",
	formats.Q4_0_4X4: "the reference's to_float is NULL (its ARM kernels read the layout directly); it is q4_0 rearranged, so gquant reads it",
	formats.Q4_0_4X8: "as q4_0_4x4",
	formats.Q4_0_8X8: "as q4_0_4x4",
}

func TestKernelsAgainstDescriptors(t *testing.T) {
	for _, typ := range quantize.SupportedTypes() {
		info, ok := typ.Info()
		if !ok || !info.Quantizable {
			t.Errorf("kernel for %s, which the reference's ggml_quantize_chunk does not write", typ)
		}
		if _, gap := kernelGaps[typ]; gap {
			t.Errorf("%s has a kernel now: remove it from kernelGaps", typ)
		}
	}
	for _, typ := range formats.Types() {
		info, _ := typ.Info()
		if _, gap := kernelGaps[typ]; info.Quantizable && !gap && !quantize.Supported(typ) {
			t.Errorf("the reference writes %s, QuantizeRows cannot (and kernelGaps does not say why)", typ)
		}
		if (info.NeedsImatrix || info.ZeroImportanceFails) && !info.Quantizable {
			t.Errorf("%s: importance facts for a type the reference does not quantize", typ)
		}
		if quantize.FailsOnZeroImportance(typ) != info.ZeroImportanceFails {
			t.Errorf("%s: quantize.FailsOnZeroImportance disagrees with the descriptor", typ)
		}
	}
	// The kernels refuse to run without importance weights exactly where the
	// descriptor says the reference's do (checked before any row is read,
	// so a call of no rows shows it).
	for _, typ := range quantize.SupportedTypes() {
		_, err := quantize.QuantizeRows(typ, 0, 256, nil, nil)
		info, _ := typ.Info()
		if refused := errors.Is(err, quantize.ErrNeedsImatrix); refused != info.NeedsImatrix || (err != nil && !refused) {
			t.Errorf("%s without importance weights: %v (descriptor: needs them %v)", typ, err, info.NeedsImatrix)
		}
	}
}

func TestDequantizersAgainstDescriptors(t *testing.T) {
	for _, typ := range formats.Types() {
		info, _ := typ.Info()
		_, gap := dequantGaps[typ]
		switch can := formats.CanDequantize(typ); {
		case can && gap:
			t.Errorf("%s can be dequantized now: remove it from dequantGaps", typ)
		case info.ToFloat && !can && !gap:
			t.Errorf("the reference dequantizes %s, DequantizeRows cannot (and dequantGaps does not say why)", typ)
		case can && !info.ToFloat && dequantExtras[typ] == "":
			t.Errorf("DequantizeRows reads %s, which the reference cannot (and dequantExtras does not say why)", typ)
		}
	}
}

func TestRepackAgainstDescriptors(t *testing.T) {
	names := repack.RepackableTypeNames()
	for _, typ := range formats.Types() {
		info, _ := typ.Info()
		target, ok := formats.RepackTarget(typ)
		switch {
		case info.RepackTo == typ:
			if ok {
				t.Errorf("%s: RepackTarget offers %s without a descriptor target", typ, target)
			}
			continue
		case info.RepackLossy:
			if ok {
				t.Errorf("%s: RepackTarget offers the lossy %s", typ, target)
			}
			continue
		}
		// A byte shuffle: same blocks, the target interleaves this type,
		// the formats interleaver (which repack compiles) exists, and repack
		// lists the pair.
		if !ok || target != info.RepackTo {
			t.Errorf("%s: RepackTarget %s, %v; descriptor %s", typ, target, ok, info.RepackTo)
		}
		if target.Base() != typ || !target.IsInterleaved() || target.BlockSize() != typ.BlockSize() || target.TypeSize() != typ.TypeSize() {
			t.Errorf("repack %s -> %s: the target is not %s's interleaved form", typ, target, typ)
		}
		if !formats.CanInterleave(target) {
			t.Errorf("repack %s -> %s: no interleaver", typ, target)
		}
		if !strings.Contains(names, typ.String()+"->"+target.String()) {
			t.Errorf("repack.RepackableTypeNames lacks %s->%s: %s", typ, target, names)
		}
	}
	// Every interleaver converts between a type and its descriptor's base.
	for _, typ := range formats.Types() {
		if formats.CanInterleave(typ) && !typ.IsInterleaved() {
			t.Errorf("interleaver for %s, which is not row-interleaved", typ)
		}
	}
}

func TestFileTypesAgainstDescriptors(t *testing.T) {
	for _, ft := range recipes.FileTypes() {
		d, err := ft.DefaultType()
		if err != nil {
			t.Errorf("%s: %v", ft, err)
			continue
		}
		if !d.Known() {
			t.Errorf("%s: default type %s is unknown", ft, d)
			continue
		}
		// Every built-in mixture starts from the default type; it must be
		// one the project can write, or a listed gap.
		if _, gap := kernelGaps[d]; !gap && !quantize.Supported(d) {
			t.Errorf("%s: no kernel for its default type %s", ft, d)
		}
	}
	// llama-quantize's refusal of very low-bit types without importance data
	// is the descriptor's, outside the file-type and name exceptions.
	for _, typ := range formats.Types() {
		info, _ := typ.Info()
		if got := recipes.NeedsImatrix(typ, recipes.FileTypeQ4_K_M, "blk.0.ffn_up.weight"); got != info.RefusedWithoutImatrix {
			t.Errorf("recipes.NeedsImatrix(%s) = %v, descriptor %v", typ, got, info.RefusedWithoutImatrix)
		}
		if info.NeedsImatrix && !info.RefusedWithoutImatrix {
			t.Errorf("%s: the kernel needs importance data but llama-quantize does not refuse it", typ)
		}
	}
}
