package legacy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
)

// bf16Classes are bfloat16 bit patterns of every class, with both signs:
// zeros, denormals, the smallest and largest normals, ones, ties of the
// q8 rounding, the largest finite, infinities and NaNs (quiet, signalling,
// all ones).
var bf16Classes = func() []uint16 {
	var c []uint16
	for _, h := range []uint16{0x0000, 0x0001, 0x0040, 0x007f, 0x0080, 0x0081, 0x3f80, 0x3fc0, 0x4000, 0x4580,
		0x42fe, 0x42ff, 0x4300, 0x7f00, 0x7f7f, 0x7f80, 0x7f81, 0x7fc0, 0x7fff} {
		c = append(c, h, h|0x8000)
	}
	return c
}()

// bf16Row returns n bfloat16 values (little-endian bytes): random patterns
// of one of the classes below (kind), seeded by seed.
func bf16Row(n, kind int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(kind)))
	b := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		var h uint16
		switch kind {
		case 0: // any pattern, NaNs and infinities included
			h = uint16(r.Uint32())
		case 1: // the classes
			h = bf16Classes[r.IntN(len(bf16Classes))]
		case 2: // weights of a model
			h = formats.FP32ToBF16(float32(0.02 * r.NormFloat64()))
		case 3: // denormals and zeros only
			h = uint16(r.IntN(0x80)) | uint16(r.IntN(2))<<15
		case 4: // finite patterns of every exponent
			h = uint16(r.IntN(0x7f80)) | uint16(r.IntN(2))<<15
		}
		binary.LittleEndian.PutUint16(b[2*i:], h)
	}
	return b
}

// widenBF16 is src as float32 rows.
func widenBF16(src []byte) []float32 {
	x := make([]float32, len(src)/2)
	for i := range x {
		x[i] = formats.BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
	return x
}

// q8KVBF16Lengths are row lengths around every tail the kernels leave to
// Go (multiples of 32 values) and around the AVX2 kernel's 128-step sums.
var q8KVBF16Lengths = func() []int {
	var n []int
	for i := 0; i <= 130; i++ {
		n = append(n, i)
	}
	for _, m := range []int{4064, 4096, 4128, 8192} {
		n = append(n, m-31, m-1, m, m+1, m+31)
	}
	return n
}()

// q8KVBF16Slow is the quants and sum of quantizeQ8KVBF16Row as
// cvtRoundSat gives them for the widened values, whatever mul.
func q8KVBF16Slow(src []byte, mul float32) ([]byte, int32) {
	x := widenBF16(src)
	q := make([]byte, len(x))
	var isum int32
	for j, v := range x {
		l, b := cvtRoundSat(float32(mul * v))
		isum += l
		q[j] = b
	}
	return q, isum
}

// TestQ8KVBF16RowMatchesSlow holds quantizeQ8KVBF16Row at each assembly
// level to q8KVBF16Slow where its contract holds (every |mul*v| below
// 127.5: mul from a row's normal scale), quants and sum, for every length
// in q8KVBF16Lengths and every value class; and the assembly alone
// (quantizeQ8KVBF16SIMD, whose quants are cvtRoundSat's for any mul) on
// multipliers that take the products past the int8 range, with infinities
// and NaNs, which saturate as the reference's conversions do, and on all
// 65536 patterns. The AVX-512 kernel's sum is the int32 one for any mul.
func TestQ8KVBF16RowMatchesSlow(t *testing.T) {
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	all := make([]byte, 2<<16)
	for i := range 1 << 16 {
		binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
	}
	for _, level := range asmLevels {
		setAsmLevel(level)
		for _, n := range q8KVBF16Lengths {
			for kind := 0; kind <= 4; kind++ {
				src := bf16Row(n, kind, uint64(n)+7)
				next := bf16Row(n, 2, 9)
				if m := formats.BF16MaxMagnitude(src); m < 0x7f80 && m > 0 && formats.BF16ToFP32(m)/127 >= math.SmallestNonzeroFloat32*(1<<23) {
					mul := 1 / (formats.BF16ToFP32(m) / 127)
					q := make([]byte, n)
					isum := quantizeQ8KVBF16Row(q, src, next, mul)
					wq, wsum := q8KVBF16Slow(src, mul)
					if !bytes.Equal(q, wq) || isum != wsum {
						t.Fatalf("level %d n %d kind %d mul %v: quant %d differs, sum %d, want %d", level, n, kind, mul, firstDiff(q, wq), isum, wsum)
					}
				}
				for _, mul := range []float32{1, 127, 1e-30, 3e38, float32(math.Inf(1)), float32(math.NaN())} {
					checkQ8KVBF16SIMD(t, fmt.Sprintf("level %d n %d kind %d mul %v", level, n, kind, mul), src, next, mul, level)
				}
			}
		}
		for _, mul := range []float32{1, 1e-38, 1e38, 127 / 3.3895314e38} {
			checkQ8KVBF16SIMD(t, fmt.Sprintf("level %d all patterns mul %v", level, mul), all, all, mul, level)
		}
	}
}

// checkQ8KVBF16SIMD checks quantizeQ8KVBF16SIMD's quants (and, at level 2,
// its sum) against q8KVBF16Slow on the prefix it takes, which is the
// longest multiple of 32 values (none at level 0).
func checkQ8KVBF16SIMD(t *testing.T, name string, src, next []byte, mul float32, level int) {
	t.Helper()
	n := len(src) / 2
	q := make([]byte, n)
	done, isum := quantizeQ8KVBF16SIMD(q, src, next, mul)
	if want := n &^ 31; level == 0 && done != 0 || level > 0 && done != want {
		t.Fatalf("%s: took %d values", name, done)
	}
	wq, wsum := q8KVBF16Slow(src[:2*done], mul)
	if !bytes.Equal(q[:done], wq) {
		t.Fatalf("%s: quant %d differs", name, firstDiff(q[:done], wq))
	}
	if level == 2 && isum != wsum {
		t.Fatalf("%s: sum %d, want %d", name, isum, wsum)
	}
}

// TestQuantizeQ8KVBF16MatchesFloat32 holds QuantizeQ8KVBF16 at each
// assembly level to quantizeQ8KV on the widened rows (the golden-tested
// path) and to q8KVSlow: for every row length in q8KVBF16Lengths, rows of
// every class (zero, denormal and subnormal-scale rows, which go the
// float32 way, tiny, model-like and huge ones up to the largest finite
// bf16), and all finite bf16 patterns as rows of 256.
func TestQuantizeQ8KVBF16MatchesFloat32(t *testing.T) {
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	for _, level := range asmLevels {
		setAsmLevel(level)
		for _, ne0 := range q8KVBF16Lengths {
			if ne0 == 0 {
				continue
			}
			var src []byte
			for kind := 1; kind <= 4; kind++ {
				for seed := range uint64(2) {
					row := bf16Row(ne0, kind, seed)
					if kind == 1 {
						// The classes without the non-finite ones.
						for j := 0; j < ne0; j++ {
							if binary.LittleEndian.Uint16(row[2*j:])&0x7fff >= 0x7f80 {
								binary.LittleEndian.PutUint16(row[2*j:], uint16(j))
							}
						}
					}
					src = append(src, row...)
				}
			}
			src = append(src, make([]byte, 2*ne0)...) // a zero row
			for _, x := range edgeRows(ne0) {
				for _, v := range x {
					h := formats.FP32ToBF16(v)
					if h&0x7fff >= 0x7f80 {
						h = h&0x8000 | 0x7f7f // MaxFloat32 rounds to infinity
					}
					src = binary.LittleEndian.AppendUint16(src, h)
				}
			}
			for len(src)/(2*ne0)%8 != 0 {
				src = append(src, bf16Row(ne0, 2, uint64(len(src)))...) // whole groups for q8_KV_r8
			}
			checkQ8KVBF16(t, fmt.Sprintf("level %d ne0 %d", level, ne0), src, ne0)
		}
		var all []byte
		for i := range 1 << 16 {
			h := uint16(i)
			if h&0x7fff >= 0x7f80 {
				h = 0x7f7f // the largest finite for infinities and NaNs
			}
			all = binary.LittleEndian.AppendUint16(all, h)
		}
		checkQ8KVBF16(t, fmt.Sprintf("level %d all patterns", level), all, 256)
	}
}

// checkQ8KVBF16 checks QuantizeQ8KVBF16 on the finite rows src against
// quantizeQ8KV and q8KVSlow, and QuantizeQ8KVR8BF16 against quantizeQ8KVR8
// (src holds groups of 8 rows).
func checkQ8KVBF16(t *testing.T, name string, src []byte, ne0 int) {
	t.Helper()
	nrows := len(src) / (2 * ne0)
	x := widenBF16(src)
	r8 := make([]byte, nrows*(4+ne0))
	wantR8 := make([]byte, nrows*(4+ne0))
	if !QuantizeQ8KVR8BF16(r8, src, ne0, 0x7f80) {
		t.Fatalf("%s: q8_KV_r8 refused finite rows", name)
	}
	if err := quantizeQ8KVR8(wantR8, x, nrows, ne0, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(r8, wantR8) {
		t.Fatalf("%s: q8_KV_r8 differs from quantizeQ8KVR8 at byte %d", name, firstDiff(r8, wantR8))
	}
	rowSize := 8 + ne0
	got := make([]byte, nrows*rowSize)
	want := make([]byte, nrows*rowSize)
	slow := make([]byte, nrows*rowSize)
	if !QuantizeQ8KVBF16(got, src, ne0, 0x7f80) {
		t.Fatalf("%s: refused finite rows", name)
	}
	if err := quantizeQ8KV(want, x, nrows, ne0, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for r := 0; r < nrows; r++ {
		q8KVSlow(slow[r*rowSize:], x[r*ne0:(r+1)*ne0])
	}
	for r := 0; r < nrows; r++ {
		g, w, s := got[r*rowSize:(r+1)*rowSize], want[r*rowSize:(r+1)*rowSize], slow[r*rowSize:(r+1)*rowSize]
		if !bytes.Equal(g, w) {
			t.Fatalf("%s row %d: differs from quantizeQ8KV at byte %d", name, r, firstDiff(g, w))
		}
		if !bytes.Equal(g, s) {
			t.Fatalf("%s row %d: differs from q8KVSlow at byte %d", name, r, firstDiff(g, s))
		}
	}
}

// TestQuantizeQ8KVBF16Limit checks that QuantizeQ8KVBF16 stops at the first
// row with a magnitude pattern of limit or more, an infinity or a NaN
// whatever the limit, having written the rows before it as quantizeQ8KV
// does, and takes a row just below the limit.
func TestQuantizeQ8KVBF16Limit(t *testing.T) {
	const nrows, ne0 = 5, 100
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	for _, level := range asmLevels {
		setAsmLevel(level)
		for _, c := range []struct {
			h, limit uint16
			ok       bool
		}{
			{0x4580, 0x4580, false}, {0xc57f, 0x4580, true}, {0xc580, 0x4580, false},
			{0x7f7f, 0x7f80, true}, {0x7f80, 0x7f80, false}, {0xff80, 0xffff, false},
			{0x7fc0, 0xffff, false}, {0xffff, 0x7fff, false}, {0x7f81, 0x7f82, false},
		} {
			for _, row := range []int{0, 2, nrows - 1} {
				for _, col := range []int{0, 31, 32, ne0 - 1} {
					src := bf16Row(nrows*ne0, 2, 3)
					binary.LittleEndian.PutUint16(src[2*(row*ne0+col):], c.h)
					dst := make([]byte, nrows*(8+ne0))
					ok := QuantizeQ8KVBF16(dst, src, ne0, c.limit)
					if ok != c.ok {
						t.Fatalf("level %d %#x (limit %#x) at row %d column %d: %v, want %v", level, c.h, c.limit, row, col, ok, c.ok)
					}
					done := nrows
					if !ok {
						done = row
					}
					want := make([]byte, done*(8+ne0))
					if err := quantizeQ8KV(want, widenBF16(src[:2*done*ne0]), done, ne0, nil); err != nil {
						t.Fatal(err)
					}
					if g := dst[:len(want)]; !bytes.Equal(g, want) {
						t.Fatalf("level %d %#x at row %d column %d: the rows before differ at byte %d", level, c.h, row, col, firstDiff(g, want))
					}
				}
			}
		}
	}
}

// TestQuantizeQ8KVR8BF16Limit is TestQuantizeQ8KVBF16Limit for
// QuantizeQ8KVR8BF16, which stops at the group of 8 rows that reaches the
// limit, having written the groups before it.
func TestQuantizeQ8KVR8BF16Limit(t *testing.T) {
	const nrows, ne0 = 24, 96
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	for _, level := range asmLevels {
		setAsmLevel(level)
		for _, c := range []struct {
			h, limit uint16
			ok       bool
		}{{0x4580, 0x4580, false}, {0xc57f, 0x4580, true}, {0x7f7f, 0x7f80, true}, {0xff80, 0xffff, false}, {0x7fc0, 0x7f80, false}} {
			for _, row := range []int{0, 9, nrows - 1} {
				src := bf16Row(nrows*ne0, 2, 5)
				binary.LittleEndian.PutUint16(src[2*(row*ne0+ne0/2):], c.h)
				dst := make([]byte, nrows*(4+ne0))
				if ok := QuantizeQ8KVR8BF16(dst, src, ne0, c.limit); ok != c.ok {
					t.Fatalf("level %d %#x (limit %#x) in row %d: %v, want %v", level, c.h, c.limit, row, ok, c.ok)
				}
				done := nrows
				if !c.ok {
					done = row / 8 * 8
				}
				want := make([]byte, done*(4+ne0))
				if err := quantizeQ8KVR8(want, widenBF16(src[:2*done*ne0]), done, ne0, nil); err != nil {
					t.Fatal(err)
				}
				if g := dst[:len(want)]; !bytes.Equal(g, want) {
					t.Fatalf("level %d %#x in row %d: the groups before differ at byte %d", level, c.h, row, firstDiff(g, want))
				}
			}
		}
	}
}

// TestQ8Rows8BF16MatchesFloat32 holds the 8-row bf16 kernel to the float32
// one (quantizeQ8Rows8SIMD on the widened rows) bit for bit, for any
// multipliers (zero, huge, infinite, NaN) and values of every class, NaNs
// and infinities included, at strides past the row length.
func TestQ8Rows8BF16MatchesFloat32(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	for _, n := range []int{32, 64, 96, 4096} {
		for kind := 0; kind <= 4; kind++ {
			stride := n + 32
			src := bf16Row(8*stride, kind, uint64(n))
			x := widenBF16(src)
			muls := [8]float32{1, 0, 127, 1e-30, 3e38, float32(math.Inf(1)), float32(math.NaN()), 127 / 3.3895314e38}
			got, want := make([]byte, 8*n), make([]byte, 8*n)
			if !quantizeQ8Rows8BF16SIMD(got, src, stride, n, &muls) || !quantizeQ8Rows8SIMD(want, x, stride, n, &muls) {
				t.Fatal("a kernel declined")
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("n %d kind %d: differs at byte %d", n, kind, firstDiff(got, want))
			}
		}
	}
}

// BenchmarkQ8KVBF16 times q8_KV from 64 rows of 4096 bf16 values: "onepass"
// is QuantizeQ8KVBF16, "widened" widens each 16 rows into float32 (in L2,
// as the pipeline's chunks) and runs quantizeQ8KV, at each assembly level.
// MB/s of bf16 input.
func BenchmarkQ8KVBF16(b *testing.B) {
	const rows, ne0 = 64, 4096
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 2*rows*ne0)
	for i := 0; i < rows*ne0; i++ {
		binary.LittleEndian.PutUint16(src[2*i:], formats.FP32ToBF16(float32(0.02*r.NormFloat64())))
	}
	dst := make([]byte, rows*(8+ne0))
	wide := make([]float32, 16*ne0)
	defer setAsmLevel(asmLevels[len(asmLevels)-1])
	for _, level := range asmLevels {
		setAsmLevel(level)
		b.Run(fmt.Sprintf("onepass/level%d", level), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				QuantizeQ8KVBF16(dst, src, ne0, 0x4580)
			}
		})
		b.Run(fmt.Sprintf("widened/level%d", level), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				for g := 0; g < rows; g += 16 {
					formats.BF16RowToFP32Magnitude(wide, src[2*g*ne0:2*(g+16)*ne0])
					_ = quantizeQ8KV(dst[g*(8+ne0):(g+16)*(8+ne0)], wide, 16, ne0, nil)
				}
			}
		})
	}
}
