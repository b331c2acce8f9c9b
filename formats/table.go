// The reference's type table (ggml.c type_traits, iqk repack info). types_test.go checks every
// entry against ../shared/golden/types.tsv.

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

var typeTable = [...]TypeInfo{
	{ID: F32, Name: "f32", BlockSize: 1, TypeSize: 4, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: F32, Interleave: 1},
	{ID: F16, Name: "f16", BlockSize: 1, TypeSize: 2, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: F16, Interleave: 1},
	{ID: Q4_0, Name: "q4_0", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_0, Interleave: 1},
	{ID: Q4_1, Name: "q4_1", BlockSize: 32, TypeSize: 20, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_1, Interleave: 1},
	{ID: Q5_0, Name: "q5_0", BlockSize: 32, TypeSize: 22, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q5_0, Interleave: 1},
	{ID: Q5_1, Name: "q5_1", BlockSize: 32, TypeSize: 24, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q5_1, Interleave: 1},
	{ID: Q8_0, Name: "q8_0", BlockSize: 32, TypeSize: 34, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_0, Interleave: 1},
	{ID: Q8_1, Name: "q8_1", BlockSize: 32, TypeSize: 36, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_1, Interleave: 1},
	{ID: Q2_K, Name: "q2_K", BlockSize: 256, TypeSize: 84, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q2_K, Interleave: 1},
	{ID: Q3_K, Name: "q3_K", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q3_K, Interleave: 1},
	{ID: Q4_K, Name: "q4_K", BlockSize: 256, TypeSize: 144, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_K, Interleave: 1},
	{ID: Q5_K, Name: "q5_K", BlockSize: 256, TypeSize: 176, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q5_K, Interleave: 1},
	{ID: Q6_K, Name: "q6_K", BlockSize: 256, TypeSize: 210, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q6_K, Interleave: 1},
	{ID: Q8_K, Name: "q8_K", BlockSize: 256, TypeSize: 296, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K, Interleave: 1},
	{ID: IQ2_XXS, Name: "iq2_xxs", BlockSize: 256, TypeSize: 66, RowMeta: 0, Quantized: true, NeedsImatrix: true, Base: IQ2_XXS, Interleave: 1},
	{ID: IQ2_XS, Name: "iq2_xs", BlockSize: 256, TypeSize: 74, RowMeta: 0, Quantized: true, NeedsImatrix: true, Base: IQ2_XS, Interleave: 1},
	{ID: IQ3_XXS, Name: "iq3_xxs", BlockSize: 256, TypeSize: 98, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_XXS, Interleave: 1},
	{ID: IQ1_S, Name: "iq1_s", BlockSize: 256, TypeSize: 50, RowMeta: 0, Quantized: true, NeedsImatrix: true, Base: IQ1_S, Interleave: 1},
	{ID: IQ4_NL, Name: "iq4_nl", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_NL, Interleave: 1},
	{ID: IQ3_S, Name: "iq3_s", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_S, Interleave: 1},
	{ID: IQ2_S, Name: "iq2_s", BlockSize: 256, TypeSize: 82, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_S, Interleave: 1},
	{ID: IQ4_XS, Name: "iq4_xs", BlockSize: 256, TypeSize: 136, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_XS, Interleave: 1},
	{ID: I8, Name: "i8", BlockSize: 1, TypeSize: 1, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: I8, Interleave: 1},
	{ID: I16, Name: "i16", BlockSize: 1, TypeSize: 2, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: I16, Interleave: 1},
	{ID: I32, Name: "i32", BlockSize: 1, TypeSize: 4, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: I32, Interleave: 1},
	{ID: I64, Name: "i64", BlockSize: 1, TypeSize: 8, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: I64, Interleave: 1},
	{ID: F64, Name: "f64", BlockSize: 1, TypeSize: 8, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: F64, Interleave: 1},
	{ID: IQ1_M, Name: "iq1_m", BlockSize: 256, TypeSize: 56, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ1_M, Interleave: 1},
	{ID: BF16, Name: "bf16", BlockSize: 1, TypeSize: 2, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: BF16, Interleave: 1},
	{ID: Q4_0_4X4, Name: "q4_0_4x4", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_0_4X4, Interleave: 1},
	{ID: Q4_0_4X8, Name: "q4_0_4x8", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_0_4X8, Interleave: 1},
	{ID: Q4_0_8X8, Name: "q4_0_8x8", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_0_8X8, Interleave: 1},
	{ID: I2_S, Name: "i2_s", BlockSize: 1, TypeSize: 1, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: I2_S, Interleave: 1},
	{ID: MXFP4, Name: "mxfp4", BlockSize: 32, TypeSize: 17, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: MXFP4, Interleave: 1},
	{ID: Q1_0_G128, Name: "q1_0_g128", BlockSize: 128, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q1_0_G128, Interleave: 1},
	{ID: Q8_0_X4, Name: "q8_0_x4", BlockSize: 32, TypeSize: 34, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_0_X4, Interleave: 1},
	{ID: Q8_1_X4, Name: "q8_1_x4", BlockSize: 32, TypeSize: 36, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_1_X4, Interleave: 1},
	{ID: Q8_2_X4, Name: "q8_2_x4", BlockSize: 32, TypeSize: 36, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_2_X4, Interleave: 1},
	{ID: Q6_0, Name: "q6_0", BlockSize: 32, TypeSize: 26, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q6_0, Interleave: 1},
	{ID: IQ1_BN, Name: "iq1_bn", BlockSize: 64, TypeSize: 13, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ1_BN, Interleave: 1},
	{ID: IQ2_BN, Name: "iq2_bn", BlockSize: 64, TypeSize: 16, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ2_BN, Interleave: 1},
	{ID: Q8_K64, Name: "q8_K64", BlockSize: 64, TypeSize: 68, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K64, Interleave: 1},
	{ID: IQ2_K, Name: "iq2_k", BlockSize: 256, TypeSize: 76, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_K, Interleave: 1},
	{ID: IQ3_K, Name: "iq3_k", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_K, Interleave: 1},
	{ID: IQ4_K, Name: "iq4_k", BlockSize: 256, TypeSize: 144, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_K, Interleave: 1},
	{ID: IQ5_K, Name: "iq5_k", BlockSize: 256, TypeSize: 176, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ5_K, Interleave: 1},
	{ID: IQ6_K, Name: "iq6_k", BlockSize: 256, TypeSize: 212, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ6_K, Interleave: 1},
	{ID: IQ4_KS, Name: "iq4_ks", BlockSize: 256, TypeSize: 136, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ4_KS, Interleave: 1},
	{ID: IQ2_KS, Name: "iq2_ks", BlockSize: 256, TypeSize: 70, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ2_KS, Interleave: 1},
	{ID: IQ4_KSS, Name: "iq4_kss", BlockSize: 256, TypeSize: 128, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ4_KSS, Interleave: 1},
	{ID: Q8_K16, Name: "q8_K16", BlockSize: 64, TypeSize: 64, RowMeta: 20, Quantized: true, NeedsImatrix: false, Base: Q8_K16, Interleave: 1},
	{ID: Q8_K32, Name: "q8_K32", BlockSize: 256, TypeSize: 296, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K32, Interleave: 1},
	{ID: Q8_KR8, Name: "q8_KR8", BlockSize: 256, TypeSize: 296, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_KR8, Interleave: 1},
	{ID: Q8_K128, Name: "q8_K128", BlockSize: 128, TypeSize: 140, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K128, Interleave: 1},
	{ID: Q8_KV, Name: "q8_KV", BlockSize: 32, TypeSize: 32, RowMeta: 8, Quantized: true, NeedsImatrix: false, Base: Q8_KV, Interleave: 1},
	{ID: IQ5_KS, Name: "iq5_ks", BlockSize: 256, TypeSize: 168, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ5_KS, Interleave: 1},
	{ID: IQ2_KT, Name: "iq2_kt", BlockSize: 256, TypeSize: 68, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ2_KT, Interleave: 1},
	{ID: IQ3_KT, Name: "iq3_kt", BlockSize: 256, TypeSize: 100, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ3_KT, Interleave: 1},
	{ID: IQ4_KT, Name: "iq4_kt", BlockSize: 256, TypeSize: 128, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ4_KT, Interleave: 1},
	{ID: IQ3_KS, Name: "iq3_ks", BlockSize: 256, TypeSize: 102, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ3_KS, Interleave: 1},
	{ID: IQ2_KL, Name: "iq2_kl", BlockSize: 256, TypeSize: 86, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ2_KL, Interleave: 1},
	{ID: IQ1_KT, Name: "iq1_kt", BlockSize: 256, TypeSize: 56, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ1_KT, Interleave: 1},
	{ID: Q4_0_R8, Name: "q4_0_r8", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_0, Interleave: 8},
	{ID: Q5_0_R4, Name: "q5_0_r4", BlockSize: 32, TypeSize: 22, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q5_0, Interleave: 4},
	{ID: Q8_0_R8, Name: "q8_0_r8", BlockSize: 32, TypeSize: 34, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_0, Interleave: 8},
	{ID: Q2_K_R4, Name: "q2_k_r4", BlockSize: 256, TypeSize: 84, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q2_K, Interleave: 4},
	{ID: Q3_K_R4, Name: "q3_k_r4", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q3_K, Interleave: 4},
	{ID: Q4_K_R4, Name: "q4_k_r4", BlockSize: 256, TypeSize: 144, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q4_K, Interleave: 4},
	{ID: Q5_K_R4, Name: "q5_k_r4", BlockSize: 256, TypeSize: 176, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q5_K, Interleave: 4},
	{ID: Q6_K_R4, Name: "q6_k_r4", BlockSize: 256, TypeSize: 210, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q6_K, Interleave: 4},
	{ID: IQ2_XXS_R4, Name: "iq2_xxs_r4", BlockSize: 256, TypeSize: 66, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_XXS, Interleave: 4},
	{ID: IQ2_XS_R4, Name: "iq2_xs_r4", BlockSize: 256, TypeSize: 74, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_XS, Interleave: 4},
	{ID: IQ3_XXS_R4, Name: "iq3_xxs_r4", BlockSize: 256, TypeSize: 98, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_XXS, Interleave: 4},
	{ID: IQ1_S_R4, Name: "iq1_s_r4", BlockSize: 32, TypeSize: 6, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ1_S, Interleave: 4},
	{ID: IQ4_NL_R4, Name: "iq4_nl_r4", BlockSize: 32, TypeSize: 18, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_NL, Interleave: 4},
	{ID: IQ3_S_R4, Name: "iq3_s_r4", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_S, Interleave: 4},
	{ID: IQ2_S_R4, Name: "iq2_s_r4", BlockSize: 256, TypeSize: 82, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_S, Interleave: 4},
	{ID: IQ4_XS_R8, Name: "iq4_xs_r8", BlockSize: 256, TypeSize: 136, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_XS, Interleave: 8},
	{ID: IQ1_M_R4, Name: "iq1_m_r4", BlockSize: 32, TypeSize: 7, RowMeta: 2, Quantized: true, NeedsImatrix: false, Base: IQ1_M, Interleave: 4},
	{ID: BF16_R16, Name: "bf16_r16", BlockSize: 1, TypeSize: 2, RowMeta: 0, Quantized: false, NeedsImatrix: false, Base: BF16, Interleave: 16},
	{ID: Q6_0_R4, Name: "q6_0_r4", BlockSize: 32, TypeSize: 26, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q6_0, Interleave: 4},
	{ID: IQ2_BN_R4, Name: "iq2_bn_r4", BlockSize: 64, TypeSize: 16, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ2_BN, Interleave: 4},
	{ID: IQ2_K_R4, Name: "iq2_k_r4", BlockSize: 256, TypeSize: 76, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ2_K, Interleave: 4},
	{ID: IQ3_K_R4, Name: "iq3_k_r4", BlockSize: 256, TypeSize: 110, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ3_K, Interleave: 4},
	{ID: IQ4_K_R4, Name: "iq4_k_r4", BlockSize: 256, TypeSize: 144, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ4_K, Interleave: 4},
	{ID: IQ5_K_R4, Name: "iq5_k_r4", BlockSize: 256, TypeSize: 176, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: IQ5_K, Interleave: 4},
	{ID: IQ4_KS_R4, Name: "iq4_ks_r4", BlockSize: 256, TypeSize: 136, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ4_KS, Interleave: 4},
	{ID: IQ5_KS_R4, Name: "iq5_ks_r4", BlockSize: 256, TypeSize: 168, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: IQ5_KS, Interleave: 4},
	{ID: MXFP4_R8, Name: "mxfp4_r8", BlockSize: 32, TypeSize: 17, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: MXFP4, Interleave: 8},
	{ID: Q8_K_R16, Name: "q8_k_r16", BlockSize: 256, TypeSize: 258, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K, Interleave: 16},
	{ID: Q8_KV_R8, Name: "q8_KV_r8", BlockSize: 32, TypeSize: 32, RowMeta: 4, Quantized: true, NeedsImatrix: false, Base: Q8_KV, Interleave: 8},
	{ID: Q8_K_R8, Name: "q8_k_r8", BlockSize: 256, TypeSize: 258, RowMeta: 0, Quantized: true, NeedsImatrix: false, Base: Q8_K, Interleave: 8},
}
