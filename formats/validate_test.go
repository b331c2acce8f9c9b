package formats

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Float values: infinities and NaN are found in every lane of the 8-byte
// scan and in the tail; the largest finite values, -0 and subnormals pass.
func TestFirstInvalidFloats(t *testing.T) {
	type bad struct {
		bits uint64
		what string
	}
	for _, tc := range []struct {
		t          Type
		size       int
		fine       []uint64
		infs, nans []uint64
	}{
		{F32, 4, []uint64{0x7f7fffff, 0xff7fffff, 0x80000000, 0x00000001, 0x3f800000}, []uint64{0x7f800000, 0xff800000}, []uint64{0x7fc00000, 0xff800001, 0x7f800001}},
		{F16, 2, []uint64{0x7bff, 0xfbff, 0x8000, 0x0001, 0x3c00}, []uint64{0x7c00, 0xfc00}, []uint64{0x7e00, 0xfc01, 0x7c01}},
		{BF16, 2, []uint64{0x7f7f, 0xff7f, 0x8000, 0x0001, 0x3f80}, []uint64{0x7f80, 0xff80}, []uint64{0x7fc0, 0xff81, 0x7f81}},
		{F64, 8, []uint64{math.Float64bits(math.MaxFloat64), math.Float64bits(math.Copysign(0, -1))}, []uint64{math.Float64bits(math.Inf(-1))}, []uint64{math.Float64bits(math.NaN())}},
	} {
		put := func(b []byte, i int, v uint64) {
			for k := range tc.size {
				b[i*tc.size+k] = byte(v >> (8 * k))
			}
		}
		const n = 19 // two full 8-byte words of f16 and a tail
		for _, v := range tc.fine {
			b := make([]byte, n*tc.size)
			for i := range n {
				put(b, i, v)
			}
			if i, what := FirstInvalid(tc.t, b); i != -1 {
				t.Errorf("%s %#x: unit %d %s", tc.t, v, i, what)
			}
		}
		var cases []bad
		for _, v := range tc.infs {
			cases = append(cases, bad{v, "infinity"})
		}
		for _, v := range tc.nans {
			cases = append(cases, bad{v, "NaN"})
		}
		for _, c := range cases {
			for pos := range n {
				b := make([]byte, n*tc.size)
				put(b, pos, c.bits)
				if pos+1 < n {
					put(b, pos+1, c.bits) // the first of two is found
				}
				if i, what := FirstInvalid(tc.t, b); i != pos || what != c.what {
					t.Errorf("%s %#x at %d: unit %d %q", tc.t, c.bits, pos, i, what)
				}
			}
		}
	}
}

// The checked scales are where the blocks' scales are: an infinity put at
// each checked offset of a block of zeros makes the block dequantize to
// values that are not finite, and is found; the types the reference does
// not check are not checked.
func TestFirstInvalidScales(t *testing.T) {
	checked := []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
		IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ4_NL, Q4_0_4X4, Q4_0_4X8, Q4_0_8X8}
	for _, typ := range checked {
		unit := CheckUnit(typ)
		if unit != typ.TypeSize()*typ.Interleave() {
			t.Errorf("%s: unit %d", typ, unit)
			continue
		}
		spec := validated[typ]
		type at struct {
			off  int
			bits []byte
		}
		var puts []at
		for _, off := range spec.fp16 {
			puts = append(puts, at{off, []byte{0x00, 0x7c}})
		}
		for _, off := range spec.f32 {
			puts = append(puts, at{off, []byte{0, 0, 0x80, 0x7f}})
		}
		if typ == IQ1_M {
			// fp16 0x7c00 from the top nibbles of the four scale words.
			puts = append(puts, at{48, []byte{0, 0, 0, 0, 0, 0xc0, 0, 0x70}})
		}
		if len(puts) == 0 {
			t.Errorf("%s: nothing checked", typ)
		}
		for _, p := range puts {
			b := make([]byte, 3*unit)
			copy(b[unit+p.off:], p.bits)
			if i, what := FirstInvalid(typ, b); i != 1 || what != "infinity" {
				t.Errorf("%s: infinity at %d of block 1: unit %d %q", typ, p.off, i, what)
			}
			if !CanDequantize(typ) || typ.Interleave() > 1 {
				continue
			}
			deq := make([]float32, typ.BlockSize())
			if err := DequantizeRows(typ, typ.BlockSize(), b[unit:2*unit], deq); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			finite := true
			for _, v := range deq {
				finite = finite && !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v))
			}
			if finite {
				t.Errorf("%s: offset %d is no scale: the block still dequantizes to finite values", typ, p.off)
			}
		}
	}
	for _, typ := range []Type{IQ4_KS, Q6_0, IQ2_KT, Q4_K_R4, IQ4_NL_R4, Q8_0_R8, BF16_R16, Q8_KV} {
		if CheckUnit(typ) != 0 {
			t.Errorf("%s is checked", typ)
		}
		b := make([]byte, 4*typ.TypeSize())
		for i := range b {
			b[i] = 0xff
		}
		if i, _ := FirstInvalid(typ, b); i != -1 {
			t.Errorf("%s: unit %d refused", typ, i)
		}
	}
}

// BenchmarkFirstInvalid: the check runs on every byte a run copies, on the
// workers; it must stay far above disk speed.
func BenchmarkFirstInvalid(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7 % 61)
	}
	for _, typ := range []Type{BF16, F16, F32, Q8_0} {
		b.Run(typ.String(), func(b *testing.B) {
			n := len(data) / CheckUnit(typ) * CheckUnit(typ)
			b.SetBytes(int64(n))
			for b.Loop() {
				if i, _ := FirstInvalid(typ, data[:n]); i >= 0 {
					b.Fatal(i)
				}
			}
		})
	}
}

// CheckStored names the row and the column or block of what it refuses,
// counting from the tensor's start (off), rows of an interleaved type by
// their group.
func TestCheckStoredLocates(t *testing.T) {
	for _, tc := range []struct {
		t        Type
		ne0, off int64
		bad      int64  // byte of data set to an infinity of t's scales or values
		want     string // "" for nil
	}{
		{F32, 64, 0, 4 * (64*2 + 5), "row 2 column 5: value +Inf is not finite"},
		{F32, 64, 4 * 64 * 10, 4 * 63, "row 10 column 63: value +Inf is not finite"},
		{BF16, 64, 0, 2 * 64 * 3, "row 3 column 0: value +Inf is not finite"},
		{Q8_0, 64, 34 * 2 * 4, 34, "row 4 block 1: a q8_0 block scale is infinity"},
		{Q4_0_4X4, 64, 0, 72*2 + 6, "rows 4..7 block 0: a q4_0_4x4 block scale is infinity"},
		{IQ4_KS, 256, 0, 4, ""},
	} {
		data := make([]byte, 1024)
		switch tc.t {
		case F32:
			copy(data[tc.bad:], []byte{0, 0, 0x80, 0x7f})
		case BF16:
			copy(data[tc.bad:], []byte{0x80, 0x7f})
		default:
			copy(data[tc.bad:], []byte{0x00, 0x7c})
		}
		if u := CheckUnit(tc.t); u > 0 {
			data = data[:len(data)/u*u]
		}
		err := CheckStored(tc.t, tc.ne0, tc.off, data)
		var ie *InvalidError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.t, err)
		case tc.want != "" && (!errors.As(err, &ie) || !errors.Is(err, ErrInvalidData) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.t, err, tc.want)
		}
	}
}
