// The ggml type ids and the descriptor of each type (TypeInfo).

package formats

// The ggml type ids, with the reference's numbering. Identifiers are upper case;
// Type.String gives the reference's exact spelling.
const (
	F32        Type = 0
	F16        Type = 1
	Q4_0       Type = 2
	Q4_1       Type = 3
	Q5_0       Type = 6
	Q5_1       Type = 7
	Q8_0       Type = 8
	Q8_1       Type = 9
	Q2_K       Type = 10
	Q3_K       Type = 11
	Q4_K       Type = 12
	Q5_K       Type = 13
	Q6_K       Type = 14
	Q8_K       Type = 15
	IQ2_XXS    Type = 16
	IQ2_XS     Type = 17
	IQ3_XXS    Type = 18
	IQ1_S      Type = 19
	IQ4_NL     Type = 20
	IQ3_S      Type = 21
	IQ2_S      Type = 22
	IQ4_XS     Type = 23
	I8         Type = 24
	I16        Type = 25
	I32        Type = 26
	I64        Type = 27
	F64        Type = 28
	IQ1_M      Type = 29
	BF16       Type = 30
	Q4_0_4X4   Type = 31
	Q4_0_4X8   Type = 32
	Q4_0_8X8   Type = 33
	I2_S       Type = 36
	MXFP4      Type = 39
	Q1_0_G128  Type = 41
	Q8_0_X4    Type = 97
	Q8_1_X4    Type = 98
	Q8_2_X4    Type = 99
	Q6_0       Type = 133
	IQ1_BN     Type = 134
	IQ2_BN     Type = 135
	Q8_K64     Type = 136
	IQ2_K      Type = 137
	IQ3_K      Type = 138
	IQ4_K      Type = 139
	IQ5_K      Type = 140
	IQ6_K      Type = 141
	IQ4_KS     Type = 144
	IQ2_KS     Type = 145
	IQ4_KSS    Type = 146
	Q8_K16     Type = 147
	Q8_K32     Type = 148
	Q8_KR8     Type = 149
	Q8_K128    Type = 150
	Q8_KV      Type = 151
	IQ5_KS     Type = 152
	IQ2_KT     Type = 153
	IQ3_KT     Type = 154
	IQ4_KT     Type = 155
	IQ3_KS     Type = 156
	IQ2_KL     Type = 157
	IQ1_KT     Type = 158
	Q4_0_R8    Type = 202
	Q5_0_R4    Type = 206
	Q8_0_R8    Type = 208
	Q2_K_R4    Type = 210
	Q3_K_R4    Type = 211
	Q4_K_R4    Type = 212
	Q5_K_R4    Type = 213
	Q6_K_R4    Type = 214
	IQ2_XXS_R4 Type = 216
	IQ2_XS_R4  Type = 217
	IQ3_XXS_R4 Type = 218
	IQ1_S_R4   Type = 219
	IQ4_NL_R4  Type = 220
	IQ3_S_R4   Type = 221
	IQ2_S_R4   Type = 222
	IQ4_XS_R8  Type = 223
	IQ1_M_R4   Type = 229
	BF16_R16   Type = 230
	Q6_0_R4    Type = 233
	IQ2_BN_R4  Type = 335
	IQ2_K_R4   Type = 337
	IQ3_K_R4   Type = 338
	IQ4_K_R4   Type = 339
	IQ5_K_R4   Type = 340
	IQ4_KS_R4  Type = 344
	IQ5_KS_R4  Type = 352
	MXFP4_R8   Type = 353
	Q8_K_R16   Type = 397
	Q8_KV_R8   Type = 398
	Q8_K_R8    Type = 399
)

// typeTable is the descriptor of every type the reference knows, in id
// order. Fields left out are false or zero; init fills Base, Interleave and
// RepackTo of the types that are their own. Reference sources: ggml.c
// type_traits (geometry, to_float), ggml_quantize_chunk (Quantizable),
// ggml_quantize_requires_imatrix (NeedsImatrix), ggml-aarch64.c
// quantize_q4_0_4x4 and kin (ImatrixFails), llama-quantize.cpp
// is_very_low_bpw_quant (RefusedWithoutImatrix), iqk_quantize.cpp
// get_repack_info (RepackTo), ggml-cuda.cu ggml_backend_cuda_supports_op
// (CUDA). types_test.go checks every entry against ../shared/golden/types.tsv
// and registry_test.go the project's registries against the descriptors.
var typeTable = [...]TypeInfo{
	{ID: F32, Name: "f32", BlockSize: 1, TypeSize: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: F16, Name: "f16", BlockSize: 1, TypeSize: 2, RepackTo: BF16_R16, RepackLossy: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q4_0, Name: "q4_0", BlockSize: 32, TypeSize: 18, Quantized: true, RepackTo: Q4_0_R8, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q4_1, Name: "q4_1", BlockSize: 32, TypeSize: 20, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q5_0, Name: "q5_0", BlockSize: 32, TypeSize: 22, Quantized: true, RepackTo: Q5_0_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q5_1, Name: "q5_1", BlockSize: 32, TypeSize: 24, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q8_0, Name: "q8_0", BlockSize: 32, TypeSize: 34, Quantized: true, RepackTo: Q8_0_R8, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q8_1, Name: "q8_1", BlockSize: 32, TypeSize: 36, Quantized: true, NotLoaded: true},
	{ID: Q2_K, Name: "q2_K", BlockSize: 256, TypeSize: 84, Quantized: true, RepackTo: Q2_K_R4, TinyImportanceNaN: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q3_K, Name: "q3_K", BlockSize: 256, TypeSize: 110, Quantized: true, RepackTo: Q3_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q4_K, Name: "q4_K", BlockSize: 256, TypeSize: 144, Quantized: true, ZeroImportanceFails: true, RepackTo: Q4_K_R4, TinyImportanceNaN: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q5_K, Name: "q5_K", BlockSize: 256, TypeSize: 176, Quantized: true, RepackTo: Q5_K_R4, TinyImportanceNaN: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q6_K, Name: "q6_K", BlockSize: 256, TypeSize: 210, Quantized: true, RepackTo: Q6_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q8_K, Name: "q8_K", BlockSize: 256, TypeSize: 296, Quantized: true, RepackTo: Q8_K_R8, RepackLossy: true, CUDA: true},
	{ID: IQ2_XXS, Name: "iq2_xxs", BlockSize: 256, TypeSize: 66, Quantized: true, NeedsImatrix: true, RefusedWithoutImatrix: true, ZeroImportanceFails: true, RepackTo: IQ2_XXS_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_XS, Name: "iq2_xs", BlockSize: 256, TypeSize: 74, Quantized: true, NeedsImatrix: true, RefusedWithoutImatrix: true, ZeroImportanceFails: true, RepackTo: IQ2_XS_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_XXS, Name: "iq3_xxs", BlockSize: 256, TypeSize: 98, Quantized: true, ZeroImportanceFails: true, RepackTo: IQ3_XXS_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ1_S, Name: "iq1_s", BlockSize: 256, TypeSize: 50, Quantized: true, NeedsImatrix: true, RefusedWithoutImatrix: true, ZeroImportanceFails: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_NL, Name: "iq4_nl", BlockSize: 32, TypeSize: 18, Quantized: true, RepackTo: IQ4_NL_R4, TinyImportanceNaN: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_S, Name: "iq3_s", BlockSize: 256, TypeSize: 110, Quantized: true, RepackTo: IQ3_S_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_S, Name: "iq2_s", BlockSize: 256, TypeSize: 82, Quantized: true, RefusedWithoutImatrix: true, ZeroImportanceFails: true, RepackTo: IQ2_S_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_XS, Name: "iq4_xs", BlockSize: 256, TypeSize: 136, Quantized: true, RepackTo: IQ4_XS_R8, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: I8, Name: "i8", BlockSize: 1, TypeSize: 1},
	{ID: I16, Name: "i16", BlockSize: 1, TypeSize: 2},
	{ID: I32, Name: "i32", BlockSize: 1, TypeSize: 4},
	{ID: I64, Name: "i64", BlockSize: 1, TypeSize: 8},
	{ID: F64, Name: "f64", BlockSize: 1, TypeSize: 8},
	{ID: IQ1_M, Name: "iq1_m", BlockSize: 256, TypeSize: 56, Quantized: true, RefusedWithoutImatrix: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: BF16, Name: "bf16", BlockSize: 1, TypeSize: 2, RepackTo: BF16_R16, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q4_0_4X4, Name: "q4_0_4x4", BlockSize: 32, TypeSize: 18, Quantized: true, ImatrixFails: true, Base: Q4_0, Interleave: 4, Quantizable: true},
	{ID: Q4_0_4X8, Name: "q4_0_4x8", BlockSize: 32, TypeSize: 18, Quantized: true, ImatrixFails: true, Base: Q4_0, Interleave: 4, Quantizable: true},
	{ID: Q4_0_8X8, Name: "q4_0_8x8", BlockSize: 32, TypeSize: 18, Quantized: true, ImatrixFails: true, Base: Q4_0, Interleave: 8, Quantizable: true},
	{ID: I2_S, Name: "i2_s", BlockSize: 1, TypeSize: 1, Quantized: true, ToFloat: true},
	{ID: MXFP4, Name: "mxfp4", BlockSize: 32, TypeSize: 17, Quantized: true, RepackTo: MXFP4_R8, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q1_0_G128, Name: "q1_0_g128", BlockSize: 128, TypeSize: 18, Quantized: true, Quantizable: true, ToFloat: true},
	{ID: Q8_0_X4, Name: "q8_0_x4", BlockSize: 32, TypeSize: 34, Quantized: true, NotLoaded: true},
	{ID: Q8_1_X4, Name: "q8_1_x4", BlockSize: 32, TypeSize: 36, Quantized: true, NotLoaded: true},
	{ID: Q8_2_X4, Name: "q8_2_x4", BlockSize: 32, TypeSize: 36, Quantized: true, NotLoaded: true},
	{ID: Q6_0, Name: "q6_0", BlockSize: 32, TypeSize: 26, Quantized: true, RepackTo: Q6_0_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ1_BN, Name: "iq1_bn", BlockSize: 64, TypeSize: 13, RowMeta: 2, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_BN, Name: "iq2_bn", BlockSize: 64, TypeSize: 16, RowMeta: 4, Quantized: true, RepackTo: IQ2_BN_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q8_K64, Name: "q8_K64", BlockSize: 64, TypeSize: 68, Quantized: true, NotLoaded: true},
	{ID: IQ2_K, Name: "iq2_k", BlockSize: 256, TypeSize: 76, Quantized: true, RepackTo: IQ2_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_K, Name: "iq3_k", BlockSize: 256, TypeSize: 110, Quantized: true, RepackTo: IQ3_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_K, Name: "iq4_k", BlockSize: 256, TypeSize: 144, Quantized: true, RepackTo: IQ4_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ5_K, Name: "iq5_k", BlockSize: 256, TypeSize: 176, Quantized: true, RepackTo: IQ5_K_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ6_K, Name: "iq6_k", BlockSize: 256, TypeSize: 212, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_KS, Name: "iq4_ks", BlockSize: 256, TypeSize: 136, RowMeta: 4, Quantized: true, RepackTo: IQ4_KS_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_KS, Name: "iq2_ks", BlockSize: 256, TypeSize: 70, RowMeta: 2, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_KSS, Name: "iq4_kss", BlockSize: 256, TypeSize: 128, RowMeta: 4, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q8_K16, Name: "q8_K16", BlockSize: 64, TypeSize: 64, RowMeta: 20, Quantized: true, NotLoaded: true},
	{ID: Q8_K32, Name: "q8_K32", BlockSize: 256, TypeSize: 296, Quantized: true, NotLoaded: true},
	{ID: Q8_KR8, Name: "q8_KR8", BlockSize: 256, TypeSize: 296, Quantized: true, NotLoaded: true},
	{ID: Q8_K128, Name: "q8_K128", BlockSize: 128, TypeSize: 140, Quantized: true, NotLoaded: true},
	{ID: Q8_KV, Name: "q8_KV", BlockSize: 32, TypeSize: 32, RowMeta: 8, Quantized: true, RepackTo: Q8_KV_R8, Quantizable: true, ToFloat: true},
	{ID: IQ5_KS, Name: "iq5_ks", BlockSize: 256, TypeSize: 168, RowMeta: 4, Quantized: true, RepackTo: IQ5_KS_R4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_KT, Name: "iq2_kt", BlockSize: 256, TypeSize: 68, RowMeta: 4, Quantized: true, RefusedWithoutImatrix: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_KT, Name: "iq3_kt", BlockSize: 256, TypeSize: 100, RowMeta: 4, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_KT, Name: "iq4_kt", BlockSize: 256, TypeSize: 128, RowMeta: 4, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_KS, Name: "iq3_ks", BlockSize: 256, TypeSize: 102, RowMeta: 2, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ2_KL, Name: "iq2_kl", BlockSize: 256, TypeSize: 86, RowMeta: 2, Quantized: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ1_KT, Name: "iq1_kt", BlockSize: 256, TypeSize: 56, RowMeta: 4, Quantized: true, RefusedWithoutImatrix: true, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: Q4_0_R8, Name: "q4_0_r8", BlockSize: 32, TypeSize: 18, Quantized: true, Base: Q4_0, Interleave: 8, Quantizable: true, ToFloat: true},
	{ID: Q5_0_R4, Name: "q5_0_r4", BlockSize: 32, TypeSize: 22, Quantized: true, Base: Q5_0, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: Q8_0_R8, Name: "q8_0_r8", BlockSize: 32, TypeSize: 34, Quantized: true, Base: Q8_0, Interleave: 8, Quantizable: true, ToFloat: true},
	{ID: Q2_K_R4, Name: "q2_k_r4", BlockSize: 256, TypeSize: 84, Quantized: true, Base: Q2_K, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: Q3_K_R4, Name: "q3_k_r4", BlockSize: 256, TypeSize: 110, Quantized: true, Base: Q3_K, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: Q4_K_R4, Name: "q4_k_r4", BlockSize: 256, TypeSize: 144, Quantized: true, Base: Q4_K, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: Q5_K_R4, Name: "q5_k_r4", BlockSize: 256, TypeSize: 176, Quantized: true, Base: Q5_K, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: Q6_K_R4, Name: "q6_k_r4", BlockSize: 256, TypeSize: 210, Quantized: true, Base: Q6_K, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ2_XXS_R4, Name: "iq2_xxs_r4", BlockSize: 256, TypeSize: 66, Quantized: true, RefusedWithoutImatrix: true, Base: IQ2_XXS, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ2_XS_R4, Name: "iq2_xs_r4", BlockSize: 256, TypeSize: 74, Quantized: true, RefusedWithoutImatrix: true, Base: IQ2_XS, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ3_XXS_R4, Name: "iq3_xxs_r4", BlockSize: 256, TypeSize: 98, Quantized: true, Base: IQ3_XXS, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ1_S_R4, Name: "iq1_s_r4", BlockSize: 32, TypeSize: 6, RowMeta: 2, Quantized: true, RefusedWithoutImatrix: true, Base: IQ1_S, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_NL_R4, Name: "iq4_nl_r4", BlockSize: 32, TypeSize: 18, Quantized: true, Base: IQ4_NL, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ3_S_R4, Name: "iq3_s_r4", BlockSize: 256, TypeSize: 110, Quantized: true, Base: IQ3_S, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ2_S_R4, Name: "iq2_s_r4", BlockSize: 256, TypeSize: 82, Quantized: true, RefusedWithoutImatrix: true, Base: IQ2_S, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ4_XS_R8, Name: "iq4_xs_r8", BlockSize: 256, TypeSize: 136, Quantized: true, Base: IQ4_XS, Interleave: 8, Quantizable: true, ToFloat: true},
	{ID: IQ1_M_R4, Name: "iq1_m_r4", BlockSize: 32, TypeSize: 7, RowMeta: 2, Quantized: true, RefusedWithoutImatrix: true, Base: IQ1_M, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: BF16_R16, Name: "bf16_r16", BlockSize: 1, TypeSize: 2, Base: BF16, Interleave: 16, Quantizable: true, ToFloat: true},
	{ID: Q6_0_R4, Name: "q6_0_r4", BlockSize: 32, TypeSize: 26, Quantized: true, Base: Q6_0, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ2_BN_R4, Name: "iq2_bn_r4", BlockSize: 64, TypeSize: 16, RowMeta: 4, Quantized: true, Base: IQ2_BN, Interleave: 4, Quantizable: true, ToFloat: true},
	{ID: IQ2_K_R4, Name: "iq2_k_r4", BlockSize: 256, TypeSize: 76, Quantized: true, Base: IQ2_K, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ3_K_R4, Name: "iq3_k_r4", BlockSize: 256, TypeSize: 110, Quantized: true, Base: IQ3_K, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_K_R4, Name: "iq4_k_r4", BlockSize: 256, TypeSize: 144, Quantized: true, Base: IQ4_K, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ5_K_R4, Name: "iq5_k_r4", BlockSize: 256, TypeSize: 176, Quantized: true, Base: IQ5_K, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ4_KS_R4, Name: "iq4_ks_r4", BlockSize: 256, TypeSize: 136, RowMeta: 4, Quantized: true, Base: IQ4_KS, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: IQ5_KS_R4, Name: "iq5_ks_r4", BlockSize: 256, TypeSize: 168, RowMeta: 4, Quantized: true, Base: IQ5_KS, Interleave: 4, Quantizable: true, ToFloat: true, CUDA: true},
	{ID: MXFP4_R8, Name: "mxfp4_r8", BlockSize: 32, TypeSize: 17, Quantized: true, Base: MXFP4, Interleave: 8, Quantizable: true, ToFloat: true},
	{ID: Q8_K_R16, Name: "q8_k_r16", BlockSize: 256, TypeSize: 258, Quantized: true, Base: Q8_K, Interleave: 16, Quantizable: true, ToFloat: true},
	{ID: Q8_KV_R8, Name: "q8_KV_r8", BlockSize: 32, TypeSize: 32, RowMeta: 4, Quantized: true, Base: Q8_KV, Interleave: 8, Quantizable: true, ToFloat: true},
	{ID: Q8_K_R8, Name: "q8_k_r8", BlockSize: 256, TypeSize: 258, Quantized: true, Base: Q8_K, Interleave: 8, Quantizable: true, ToFloat: true},
}
