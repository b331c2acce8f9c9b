package repack

import (
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// TestDecide: what --repack does to single tensors, as the reference's
// iqk_repacked_type decides (moved here from the recipes package's former
// copy of that logic, which only tests reached).
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shape  []int64
		typ    formats.Type
		want   formats.Type
		reason string
	}{
		{"token_embd.weight", []int64{256, 512}, formats.Q4_K, formats.Q4_K, "token embeddings"},
		{"per_layer_token_embd.weight", []int64{256, 512}, formats.Q8_0, formats.Q8_0, "token embeddings"},
		{"blk.0.attn_q.weight", []int64{256, 256}, formats.Q4_K, formats.Q4_K_R4, "q4_K -> q4_k_r4"},
		{"blk.0.attn_k.weight", []int64{256, 6}, formats.Q4_K, formats.Q4_K, "6 rows per matrix, not a multiple of 4"},
		{"blk.0.attn_v.weight", []int64{256, 256}, formats.Q8_0, formats.Q8_0_R8, "q8_0 -> q8_0_r8"},
		{"blk.0.ffn_up_exps.weight", []int64{256, 8, 3}, formats.IQ4_XS, formats.IQ4_XS_R8, "iq4_xs -> iq4_xs_r8"},
		{"blk.0.ffn_up_exps.weight", []int64{256, 4, 6}, formats.IQ4_XS, formats.IQ4_XS, "4 rows per matrix, not a multiple of 8"},
		// On every CPU, unlike the reference, which needs AVX512-BF16 (doc.go).
		{"blk.0.ffn_down.weight", []int64{256, 256}, formats.BF16, formats.BF16_R16, "bf16 -> bf16_r16"},
		// The reference converts these too, but the values change (fp32 to
		// fp16 block scales, f16 to bf16): not a shuffle, so not here.
		{"blk.0.ffn_gate.weight", []int64{256, 256}, formats.Q8_K, formats.Q8_K, "no row-interleaved form"},
		{"blk.0.ffn_gate.weight", []int64{256, 256}, formats.F16, formats.F16, "no row-interleaved form"},
		{"blk.0.attn_norm.weight", []int64{256}, formats.F32, formats.F32, "no row-interleaved form"},
		{"blk.0.attn_q.weight", []int64{256, 256}, formats.Q4_K_R4, formats.Q4_K_R4, "already row-interleaved"},
	} {
		got, why := decide(gguf.TensorInfo{Name: tc.name, Shape: tc.shape, Type: tc.typ}, false)
		if got != tc.want || !strings.Contains(why, tc.reason) {
			t.Errorf("%s %v %s: %s (%s), want %s (%s)", tc.name, tc.shape, tc.typ, got, why, tc.want, tc.reason)
		}
	}
}
