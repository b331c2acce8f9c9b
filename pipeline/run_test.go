package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

func TestCallRows(t *testing.T) {
	for _, tc := range []struct {
		t     formats.Type
		shape []int64
		rows  int64
		whole bool
	}{
		{formats.Q4_K, []int64{4096, 1000}, 4, false},            // ceil(16384/4096)
		{formats.Q4_K, []int64{7168, 1000}, 3, false},            // ceil(16384/7168)
		{formats.Q4_K, []int64{256, 512}, 64, false},             // ceil(16384/256)
		{formats.Q4_K, []int64{18432, 7168}, 1, false},           // rows longer than the minimum chunk
		{formats.Q4_K_R4, []int64{7168, 1000}, 12, false},        // times the interleave count
		{formats.Q4_K, []int64{7168, 2048, 256}, 2048, true},     // experts: one matrix per call
		{formats.Q4_K, []int64{128, 256, 2}, 256, true},          // two heads
		{formats.Q4_K, []int64{256, 256, 3}, 64, false},          // an odd count below 4 is chunked
		{formats.Q4_K, []int64{256, 256, 5}, 256, true},          // five or more: one matrix per call
		{formats.Q8_0, []int64{32, 10, 1, 1}, 512, false},        // rows per call may exceed the rows
		{formats.IQ4_XS_R8, []int64{256, 64, 2, 1}, 64, true},    // ne2 even
		{formats.Q8_0, []int64{1 << 20, 2}, 1, false},            // a very long row
		{formats.BF16_R16, []int64{64, 32}, 256 * 16, false},     // interleave of 16
		{formats.Q6_K, []int64{4096, 4096, 1, 1}, 4, false},      // 4-D with ones
		{formats.Q6_K, []int64{4096, 128, 2, 2}, 128, true},      // ne2*ne3 = 4
		{formats.Q6_K, []int64{4096, 128, 1, 3}, 4, false},       // ne2*ne3 = 3
		{formats.Q6_K, []int64{16384, 128}, 1, false},            // exactly the minimum chunk
		{formats.Q6_K, []int64{16128, 128}, 2, false},            // just under it
		{formats.IQ2_K_R4, []int64{16384, 128}, 4, false},        // interleaved, long rows
		{formats.IQ2_K_R4, []int64{2048, 1536, 128}, 1536, true}, // interleaved experts
		{formats.Q2_K, []int64{2048, 1536, 1}, 8, false},         // q2_K: the call boundaries matter
		{formats.Q2_K, []int64{2048, 1536}, 8, false},            // same in 2-D
		{formats.Q2_K, []int64{2048, 1536, 6}, 1536, true},       // and per expert
		{formats.Q2_K, []int64{512, 1536, 1}, 32, false},         // ceil(16384/512)
	} {
		rows, whole := CallRows(tc.t, tc.shape)
		if rows != tc.rows || whole != tc.whole {
			t.Errorf("%s %v: %d rows per call (whole %v), want %d (%v)", tc.t, tc.shape, rows, whole, tc.rows, tc.whole)
		}
	}
}

// writeBF16Model writes a one-tensor bf16 model whose row `bad` holds
// badValue in column 3.
func writeBF16Model(t *testing.T, path string, ne0, rows, bad int, badValue float32) {
	t.Helper()
	w, err := gguf.Create(path, gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue("llama")}},
		[]gguf.TensorInfo{{Name: "blk.0.ffn_up.weight", Shape: []int64{int64(ne0), int64(rows)}, Type: formats.BF16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2*ne0)
	for r := 0; r < rows; r++ {
		for i := 0; i < ne0; i++ {
			v := float32(math.Sin(float64(r*ne0+i))) * 0.02
			if r == bad && i == 3 {
				v = badValue
			}
			binary.LittleEndian.PutUint16(buf[2*i:], formats.FP32ToBF16(v))
		}
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A value the kernel cannot take (NaN; a finite value so large that the
// search overflows) fails the run with an error naming the tensor and the
// row, and leaves no output behind.
func TestRunBadValueNamesRowAndLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value float32
		typ   formats.Type
		want  string
	}{
		{"NaN", float32(math.NaN()), formats.Q8_0, "not finite"},
		{"huge", 1e30, formats.IQ3_S, "too large for iq3_s"},
	} {
		// Rows of 256 weights: pieces of 10 rows, converted whole; of 8192:
		// pieces of 20 rows, converted in chunks of 8 (convertChunks).
		for _, sz := range []struct{ ne0, rows, bad, piece int }{{256, 300, 217, 10}, {8192, 40, 37, 20}} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, sz.ne0), func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, "in.gguf")
				writeBF16Model(t, in, sz.ne0, sz.rows, sz.bad, tc.value)
				m, err := gguf.Open(in)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				out := filepath.Join(dir, "out.gguf")
				outs := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{int64(sz.ne0), int64(sz.rows)}, Source: 0, Type: tc.typ, Convert: true}}}}
				err = Run(context.Background(), m, outs, Options{Threads: 2, PieceWeights: sz.ne0 * sz.piece})
				if err == nil {
					t.Fatalf("%v was quantized to %s", tc.value, tc.typ)
				}
				for _, want := range []string{fmt.Sprintf("row %d", sz.bad), "column 3", "blk.0.ffn_up.weight", tc.want} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) != 1 {
					t.Errorf("files left behind: %v", entries)
				}
			})
		}
	}
}

// Small pieces and large pieces give the same bytes (pieces only change
// how work is spread, never the output).
func TestRunPieceSizeDoesNotMatter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeBF16Model(t, in, 256, 300, -1, 0)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var outs [2][]byte
	for i, pw := range []int{256, 1 << 22} {
		out := filepath.Join(dir, "out.gguf")
		o := []Output{{Path: out, Tensors: []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{256, 300}, Source: 0, Type: formats.Q8_0, Convert: true}}}}
		if err := Run(context.Background(), m, o, Options{Threads: 2, PieceWeights: pw}); err != nil {
			t.Fatal(err)
		}
		outs[i], _ = os.ReadFile(out)
		os.Remove(out)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Error("piece size changed the output")
	}
}

// Pieces converted in chunks that stay in the core's cache (convertChunks)
// give the bytes of pieces converted whole, for types with row groups, with
// and without importance data, beside the types always converted whole (a
// lead, call-scoped q2_K, f32).
func TestRunChunksMatchWhole(t *testing.T) {
	const ne0, rows = 8192, 48
	dir := t.TempDir()
	in := filepath.Join(dir, "in.gguf")
	writeBF16Model(t, in, ne0, rows, 30, 0)
	m, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	im := make([]float32, ne0)
	for i := range im {
		im[i] = 1 + float32(i%7)
	}
	var tensors []Tensor
	for _, typ := range []formats.Type{formats.F16, formats.Q8_0, formats.Q8_KV, formats.BF16_R16, formats.Q4_0_R8,
		formats.Q4_K, formats.IQ4_KS, formats.IQ2_BN, formats.IQ1_M, formats.Q2_K, formats.F32} {
		for _, imat := range [][]float32{nil, im} {
			tensors = append(tensors, Tensor{Name: fmt.Sprintf("blk.%d.ffn_up.weight", len(tensors)), Shape: []int64{ne0, rows},
				Source: 0, Type: typ, Convert: true, Imatrix: imat})
		}
	}
	// The pieces of 24 rows below are converted in chunks of 8 (q8_0), or
	// in one pass (f16 of bf16 rows, TestConvertBF16ToF16).
	if n := chunkRows(tensors[2], &piece{rows: 24}); tensors[2].Type != formats.Q8_0 || n != 8 {
		t.Fatalf("%s rows of %d weights are converted %d rows at a time, want 8", tensors[2].Type, ne0, n)
	}
	runChunksAndWhole(t, m, tensors, filepath.Join(dir, "out.gguf"))
}

// The rows that fell back (see TestRunReportsFallbackRows) are named alike
// when their pieces are converted in chunks, from float32 input.
func TestRunChunksReportFallbackRows(t *testing.T) {
	const ne0, rows = 8192, 40
	dir := t.TempDir()
	src := make([]float32, ne0*rows)
	for r := 0; r < rows; r++ {
		row := src[r*ne0 : (r+1)*ne0]
		for i := range row {
			row[i] = float32((i*37+r*11)%29-14) / 700
		}
		if r == 9 || r == 30 {
			clear(row[32:64])
			row[40] = 0.03
		}
	}
	m := openF32Tensor(t, filepath.Join(dir, "in.gguf"), "blk.0.ffn_up.weight", []int64{ne0, rows}, src)
	im := make([]float32, ne0)
	for i := range im {
		im[i] = 1 + float32(i%7)/8
	}
	im[40] = 0
	tensors := []Tensor{{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: formats.IQ2_XXS, Convert: true, Imatrix: im}}
	if got := runChunksAndWhole(t, m, tensors, filepath.Join(dir, "out.gguf")); len(got) != 1 || !strings.HasPrefix(got[0], "iq2_xxs rows 9, 30: ") {
		t.Errorf("fallbacks %q, want iq2_xxs rows 9 and 30", got)
	}
}

// runChunksAndWhole runs tensors of m to out with pieces of 24 rows, in
// chunks and then whole, checks that both wrote the same bytes and reported
// the same fallbacks, and returns these.
func runChunksAndWhole(t *testing.T, m *gguf.Model, tensors []Tensor, out string) []string {
	t.Helper()
	ne0, _, _ := gguf.Dims(tensors[0].Shape)
	var outs [2][]byte
	var fallbacks [2][]string
	for i, whole := range []bool{false, true} {
		opt := Options{Threads: 3, PieceWeights: int(ne0) * 24, Progress: func(e Event) {
			if e.Fallback != nil {
				fallbacks[i] = append(fallbacks[i], e.Fallback.String())
			}
		}}
		if whole {
			opt.quantize = quantizePiece
		}
		if err := Run(context.Background(), m, []Output{{Path: out, Tensors: tensors}}, opt); err != nil {
			t.Fatal(err)
		}
		var err error
		if outs[i], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
		os.Remove(out)
		os.Remove(SidecarPath(out))
	}
	if len(outs[0]) == 0 || !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("chunks changed the output (%d and %d bytes)", len(outs[0]), len(outs[1]))
	}
	if fmt.Sprint(fallbacks[0]) != fmt.Sprint(fallbacks[1]) {
		t.Errorf("fallbacks in chunks %q, whole %q", fallbacks[0], fallbacks[1])
	}
	return fallbacks[0]
}

// An f16 piece of bf16 rows is converted in one pass, to the bytes of the
// float32 way, while every value stays below the overflow gate (4080 is the
// largest bfloat16 below 4096); a value at the gate sends the piece the
// usual way (false), whose checks name it.
func TestConvertBF16ToF16(t *testing.T) {
	const ne0, rows = 256, 4
	tn := Tensor{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: formats.F16, Convert: true}
	for _, tc := range []struct {
		big     float32
		onePass bool
	}{{4080, true}, {-4080, true}, {4096, false}, {-70000, false}, {float32(math.Inf(1)), false}} {
		raw := make([]byte, 2*ne0*rows)
		for i := range ne0 * rows {
			v := float32(math.Sin(float64(i))) * 0.02
			if i == 300 {
				v = tc.big
			}
			binary.LittleEndian.PutUint16(raw[2*i:], formats.FP32ToBF16(v))
		}
		p := &piece{rows: rows, buf: &buffers{raw: raw}}
		if got := convertBF16ToF16(tn, p); got != tc.onePass {
			t.Errorf("%v: one pass %v, want %v", tc.big, got, tc.onePass)
			continue
		}
		if !tc.onePass {
			continue
		}
		want := &piece{rows: rows, buf: &buffers{raw: raw}, src: make([]float32, ne0*rows)}
		formats.BF16RowToFP32(want.src, raw)
		if err := quantizePiece(tn, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.dst, want.dst) {
			t.Errorf("%v: one pass wrote other bytes than the float32 way", tc.big)
		}
	}
}

// TestConvertBF16ToQ8KV checks q8_KV's one pass as TestConvertBF16ToF16
// does f16's: below the gate it writes the float32 way's bytes, rows of
// zeros and of denormals (a subnormal scale) among them; at the gate, an
// infinity or a NaN in any row it declines, for the usual way; with
// importance data that checkOutput reads the output back for too.
func TestConvertBF16ToQ8KV(t *testing.T) {
	for _, typ := range []formats.Type{formats.Q8_KV, formats.Q8_KV_R8} {
		t.Run(typ.String(), func(t *testing.T) { testConvertBF16ToQ8KV(t, typ) })
	}
}

func testConvertBF16ToQ8KV(t *testing.T, typ formats.Type) {
	const ne0, rows = 256, 16
	tn := Tensor{Name: "blk.0.ffn_up.weight", Shape: []int64{ne0, rows}, Type: typ, Convert: true}
	for _, tc := range []struct {
		big     float32
		at      int
		onePass bool
	}{
		{4080, 300, true}, {-4080, 4095, true}, {1e-40, 0, true}, {4096, 300, false}, {-70000, 4095, false},
		{float32(math.Inf(1)), 0, false}, {float32(math.NaN()), 2100, false},
	} {
		raw := make([]byte, 2*ne0*rows)
		for i := range ne0 * rows {
			v := float32(math.Sin(float64(i))) * 0.02
			switch i / ne0 {
			case 1, 9:
				v = 0
			case 2, 10:
				v *= 1e-37 // denormals
			}
			if i == tc.at {
				v = tc.big
			}
			binary.LittleEndian.PutUint16(raw[2*i:], formats.FP32ToBF16(v))
		}
		p := &piece{rows: rows, buf: &buffers{raw: raw}}
		if got := convertBF16ToQ8KV(tn, p); got != tc.onePass {
			t.Errorf("%v: one pass %v, want %v", tc.big, got, tc.onePass)
			continue
		}
		if !tc.onePass {
			continue
		}
		want := &piece{rows: rows, buf: &buffers{raw: raw}, src: make([]float32, ne0*rows)}
		formats.BF16RowToFP32(want.src, raw)
		if err := quantizePiece(tn, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.dst, want.dst) {
			t.Errorf("%v: one pass wrote other bytes than the float32 way", tc.big)
		}
		risky := make([]float32, ne0) // zero importance
		p = &piece{rows: rows, buf: &buffers{raw: raw}, im: risky}
		if convertBF16ToQ8KV(tn, p) {
			t.Errorf("%v: one pass with zero importance", tc.big)
		}
	}
}
