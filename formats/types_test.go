package formats

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

func TestTableMatchesGolden(t *testing.T) {
	f, err := os.Open(filepath.Join(golden.Dir(t), "types.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	seen := 0
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 7 {
			t.Fatalf("bad line %q", sc.Text())
		}
		id, _ := strconv.Atoi(c[0])
		info, ok := Type(id).Info()
		if !ok {
			t.Errorf("type id %d (%s) missing", id, c[1])
			continue
		}
		seen++
		atoi := func(s string) int { v, _ := strconv.Atoi(s); return v }
		if info.Name != c[1] || info.BlockSize != atoi(c[2]) || info.TypeSize != atoi(c[3]) ||
			info.RowMeta != atoi(c[4]) || info.Quantized != (c[5] == "1") || info.NeedsImatrix != (c[6] == "1") {
			t.Errorf("type %d: have %+v, golden %v", id, info, c)
		}
		if Type(id).String() != c[1] {
			t.Errorf("String() = %q, want %q", Type(id).String(), c[1])
		}
	}
	if seen != len(typeTable) {
		t.Errorf("golden lists %d types, table has %d", seen, len(typeTable))
	}
}

func TestInterleaved(t *testing.T) {
	for _, tc := range []struct {
		t    Type
		base Type
		rows int
	}{
		{Q4_K_R4, Q4_K, 4}, {IQ4_XS_R8, IQ4_XS, 8}, {BF16_R16, BF16, 16}, {Q8_KV_R8, Q8_KV, 8},
		{Q8_K_R8, Q8_K, 8}, {Q4_0_R8, Q4_0, 8}, {IQ1_S_R4, IQ1_S, 4}, {Q4_K, Q4_K, 1}, {F32, F32, 1},
	} {
		if tc.t.Base() != tc.base || tc.t.Interleave() != tc.rows {
			t.Errorf("%s: base %s x%d, want %s x%d", tc.t, tc.t.Base(), tc.t.Interleave(), tc.base, tc.rows)
		}
	}
	for _, b := range RepackableTypes() {
		r, _ := RepackTarget(b)
		if r.Base() != b || r.BlockSize() != b.BlockSize() || r.TypeSize() != b.TypeSize() {
			t.Errorf("repack %s -> %s: geometry differs", b, r)
		}
	}
}

func TestParseType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Type
		ok   bool
	}{
		{"q4_K", Q4_K, true}, {"q5_k", Q5_K, true}, {"Q4_K_R4", Q4_K_R4, true}, {"q8_kv", Q8_KV, true},
		{"BF16", BF16, true}, {"iq2_xxs", IQ2_XXS, true}, {"q4_kk", 0, false}, {"", 0, false},
	} {
		got, err := ParseType(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseType(%q) = %v, %v", tc.in, got, err)
		}
	}
	_, err := ParseType("q4_kk")
	if err == nil || !strings.Contains(err.Error(), "q4_K") {
		t.Errorf("no suggestion in %v", err)
	}
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		t     Type
		shape []int64
		want  int64
	}{
		{Q4_K, []int64{4096, 2}, 2 * 144 * 16},
		{IQ4_KS, []int64{512, 3}, 3 * (4 + 2*136)},
		{F32, []int64{7}, 28},
		{BF16, []int64{8, 2, 3}, 96},
		{Q8_KV, []int64{64, 1}, 8 + 64},
	} {
		got, err := tc.t.TensorSize(tc.shape)
		if err != nil || got != tc.want {
			t.Errorf("%s %v: %d, %v; want %d", tc.t, tc.shape, got, err, tc.want)
		}
	}
	// ggml_nbytes: i2_s is 2 bits per weight plus a 32-byte trailer.
	if got, err := I2_S.TensorSize([]int64{128, 3}); err != nil || got != 128*3/4+32 {
		t.Errorf("i2_s 128x3: %d, %v", got, err)
	}
	// The reference's GGUF reader refuses dimensions that are not positive
	// and more than GGML_MAX_DIMS of them.
	for _, shape := range [][]int64{{256, 0}, {0}, {256, -1}, {32, 1, 1, 1, 1}} {
		if got, err := Q8_0.TensorSize(shape); err == nil {
			t.Errorf("q8_0 %v: %d bytes, want an error", shape, got)
		}
	}
	if _, err := Type(1000).TensorSize([]int64{32}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := Q4_K.RowSize(100); err == nil {
		t.Error("row of 100 q4_K weights accepted")
	}
	if _, err := F32.TensorSize([]int64{1 << 40, 1 << 40}); err == nil {
		t.Error("overflow not caught")
	}
	// A row size overflows on its own (rows dequantize --cols took it and
	// panicked making its buffer).
	for _, tc := range []struct {
		t   Type
		ne0 int64
	}{{F32, 1<<62 + 1}, {Q8_0, math.MaxInt64 / 32 * 32}, {F16, 1 << 62}} {
		if rs, err := tc.t.RowSize(tc.ne0); err == nil {
			t.Errorf("%s row of %d: %d bytes", tc.t, tc.ne0, rs)
		}
	}
	if bpw := Q4_K.BitsPerWeight(256); bpw != 4.5 {
		t.Errorf("q4_K bpw %v", bpw)
	}
}

// TestUnknownTypeAccessors: type ids come from files, so the accessors of an
// id the reference does not know answer without panicking.
func TestUnknownTypeAccessors(t *testing.T) {
	for _, id := range []Type{4, 5, 37, 96, 1000, 1 << 31} {
		if id.Known() {
			t.Fatalf("%d is known", id)
		}
		if _, ok := id.Info(); ok {
			t.Errorf("%d: Info ok", id)
		}
		if id.BlockSize() != 0 || id.TypeSize() != 0 || id.RowMeta() != 0 || id.IsQuantized() ||
			id.IsInterleaved() || id.Interleave() != 1 || id.Base() != id {
			t.Errorf("%d: not the zero descriptor", id)
		}
		if want := fmt.Sprintf("type(%d)", uint32(id)); id.String() != want {
			t.Errorf("String() = %q, want %q", id.String(), want)
		}
		if _, ok := RepackTarget(id); ok {
			t.Errorf("%d has a repack target", id)
		}
		if _, err := id.RowSize(32); !errors.Is(err, ErrUnknownType) {
			t.Errorf("%d: RowSize error %v", id, err)
		}
		if id.BitsPerWeight(32) != 0 || CanDequantize(id) || CanInterleave(id) {
			t.Errorf("%d: has a dequantizer, interleaver or bits per weight", id)
		}
	}
}

// The types llama-quantize's loader refuses whatever their bytes are those
// ggml_validate_row_data (ggml-quants.c) has no case for: the activation
// types, which ggml makes for matrix products.
func TestNotLoaded(t *testing.T) {
	want := map[Type]bool{Q8_1: true, Q8_0_X4: true, Q8_1_X4: true, Q8_2_X4: true, Q8_K16: true, Q8_K32: true, Q8_K64: true, Q8_K128: true, Q8_KR8: true}
	for _, typ := range Types() {
		if typ.NotLoaded() != want[typ] {
			t.Errorf("%s: NotLoaded %v, want %v", typ, typ.NotLoaded(), want[typ])
		}
		if info, _ := typ.Info(); typ.NotLoaded() && (CheckUnit(typ) != 0 || info.Quantizable) {
			t.Errorf("%s: not loaded, yet checked or written", typ)
		}
	}
}
