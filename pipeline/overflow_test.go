package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// TestOverflowGate backs overflowGate: for every type the pipeline can
// write, rows whose largest magnitude is 4 x the gate, in several shapes,
// read back finite. (The smallest magnitude that overflows, over all types
// and powers of two, is 2^16: q5_1's fp16 minimum, and f16 itself.)
func TestOverflowGate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the grids of every type (seconds)")
	}
	const ne0 = 256
	const top = 4 * overflowGate
	rng := rand.New(rand.NewPCG(1, 2))
	patterns := map[string]func(i int) float64{
		"normal":   func(int) float64 { return rng.NormFloat64() },
		"constant": func(int) float64 { return 1 },
		"negative": func(int) float64 { return -1 - rng.Float64() },
		"spike": func(i int) float64 {
			if i%97 == 5 {
				return 100
			}
			return rng.NormFloat64() * 1e-3
		},
		"alternate": func(i int) float64 { return float64(1 - 2*(i%2)) },
	}
	im := make([]float32, ne0)
	for i := range im {
		im[i] = 1
	}
	for _, typ := range quantize.SupportedTypes() {
		nrows := typ.Interleave()
		for name, gen := range patterns {
			src := make([]float32, ne0*nrows)
			var m float64
			raw := make([]float64, len(src))
			for i := range raw {
				raw[i] = gen(i)
				m = max(m, math.Abs(raw[i]))
			}
			for i, v := range raw {
				src[i] = float32(v / m * top)
			}
			w := im
			if info, _ := typ.Info(); info.ImatrixFails {
				w = nil
			}
			dst, err := quantize.QuantizeRows(typ, nrows, ne0, src, w)
			if err != nil {
				t.Errorf("%s %s: %v", typ, name, err)
				continue
			}
			back := make([]float32, len(src))
			if err := formats.DequantizeRows(typ, ne0, dst, back); err != nil {
				t.Errorf("%s: %v", typ, err)
				continue
			}
			if i := formats.FirstNonFinite(back); i >= 0 {
				t.Errorf("%s %s: values up to %g read back as %v at %d: overflowGate is too high", typ, name, float64(top), back[i], i)
			}
		}
	}
}

// Finite values too large for the output type fail the run like a NaN
// does, naming the input file, the tensor, the row and the column, and
// leave nothing behind (issue 16, item 9); values just inside the type's
// range are quantized as before.
func TestRunValueTooLargeForType(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value float32
		typ   formats.Type
		fails bool
	}{
		{"bf16 max in f16", 3.39e38, formats.F16, true},
		{"65536 in f16", 65536, formats.F16, true},
		{"65280 in f16", 65280, formats.F16, false},
		{"bf16 max in q8_0", 3.39e38, formats.Q8_0, true},
		{"q8_0 scale past fp16", 8.4e6, formats.Q8_0, true},
		{"q8_0 scale inside fp16", 8.2e6, formats.Q8_0, false},
		{"bf16 max in q4_K", 3.39e38, formats.Q4_K, true},
		{"1e9 in q4_0", 1e9, formats.Q4_0, true},
		{"65504 in q4_1", 6.5e4, formats.Q4_1, false},
		{"bf16 max in bf16_r16", 3.39e38, formats.BF16_R16, false},
	} {
		// Rows of 256 weights: pieces of 8 rows, each converted whole; of
		// 8192: pieces of 24 rows converted in chunks of 8 (convertChunks).
		for _, ne0 := range []int64{256, 8192} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, ne0), func(t *testing.T) {
				valueTooLarge(t, ne0, tc.value, tc.typ, tc.fails)
			})
		}
	}
}

// valueTooLarge quantizes a 32-row tensor of ne0 weights per row whose row
// 21 holds -value in column 3 to typ, and checks that the run fails (or
// not) as it should, naming the file, tensor, row and column.
func valueTooLarge(t *testing.T, ne0 int64, value float32, typ formats.Type, fails bool) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeBF16Model(t, in, int(ne0), 32, 21, -value)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out := filepath.Join(dir, "out.gguf")
	outs := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, 32}, Source: 0, Type: typ, Convert: true}}}}
	rows := int64(8)
	if ne0 > 256 {
		rows = 24
	}
	err = Run(context.Background(), m, outs, Options{Threads: 2, PieceWeights: int(ne0 * rows)})
	if !fails {
		if err != nil {
			t.Fatalf("%v in %s refused: %v", value, typ, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("%v written as %s", value, typ)
	}
	for _, want := range []string{in, "blk.0.ffn_up.weight", "row 21", "column 3", "too large for " + typ.String()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

// The gate constants are overflowGate in each format, and reaches16,
// reaches32 and the bf16 reader's magnitude agree with a plain comparison
// of every value.
func TestGateScan(t *testing.T) {
	if formats.BF16ToFP32(bf16Gate) != overflowGate || formats.FP16ToFP32(fp16Gate) != overflowGate || math.Float32frombits(f32Gate) != overflowGate {
		t.Fatal("a gate constant is not overflowGate")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(40)
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(30)-8)))
			switch rng.IntN(50) {
			case 0:
				vals[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
			case 1:
				vals[i] = float32(math.NaN())
			case 2:
				vals[i] = overflowGate * float32(1-2*rng.IntN(2))
			case 3:
				vals[i] = math.Nextafter32(overflowGate, 0)
			}
		}
		want := false
		for _, v := range vals {
			want = want || !(math.Abs(float64(v)) < overflowGate)
		}
		if got := reaches32(vals); got != want {
			t.Fatalf("reaches32(%v) = %v", vals, got)
		}
		f32 := make([]byte, 4*n)
		for i, v := range vals {
			binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(v))
		}
		if got := reaches32raw(f32); got != want {
			t.Fatalf("reaches32raw(%v) = %v", vals, got)
		}
		bf, hf := make([]byte, 2*n), make([]byte, 2*n)
		wantBF, wantHF := false, false
		for i, v := range vals {
			b, h := formats.FP32ToBF16(v), formats.FP32ToFP16(v)
			binary.LittleEndian.PutUint16(bf[2*i:], b)
			binary.LittleEndian.PutUint16(hf[2*i:], h)
			wantBF = wantBF || !(math.Abs(float64(formats.BF16ToFP32(b))) < overflowGate)
			wantHF = wantHF || !(math.Abs(float64(formats.FP16ToFP32(h))) < overflowGate)
		}
		if got := reaches16(bf, bf16Gate); got != wantBF {
			t.Fatalf("reaches16 bf16 %v = %v", vals, got)
		}
		// decodePiece's gate for bf16 input.
		if got := formats.BF16RowToFP32Magnitude(make([]float32, n), bf) >= bf16Gate; got != wantBF {
			t.Fatalf("BF16RowToFP32Magnitude gate %v = %v", vals, got)
		}
		if got := reaches16(hf, fp16Gate); got != wantHF {
			t.Fatalf("reaches16 f16 %v = %v", vals, got)
		}
	}
}
