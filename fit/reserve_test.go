package fit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/bytesize"
	"github.com/gquant/gquant/planner"
)

// TestKVBytesBounds: KVBytes reads block_count and the head counts from
// a model's metadata, which anyone can write. A block count past the range
// recipes.ModelParams accepts is an error (it once drove a loop of 10^18
// passes), the work never grows with block_count (a block count of 2^31-1
// with a two-layer head_count array is two layers' work), and a cache
// past bytesize.Max is an error naming what overflowed, never a size
// wrapped negative (2e9 layers of 2^30 tokens came out at -9.1e18 bytes).
func TestKVBytesBounds(t *testing.T) {
	llama := func(kv ...[2]any) gguf.Metadata {
		var md gguf.Metadata
		md.Set("general.architecture", gguf.StringValue("llama"))
		md.Set("llama.block_count", gguf.Uint32Value(32))
		md.Set("llama.embedding_length", gguf.Uint32Value(4096))
		md.Set("llama.attention.head_count", gguf.Uint32Value(32))
		md.Set("llama.attention.head_count_kv", gguf.Uint32Value(8))
		for _, p := range kv {
			md.Set(p[0].(string), p[1].(gguf.Value))
		}
		return md
	}
	mla := func(layers gguf.Value) gguf.Metadata {
		var md gguf.Metadata
		md.Set("general.architecture", gguf.StringValue("deepseek2"))
		md.Set("deepseek2.block_count", layers)
		md.Set("deepseek2.attention.kv_lora_rank", gguf.Uint32Value(512))
		md.Set("deepseek2.rope.dimension_count", gguf.Uint32Value(64))
		return md
	}
	perToken := int64(2 * 1024 * 2) // 8 KV heads x 128, K and V, f16
	for _, tc := range []struct {
		name string
		md   gguf.Metadata
		ctx  int64
		typ  formats.Type
		want int64  // bytes, when no error
		err  string // part of the error
	}{
		{"32 layers", llama(), 4096, formats.F16, 32 * 4096 * perToken, ""},
		{"block_count 1e18", llama(
			[2]any{"llama.block_count", gguf.Uint64Value(1e18)},
			[2]any{"llama.attention.head_count", gguf.ArrayValue([]int32{32, 32})}),
			1000, formats.F16, 0, "llama.block_count is 1000000000000000000, out of range"},
		{"block_count 2^31-1, two layers of heads", llama(
			[2]any{"llama.block_count", gguf.Uint32Value(1<<31 - 1)},
			[2]any{"llama.attention.head_count", gguf.ArrayValue([]int32{32, 32})}),
			1000, formats.F16, 2 * 1000 * perToken, ""},
		{"per-layer KV heads, scalar heads after", llama(
			[2]any{"llama.attention.head_count_kv", gguf.ArrayValue([]int32{0, 8, 0})}),
			1000, formats.F16, 1000 * perToken * (1 + 29*4), ""}, // 32 KV heads past the array
		{"2e9 layers x 2^30 tokens", llama(
			[2]any{"llama.block_count", gguf.Uint32Value(2e9)}),
			1 << 30, formats.F16, 0, "comes to more than 4611686018427387903 bytes"},
		{"MLA 2e9 layers x 2^30 tokens", mla(gguf.Uint32Value(2e9)), 1 << 30, formats.F32, 0, "comes to more than"},
		{"MLA block_count 2^32", mla(gguf.Uint64Value(1 << 32)), 1, formats.F16, 0, "deepseek2.block_count is 4294967296, out of range"},
		{"negative head count", llama(
			[2]any{"llama.attention.head_count_kv", gguf.ArrayValue([]int32{8, -8})}),
			1, formats.F16, 0, "llama.attention.head_count_kv[1] is -8, out of range"},
		{"key length 2^40", llama(
			[2]any{"llama.attention.key_length", gguf.Uint64Value(1 << 40)}),
			1, formats.F16, 0, "llama.attention.key_length is 1099511627776, out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				n   int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, _, err := KVBytes(tc.md, tc.ctx, tc.typ)
				done <- result{n, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("KVBytes still running after 20 s")
			}
			switch {
			case tc.err == "" && (r.err != nil || r.n != tc.want):
				t.Errorf("got %d, %v; want %d", r.n, r.err, tc.want)
			case tc.err != "" && (r.err == nil || !strings.Contains(r.err.Error(), tc.err)):
				t.Errorf("got %d, %v; want an error with %q", r.n, r.err, tc.err)
			}
			// Through ParseReserves the error is a bad reserve naming
			// the value.
			if tc.err != "" {
				item := fmt.Sprintf("GPU=kv:%d:%s", tc.ctx, tc.typ)
				_, err := ParseReserves(item, tc.md)
				if !errors.Is(err, ErrBadReserve) || !strings.Contains(err.Error(), item) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("ParseReserves(%q): %v", item, err)
				}
			}
		})
	}
}

// TestReservesWithinBudget: a device's reserves are summed without a
// wrap, and reserves above the budget are refused naming the device and
// the reserve values, before anything is measured. Three reserves of 4 EiB
// once summed past 2^63 to a negative reserve, and a 6 MiB budget passed.
func TestReservesWithinBudget(t *testing.T) {
	big := int64(bytesize.Max) // 4 EiB, the largest size --reserve reads
	res := func(dev string, n ...int64) []Reserve {
		var rs []Reserve
		for _, b := range n {
			rs = append(rs, Reserve{Device: dev, Text: strconv.FormatInt(b, 10), Bytes: b})
		}
		return rs
	}
	budgets := []planner.Budget{{Device: "CPU", Bytes: 6 << 20, Text: "6MiB"}, {Device: "GPU", Bytes: big, Text: "4EiB"}}
	for _, tc := range []struct {
		name     string
		reserves []Reserve
		err      error
		want     string
	}{
		{"within", append(res("CPU", 1<<20, 5<<20), res("GPU", big/2, big/2)...), nil, ""},
		{"one over", res("CPU", 6<<20+1), ErrInfeasible, "device CPU: fit: budget too small: its reserves ("},
		{"three of 4 EiB", res("CPU", big, big, big), ErrInfeasible, "come to more than its budget 6MiB (6291456 bytes)"},
		{"three of 4 EiB on a 4 EiB budget", res("GPU", big, big, big), ErrInfeasible, "device GPU"},
		{"two halves and one byte", res("GPU", big/2+1, big/2, 1), ErrInfeasible, "device GPU"},
		{"negative", res("CPU", -1), ErrBadReserve, "CPU="},
		{"above bytesize.Max", res("GPU", big+1), ErrBadReserve, "GPU="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckBudgets(Options{Budgets: budgets, Reserves: tc.reserves}, []string{"CPU", "GPU"})
			if tc.err == nil {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want %v with %q", err, tc.err, tc.want)
			}
		})
	}
}

// TestReserveKVTypes: kv:CTX:TYPE takes the cache types llama.cpp's -ctk
// and -ctv take (kv_cache_type_from_str) and refuses any other type,
// naming the value and listing those; it once sized caches of q4_K or
// q8_0_r8, which no run can make.
func TestReserveKVTypes(t *testing.T) {
	var mla, gqa gguf.Metadata
	mla.Set("general.architecture", gguf.StringValue("deepseek2"))
	mla.Set("deepseek2.block_count", gguf.Uint32Value(6))
	mla.Set("deepseek2.attention.kv_lora_rank", gguf.Uint32Value(512))
	mla.Set("deepseek2.rope.dimension_count", gguf.Uint32Value(64))
	gqa.Set("general.architecture", gguf.StringValue("llama"))
	gqa.Set("llama.block_count", gguf.Uint32Value(2))
	gqa.Set("llama.embedding_length", gguf.Uint32Value(4096))
	gqa.Set("llama.attention.head_count", gguf.Uint32Value(32))
	gqa.Set("llama.attention.head_count_kv", gguf.Uint32Value(8))
	const list = "llama.cpp's -ctk and -ctv take f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, q6_0, q8_KV"
	for _, tc := range []struct {
		typ  string
		want int64  // bytes of the MLA cache of 10 tokens (6 layers x 576 values), when no error
		err  string // part of the error
	}{
		{"f32", 6 * 10 * 576 * 4, ""},
		{"f16", 6 * 10 * 576 * 2, ""},
		{"bf16", 6 * 10 * 576 * 2, ""},
		{"q8_0", 6 * 10 * 18 * 34, ""},
		{"q4_0", 6 * 10 * 18 * 18, ""},
		{"q4_1", 6 * 10 * 18 * 20, ""},
		{"iq4_nl", 6 * 10 * 18 * 18, ""},
		{"q5_0", 6 * 10 * 18 * 22, ""},
		{"q5_1", 6 * 10 * 18 * 24, ""},
		{"q6_0", 6 * 10 * 18 * 26, ""},
		{"q8_KV", 6 * 10 * (576 + 8), ""},
		{"Q8_0", 6 * 10 * 18 * 34, ""}, // gquant's type names are read in any case
		{"q4_K", 0, `"GPU=kv:10:q4_K": q4_K is no KV cache type: ` + list},
		{"q8_0_r8", 0, "q8_0_r8 is no KV cache type: " + list},
		{"q8_KV_r8", 0, "q8_KV_r8 is no KV cache type"},
		{"q8_1", 0, "q8_1 is no KV cache type"},
		{"iq4_ks", 0, "iq4_ks is no KV cache type"},
		{"q6_K", 0, "q6_K is no KV cache type"},
		{"iq2_xxs", 0, "iq2_xxs is no KV cache type"},
		{"nope", 0, `unknown type "nope"`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			for k, md := range []gguf.Metadata{mla, gqa} {
				item := "GPU=kv:10:" + tc.typ
				rs, err := ParseReserves(item, md)
				switch {
				case tc.err == "" && err != nil:
					t.Errorf("ParseReserves(%q): %v", item, err)
				case tc.err == "" && k == 0 && rs[0].Bytes != tc.want:
					t.Errorf("ParseReserves(%q): %d bytes, want %d", item, rs[0].Bytes, tc.want)
				case tc.err != "" && (!errors.Is(err, ErrBadReserve) || !strings.Contains(err.Error(), tc.err)):
					t.Errorf("ParseReserves(%q): %v; want a bad reserve with %q", item, err, tc.err)
				}
			}
		})
	}
	// KVBytes itself refuses a type no cache takes.
	if _, _, err := KVBytes(mla, 10, formats.Q4_K); err == nil || !strings.Contains(err.Error(), "q4_K is no KV cache type") {
		t.Errorf("KVBytes as q4_K: %v", err)
	}
}
