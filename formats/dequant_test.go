package formats

import (
	"math"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// quantizersITypes are the types dequant_legacy.go / dequant_kquant.go and
// the interleave_*.go files cover ("Quantizers I").
var quantizersITypes = []Type{
	F32, F16, BF16, BF16_R16, Q4_0, Q4_1, Q5_0, Q5_1, Q6_0, Q8_0, Q1_0_G128, MXFP4, Q8_KV,
	Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K,
	Q4_0_R8, Q5_0_R4, Q6_0_R4, Q8_0_R8, Q2_K_R4, Q3_K_R4, Q4_K_R4, Q5_K_R4, Q6_K_R4,
	MXFP4_R8, Q8_KV_R8, Q8_K_R8,
}

func isQuantizersI(t Type) bool {
	for _, u := range quantizersITypes {
		if u == t {
			return true
		}
	}
	return false
}

func TestQuantizersICanDequantize(t *testing.T) {
	for _, typ := range quantizersITypes {
		if !CanDequantize(typ) {
			t.Errorf("%s: no dequantizer", typ)
		}
	}
}

// goldenCase parses the type of a manifest line, reporting false for types
// outside this file's set.
func goldenCase(t *testing.T, c golden.KernelCase) (Type, bool) {
	typ, err := ParseType(c.Type)
	if err != nil {
		t.Fatalf("manifest type %q: %v", c.Type, err)
	}
	if uint32(typ) != uint32(c.TypeID) || typ.String() != c.Type {
		t.Fatalf("manifest type %q id %d parses as %s (%d)", c.Type, c.TypeID, typ, uint32(typ))
	}
	return typ, isQuantizersI(typ)
}

// sameBits reports the first index where got and want differ as float32 bit
// patterns (so NaN payloads and -0 count), or -1.
func sameBits(got, want []float32) int {
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// TestDequantizeGolden dequantizes every golden kernel output that has a
// reference dequantization (kernels/<type>.<plain|imat>.deq.f32, made by
// the reference's own to_float) and requires every float bit for bit.
func TestDequantizeGolden(t *testing.T) {
	ran := 0
	for _, c := range golden.Kernels(t) {
		typ, ok := goldenCase(t, c)
		if !ok || c.Dequant == "" {
			continue
		}
		ran++
		t.Run(c.Name(), func(t *testing.T) {
			src := golden.ReadFile(t, "kernels", c.File)
			want := golden.F32(golden.ReadFile(t, "kernels", c.Dequant))
			if len(want) != c.Rows*c.Cols {
				t.Fatalf("%s holds %d floats, want %d", c.Dequant, len(want), c.Rows*c.Cols)
			}
			got := make([]float32, c.Rows*c.Cols)
			if err := DequantizeRows(typ, c.Cols, src, got); err != nil {
				t.Fatal(err)
			}
			if i := sameBits(got, want); i >= 0 {
				t.Errorf("row %d col %d: got %g (%#08x), reference %g (%#08x)", i/c.Cols, i%c.Cols,
					got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		})
	}
	if ran == 0 {
		t.Fatal("no golden dequantization cases for these types")
	}
}

// TestDequantizeQ8KR8Golden: q8_k_r8 has no reference dequantization and no
// base file (its quantizer writes q8_K rows with float32 scales, then stores
// them as fp16), so the golden bytes are checked against the input instead:
// each weight is within half a quantization step of the input, the step
// being amax/127 of its row up to the fp16 rounding of the scale. Rows whose
// step is below the fp16 normal range (the 1e-6 rows) lose their scale to
// underflow and can only be checked to be no further off than zero.
func TestDequantizeQ8KR8Golden(t *testing.T) {
	input, _ := golden.KernelInput(t)
	ran := 0
	for _, c := range golden.Kernels(t) {
		typ, _ := goldenCase(t, c)
		if typ != Q8_K_R8 {
			continue
		}
		ran++
		t.Run(c.Name(), func(t *testing.T) {
			got := make([]float32, c.Rows*c.Cols)
			if err := DequantizeRows(typ, c.Cols, golden.ReadFile(t, "kernels", c.File), got); err != nil {
				t.Fatal(err)
			}
			for r := range c.Rows {
				x, y := input[r*c.Cols:(r+1)*c.Cols], got[r*c.Cols:(r+1)*c.Cols]
				var amax, maxErr float64
				for i := range x {
					amax = math.Max(amax, math.Abs(float64(x[i])))
					maxErr = math.Max(maxErr, math.Abs(float64(y[i])-float64(x[i])))
				}
				step := amax / 127
				bound := (0.5 + 127.0/2048) * step
				if step < 1.0/16384 {
					bound = amax
				}
				if maxErr > bound {
					t.Errorf("row %d: largest error %.4g exceeds %.4g (amax %.4g)", r, maxErr, bound, amax)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no golden q8_k_r8 cases")
	}
}

// Synthetic checks for the types the golden kernels do not cover.

func TestDequantizeF32IsBitCopy(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1.5, -3e-42, float32(math.Inf(-1)), math.Float32frombits(0x7fc12345)}
	src := make([]byte, 4*len(vals))
	for i, v := range vals {
		b := math.Float32bits(v)
		src[4*i], src[4*i+1], src[4*i+2], src[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	got := make([]float32, len(vals))
	if err := DequantizeRows(F32, len(vals), src, got); err != nil {
		t.Fatal(err)
	}
	if i := sameBits(got, vals); i >= 0 {
		t.Errorf("value %d: got %#08x, want %#08x", i, math.Float32bits(got[i]), math.Float32bits(vals[i]))
	}
}

func TestDequantizeQ8K(t *testing.T) {
	// One block: d = 0.25, quants j-128 (all int8 values), sums ignored.
	src := make([]byte, q8KSize)
	d := math.Float32bits(0.25)
	src[0], src[1], src[2], src[3] = byte(d), byte(d>>8), byte(d>>16), byte(d>>24)
	for j := range qkK {
		src[q8KQs+j] = byte(j - 128)
	}
	got := make([]float32, qkK)
	if err := DequantizeRows(Q8_K, qkK, src, got); err != nil {
		t.Fatal(err)
	}
	for j := range qkK {
		if want := 0.25 * float32(j-128); got[j] != want {
			t.Fatalf("weight %d: got %g, want %g", j, got[j], want)
		}
	}
}

func TestE8M0ToFP32Half(t *testing.T) {
	for e := range 256 {
		// The reference: 2^(e-128), with e = 0 and 1 subnormal.
		want := float32(math.Ldexp(1, e-128))
		if got := E8M0ToFP32Half(uint8(e)); got != want {
			t.Errorf("e=%d: got %g, want %g", e, got, want)
		}
	}
}

func BenchmarkDequantizeRows(b *testing.B) {
	const rows, ne0 = 16, 4096
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, Q4_K_R4} {
		b.Run(typ.String(), func(b *testing.B) {
			rs, err := typ.RowSize(ne0)
			if err != nil {
				b.Fatal(err)
			}
			src := make([]byte, int(rs)*rows)
			for i := range src {
				src[i] = byte(i * 131)
			}
			dst := make([]float32, rows*ne0)
			b.SetBytes(int64(len(dst) * 4))
			b.ResetTimer()
			for b.Loop() {
				if err := DequantizeRows(typ, ne0, src, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
