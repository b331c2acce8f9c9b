// Package repack converts the tensors of a quantized GGUF model to the
// row-interleaved types ik_llama.cpp's CPU kernels prefer (q4_K -> q4_k_r4,
// q8_0 -> q8_0_r8, ...) and back, without requantizing: the bytes are only
// rearranged, so a repacked model computes exactly what the original does.
// It reproduces llama-quantize --repack [--repack-pattern ...] byte for byte.
//
// NewPlan decides per tensor what happens and why; Run carries the plan out,
// streaming each converted tensor in chunks of whole row groups (memory is a
// few chunks per thread, never a whole tensor) and letting the kernel copy
// every tensor that stays. The shuffle itself runs on Options.Threads
// goroutines through a map of bit moves compiled once per type and row
// length from the formats package's interleavers (see program.go), with the
// interleavers themselves as the fallback.
//
//	m, err := gguf.Open(in)
//	...
//	plan, err := repack.NewPlan(m, repack.Options{Patterns: []string{`ffn_.*_exps`}})
//	...
//	paths, err := repack.Run(m, plan, out)
//
// What is converted, as in the reference (iqk_repacked_type): every tensor
// whose type formats.RepackTarget maps to an interleaved type, except
// token_embd.weight and per_layer_token_embd.weight, and except tensors
// whose rows per matrix (ne1; per expert for 3-D tensors) are not a multiple
// of the interleave count. general.file_type becomes the reference's
// repacked_ftype of the input's (Q4_K_M -> Q4_K_R4; see RepackedFileType).
//
// Differences from the reference, on purpose:
//   - bf16 -> bf16_r16 is repacked on every CPU. The reference only offers
//     it when built for AVX512-BF16 CPUs (and there also turns f16 into
//     bf16_r16, which is not a byte shuffle and is not done here), so on
//     other machines its --repack keeps bf16 tensors, and its BF16 ->
//     BF16_R16 file type change, as they are.
//   - q8_K -> q8_k_r8 is not done: the reference's repack turns q8_K's
//     fp32 block scales into fp16, which is no byte shuffle (and
//     llama-quantize never writes q8_K, an intermediate type of the dot
//     products). formats.TypeInfo records it as RepackLossy.
//   - q8_KV -> q8_KV_r8 gives what quantizing straight to q8_KV_r8 gives.
//     The reference's offline repack of that pair keeps q8_KV's row size
//     and produces a tensor that dequantizes to inf.
//   - The reference's "modify" step (iqk_should_modify_tensor) is disabled
//     in its source and never changes a byte; there is nothing to port.
//   - Undo (Options.Undo) has no reference counterpart: every row-
//     interleaved tensor goes back to its base type, byte for byte, and
//     general.file_type goes back by UndoFileType (Q4_K_R4 -> Q4_K_M, ...).
//   - A shard set in gives the same shard layout out (llama-quantize needs
//     --keep-split for that), unless Options.Merge.
package repack
