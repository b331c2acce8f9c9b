//go:build amd64 && !purego

#include "textflag.h"

// SUM_YMM adds the float32 lanes of YA and YB (XA is YA's low half) and
// leaves the bits of the total in R, the conversions' finiteness result,
// ending the AVX code (VZEROUPPER). Clobbers XT.
#define SUM_YMM(YA, XA, YB, XT, R) \
	VADDPS       YB, YA, YA; \
	VEXTRACTF128 $1, YA, XT; \
	VADDPS       XT, XA, XA; \
	VPERMILPS    $0x4e, XA, XT; \
	VADDPS       XT, XA, XA; \
	VPERMILPS    $0xb1, XA, XT; \
	VADDPS       XT, XA, XA; \
	VZEROUPPER; \
	VMOVD        XA, R

// The AVX2 loops convert 32 float32 per step: LOAD32 loads them from SI
// into Y0-Y3, SUM32_2 and SUM32_4 add them to two or four accumulators
// (the finiteness sum), NEXT32 moves SI and DI on and loops while CX steps
// are left, and SUM32_4_DONE leaves the bits of the four accumulators'
// total in AX (see SUM_YMM).
// CONV_ARGS loads the conversions' arguments (dst *byte, src *float32, n
// int) into DI, SI and CX.
#define CONV_ARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ src+8(FP), SI; \
	MOVQ n+16(FP), CX

#define LOAD32 \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y1; \
	VMOVUPS 64(SI), Y2; \
	VMOVUPS 96(SI), Y3

#define SUM32_2(A, B) \
	VADDPS Y0, A, A; \
	VADDPS Y1, B, B; \
	VADDPS Y2, A, A; \
	VADDPS Y3, B, B

#define SUM32_4 \
	VADDPS Y0, Y11, Y11; \
	VADDPS Y1, Y12, Y12; \
	VADDPS Y2, Y13, Y13; \
	VADDPS Y3, Y14, Y14

#define NEXT32 \
	ADDQ $128, SI; \
	ADDQ $64, DI; \
	DECQ CX; \
	JNZ  loop

#define SUM32_4_DONE \
	VADDPS Y12, Y11, Y11; \
	VADDPS Y14, Y13, Y13; \
	SUM_YMM(Y11, X11, Y13, X12, AX)

// The AVX-512 loops' counterparts: LOAD32Z loads 32 float32 from SI into
// Z0 and Z1, SUM32Z adds them to Z9 and Z10, and SUM32Z_DONE leaves the
// bits of the total in AX.
#define LOAD32Z \
	VMOVUPS (SI), Z0; \
	VMOVUPS 64(SI), Z1

#define SUM32Z \
	VADDPS Z0, Z9, Z9; \
	VADDPS Z1, Z10, Z10

#define SUM32Z_DONE \
	VADDPS        Z10, Z9, Z9; \
	VEXTRACTF64X4 $1, Z9, Y10; \
	SUM_YMM(Y9, X9, Y10, X10, AX)

// BF16_ROUND_STORE32 adds the rounding terms in Y4-Y7 (0x7fff plus bit 16
// of each u) to the values u in Y0-Y3, takes the high halves of the
// rounded dwords (each at most 0xffff after the shift), packs them to
// words, undoes the pack's per-lane interleaving, stores the 32 words at
// DI, adds the values to the finiteness sums (SUM32_4) and loops (NEXT32).
#define BF16_ROUND_STORE32 \
	VPADDD    Y0, Y4, Y4; \
	VPADDD    Y1, Y5, Y5; \
	VPADDD    Y2, Y6, Y6; \
	VPADDD    Y3, Y7, Y7; \
	VPSRLD    $16, Y4, Y4; \
	VPSRLD    $16, Y5, Y5; \
	VPSRLD    $16, Y6, Y6; \
	VPSRLD    $16, Y7, Y7; \
	VPACKUSDW Y5, Y4, Y4; \
	VPACKUSDW Y7, Y6, Y6; \
	VPERMQ    $0xd8, Y4, Y4; \
	VPERMQ    $0xd8, Y6, Y6; \
	VMOVDQU   Y4, (DI); \
	VMOVDQU   Y6, 32(DI); \
	SUM32_4; \
	NEXT32

// func fp32ToFP16F16C(dst *byte, src *float32, n int) uint32
// Converts n float32 (n a multiple of 32) to halves with VCVTPS2PH, rounding
// to nearest even (immediate 0), 32 values per step, into registers and
// then 32 bytes at a time (VCVTPS2PH's memory form is slower on Zen 4). It
// returns the bits of the sum of all values, as the bf16 loops do: an
// infinity or NaN if some value is one (or, harmlessly, if the sum
// overflows), so a caller learns whether the row is finite without a second
// pass over it. One VADDPS per 8 values, on the float adders the conversion
// leaves idle.
TEXT ·fp32ToFP16F16C(SB), NOSPLIT, $0-28
	CONV_ARGS
	VXORPS       Y9, Y9, Y9
	VXORPS       Y10, Y10, Y10
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32
	VCVTPS2PH   $0, Y0, X4
	VCVTPS2PH   $0, Y1, X5
	VCVTPS2PH   $0, Y2, X6
	VCVTPS2PH   $0, Y3, X7
	VINSERTI128 $1, X5, Y4, Y4
	VINSERTI128 $1, X7, Y6, Y6
	VMOVDQU     Y4, (DI)
	VMOVDQU     Y6, 32(DI)
	SUM32_2(Y9, Y10)
	NEXT32

reduce:
	SUM_YMM(Y9, X9, Y10, X11, AX)
	MOVL AX, ret+24(FP)
	RET

// func fp32ToFP16F16CMem(dst *byte, src *float32, n int) uint32
// fp32ToFP16F16C with VCVTPS2PH's memory form, for Intel: it spares the
// shuffle port the inserts, and Intel runs the memory form at full speed.
TEXT ·fp32ToFP16F16CMem(SB), NOSPLIT, $0-28
	CONV_ARGS
	VXORPS       Y9, Y9, Y9
	VXORPS       Y10, Y10, Y10
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32
	VCVTPS2PH   $0, Y0, (DI)
	VCVTPS2PH   $0, Y1, 16(DI)
	VCVTPS2PH   $0, Y2, 32(DI)
	VCVTPS2PH   $0, Y3, 48(DI)
	SUM32_2(Y9, Y10)
	NEXT32

reduce:
	SUM_YMM(Y9, X9, Y10, X11, AX)
	MOVL AX, ret+24(FP)
	RET

// func fp32ToBF16AVX2(dst *byte, src *float32, n int) uint32
// Converts n float32 (n a multiple of 32) to bfloat16 as FP32ToBF16 does for
// every value but a NaN: the high half of u + 0x7fff + ((u >> 16) & 1). The
// rounding term is chosen by VBLENDVPS on bit 31 of VPMULLW(u, 0x8000 in
// the high words), which is bit 16 of u: no shift, as the shift units are
// busy with the packing. It returns the bits of the sum of all values (in
// no particular order), an infinity or NaN if any value is one (or,
// harmlessly, if the sum overflows): one VADDPS per 8 values, on the float
// adders the conversion leaves idle. Denormal operands cost no extra time
// in additions on current x86 cores.
TEXT ·fp32ToBF16AVX2(SB), NOSPLIT, $0-28
	CONV_ARGS
	MOVL         $0x80000000, AX
	VMOVQ         AX, X8
	VPBROADCASTD X8, Y8            // word multipliers 0 (low), 0x8000 (high)
	MOVL         $0x7fff, AX
	VMOVQ         AX, X9
	VPBROADCASTD X9, Y9            // 0x7fff
	MOVL         $0x8000, AX
	VMOVQ         AX, X10
	VPBROADCASTD X10, Y10          // 0x8000
	VXORPS       Y11, Y11, Y11     // sums
	VXORPS       Y12, Y12, Y12
	VXORPS       Y13, Y13, Y13
	VXORPS       Y14, Y14, Y14
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32

	VPMULLW   Y8, Y0, Y4           // bit 31 = bit 16 of u
	VPMULLW   Y8, Y1, Y5
	VPMULLW   Y8, Y2, Y6
	VPMULLW   Y8, Y3, Y7
	VBLENDVPS Y4, Y10, Y9, Y4      // 0x7fff + bit
	VBLENDVPS Y5, Y10, Y9, Y5
	VBLENDVPS Y6, Y10, Y9, Y6
	VBLENDVPS Y7, Y10, Y9, Y7
	BF16_ROUND_STORE32

reduce:
	SUM32_4_DONE
	MOVL AX, ret+24(FP)
	RET

// func anyNonFiniteAVX2(x *float32, n int) bool
// Reports whether any of n float32 (n a multiple of 32) is an infinity or a
// NaN (all exponent bits set).
TEXT ·anyNonFiniteAVX2(SB), NOSPLIT, $0-17
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7f800000, AX
	VMOVQ         AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y9, Y9, Y9
	SHRQ         $5, CX
	JZ           done

loop:
	VPAND    (SI), Y8, Y0
	VPAND    32(SI), Y8, Y1
	VPAND    64(SI), Y8, Y2
	VPAND    96(SI), Y8, Y3
	VPCMPEQD Y8, Y0, Y0
	VPCMPEQD Y8, Y1, Y1
	VPCMPEQD Y8, Y2, Y2
	VPCMPEQD Y8, Y3, Y3
	VPOR     Y1, Y0, Y0
	VPOR     Y3, Y2, Y2
	VPOR     Y2, Y0, Y0
	VPOR     Y0, Y9, Y9
	ADDQ     $128, SI
	DECQ     CX
	JNZ      loop

done:
	VPTEST     Y9, Y9
	SETNE      AL
	VZEROUPPER
	MOVB       AL, ret+16(FP)
	RET

// func maxBitsAVX2(x *float32, n int) uint32
// The largest bit pattern, as an unsigned integer, of n float32 (n a
// multiple of 32).
TEXT ·maxBitsAVX2(SB), NOSPLIT, $0-20
	MOVQ  x+0(FP), SI
	MOVQ  n+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	SHRQ  $5, CX
	JZ    reduce

loop:
	VPMAXUD (SI), Y0, Y0
	VPMAXUD 32(SI), Y1, Y1
	VPMAXUD 64(SI), Y0, Y0
	VPMAXUD 96(SI), Y1, Y1
	ADDQ    $128, SI
	DECQ    CX
	JNZ     loop

reduce:
	VPMAXUD      Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPMAXUD      X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPMAXUD      X1, X0, X0
	VZEROUPPER
	VMOVD         X0, AX
	MOVL         AX, ret+16(FP)
	RET

// BF16_ROUND16 rounds the 16 float32 in zmm x as FP32ToBF16 does for every
// value but a NaN, the high half of u + 0x7fff + ((u >> 16) & 1), into the
// dwords of t (each at most 0xffff). Z11 = 0x7fff, Z12 = 1 in every dword.
#define BF16_ROUND16(x, t) \
	VPSRLD  $16, x, t; \
	VPANDD  Z12, t, t; \
	VPADDD  Z11, t, t; \
	VPADDD  x, t, t; \
	VPSRLD  $16, t, t

// The qword order that undoes VPACKUSDW's lane interleaving.
DATA bf16PackPerm<>+0(SB)/8, $0
DATA bf16PackPerm<>+8(SB)/8, $2
DATA bf16PackPerm<>+16(SB)/8, $4
DATA bf16PackPerm<>+24(SB)/8, $6
DATA bf16PackPerm<>+32(SB)/8, $1
DATA bf16PackPerm<>+40(SB)/8, $3
DATA bf16PackPerm<>+48(SB)/8, $5
DATA bf16PackPerm<>+56(SB)/8, $7
GLOBL bf16PackPerm<>(SB), RODATA|NOPTR, $64

// func fp32ToBF16AVX512(dst *byte, src *float32, n int) uint32
// fp32ToBF16AVX2's rounding with 512-bit vectors (n a multiple of 32): the
// rounding bit is taken with a shift (AVX-512 has the shift throughput the
// AVX2 loop saved with VPMULLW). The 32 results are narrowed with one
// VPACKUSDW and one VPERMQ: two VPMOVDW and a VINSERTI64X4 were five
// shuffle uops per 32 values on Intel's one 512-bit shuffle port, which kept
// the loop at 0.8x a plain copy there. It returns the bits of the sum of
// all values, as fp32ToBF16AVX2 does: an infinity or NaN if some value is
// one (whose conversion here is wrong: the caller redoes the row) or,
// harmlessly, if the sum overflows.
TEXT ·fp32ToBF16AVX512(SB), NOSPLIT, $0-28
	CONV_ARGS
	MOVL         $0x7fff, AX
	VPBROADCASTD AX, Z11
	MOVL         $1, AX
	VPBROADCASTD AX, Z12
	VMOVDQU64    bf16PackPerm<>(SB), Z13
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32Z
	BF16_ROUND16(Z0, Z2)
	BF16_ROUND16(Z1, Z3)
	VPACKUSDW    Z3, Z2, Z4
	VPERMQ       Z4, Z13, Z4
	VMOVDQU64    Z4, (DI)
	SUM32Z
	NEXT32

reduce:
	SUM32Z_DONE
	MOVL AX, ret+24(FP)
	RET

// func bf16ToFP32AVX2(dst *float32, src *byte, n int)
// Widens n bfloat16 values (n a multiple of 16) exactly: each 16-bit value
// becomes the high half of a float32.
TEXT ·bf16ToFP32AVX2(SB), NOSPLIT, $0-24
	CONV_ARGS
	SHRQ $4, CX
	JZ   bf16done

bf16loop:
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       bf16loop

bf16done:
	VZEROUPPER
	RET

// The bf16 readers: BF16_MAX_SETUP puts 0x7fff in every word of Y4 and
// clears the running maximum Y5; BF16_WIDEN16_MAX widens the 16 values at
// (SI) to float32 in Y0 and Y2 and takes their magnitudes into Y5 (the
// masked load is a second read of the line the widening loads just brought
// in, so the check costs no pass of its own over the input); BF16_MAX_AX
// leaves the largest word of Y5 in AX: it is the complement of the smallest
// complement, which VPHMINPOSUW finds among eight.
#define BF16_MAX_SETUP \
	VPCMPEQW Y4, Y4, Y4; \
	VPSRLW   $1, Y4, Y4; \
	VPXOR    Y5, Y5, Y5

#define BF16_WIDEN16_MAX \
	VPAND     (SI), Y4, Y1; \
	VPMOVZXWD (SI), Y0; \
	VPMOVZXWD 16(SI), Y2; \
	VPMAXUW   Y1, Y5, Y5; \
	VPSLLD    $16, Y0, Y0; \
	VPSLLD    $16, Y2, Y2

#define BF16_MAX_AX \
	VEXTRACTI128 $1, Y5, X1; \
	VPMAXUW      X1, X5, X5; \
	VPCMPEQW     X1, X1, X1; \
	VPXOR        X1, X5, X5; \
	VPHMINPOSUW  X5, X5; \
	VMOVD        X5, AX; \
	NOTL         AX; \
	VZEROUPPER

// func bf16ToFP32MaxAVX2(dst *float32, src *byte, n int) uint16
// bf16ToFP32AVX2 that also returns the largest of the n values' bit
// patterns without the sign (n a multiple of 16).
TEXT ·bf16ToFP32MaxAVX2(SB), NOSPLIT, $0-26
	CONV_ARGS
	BF16_MAX_SETUP
	SHRQ $4, CX
	JZ   maxdone

maxloop:
	BF16_WIDEN16_MAX
	VMOVDQU Y0, (DI)
	VMOVDQU Y2, 32(DI)
	ADDQ    $32, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     maxloop

maxdone:
	BF16_MAX_AX
	MOVW AX, ret+24(FP)
	RET

// func fp32ToFP16AVX512(dst *byte, src *float32, n int) uint32
// fp32ToFP16F16C with 512-bit vectors, 64 values per step and one step of
// 32 for the rest (n a multiple of 32): VCVTPS2PH rounds each zmm of 16
// values to nearest even as the ymm form does, each result is stored as it
// is (32 bytes), and the result is the same sum. Half the instructions per
// value of the AVX2 loop, which leaves the loop bound by the loads and
// stores alone.
TEXT ·fp32ToFP16AVX512(SB), NOSPLIT, $0-28
	CONV_ARGS
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	MOVQ         CX, DX
	SHRQ         $6, CX
	JZ           tail

loop:
	LOAD32Z
	VMOVUPS      128(SI), Z2
	VMOVUPS      192(SI), Z3
	VCVTPS2PH    $0, Z0, Y4
	VCVTPS2PH    $0, Z1, Y5
	VCVTPS2PH    $0, Z2, Y6
	VCVTPS2PH    $0, Z3, Y7
	VMOVDQU      Y4, (DI)
	VMOVDQU      Y5, 32(DI)
	VMOVDQU      Y6, 64(DI)
	VMOVDQU      Y7, 96(DI)
	SUM32Z
	VADDPS       Z2, Z9, Z9
	VADDPS       Z3, Z10, Z10
	ADDQ         $256, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          loop

tail:
	TESTQ        $32, DX
	JZ           reduce
	LOAD32Z
	VCVTPS2PH    $0, Z0, Y4
	VCVTPS2PH    $0, Z1, Y5
	VMOVDQU      Y4, (DI)
	VMOVDQU      Y5, 32(DI)
	SUM32Z

reduce:
	SUM32Z_DONE
	MOVL AX, ret+24(FP)
	RET

// func fp32ToFP16AVX512Mem(dst *byte, src *float32, n int) uint32
// fp32ToFP16AVX512 with VCVTPS2PH's memory form, for Intel (see
// fp32ToFP16F16CMem): 32 values per step.
TEXT ·fp32ToFP16AVX512Mem(SB), NOSPLIT, $0-28
	CONV_ARGS
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32Z
	VCVTPS2PH    $0, Z0, (DI)
	VCVTPS2PH    $0, Z1, 32(DI)
	SUM32Z
	NEXT32

reduce:
	SUM32Z_DONE
	MOVL AX, ret+24(FP)
	RET

// func fp32ToBF16AVX2Shift(dst *byte, src *float32, n int) uint32
// fp32ToBF16AVX2 for Intel: the rounding bit is taken with a shift and an
// AND, two uops on any of three ports, where Intel's VBLENDVPS alone is
// three (AMD's shift units are the ones the packing needs, hence the
// VPMULLW there).
TEXT ·fp32ToBF16AVX2Shift(SB), NOSPLIT, $0-28
	CONV_ARGS
	MOVL         $1, AX
	VMOVQ         AX, X8
	VPBROADCASTD X8, Y8            // 1
	MOVL         $0x7fff, AX
	VMOVQ         AX, X9
	VPBROADCASTD X9, Y9            // 0x7fff
	VXORPS       Y11, Y11, Y11     // sums
	VXORPS       Y12, Y12, Y12
	VXORPS       Y13, Y13, Y13
	VXORPS       Y14, Y14, Y14
	SHRQ         $5, CX
	JZ           reduce

loop:
	LOAD32
	VPSRLD    $16, Y0, Y4
	VPSRLD    $16, Y1, Y5
	VPSRLD    $16, Y2, Y6
	VPSRLD    $16, Y3, Y7
	VPAND     Y8, Y4, Y4
	VPAND     Y8, Y5, Y5
	VPAND     Y8, Y6, Y6
	VPAND     Y8, Y7, Y7
	VPADDD    Y9, Y4, Y4
	VPADDD    Y9, Y5, Y5
	VPADDD    Y9, Y6, Y6
	VPADDD    Y9, Y7, Y7
	BF16_ROUND_STORE32

reduce:
	SUM32_4_DONE
	MOVL AX, ret+24(FP)
	RET

// func bf16ToFP16MaxAVX2(dst *byte, src *byte, n int) uint16
// Converts n bfloat16 values (n a multiple of 16) to IEEE halves: each is
// widened as bf16ToFP32AVX2 does and rounded by VCVTPS2PH to nearest even,
// so no float32 row is stored. Returns the largest magnitude bit pattern,
// as bf16ToFP32MaxAVX2 does.
TEXT ·bf16ToFP16MaxAVX2(SB), NOSPLIT, $0-26
	CONV_ARGS
	BF16_MAX_SETUP
	SHRQ $4, CX
	JZ   done

loop:
	BF16_WIDEN16_MAX
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y2, X2
	VMOVDQU   X0, (DI)
	VMOVDQU   X2, 16(DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

done:
	BF16_MAX_AX
	MOVW AX, ret+24(FP)
	RET

// func bf16ToFP16MaxAVX512(dst *byte, src *byte, n int) uint16
// bf16ToFP16MaxAVX2 with 512-bit vectors, 32 values per step (n a
// multiple of 32).
TEXT ·bf16ToFP16MaxAVX512(SB), NOSPLIT, $0-26
	CONV_ARGS
	VPTERNLOGD $0xff, Z4, Z4, Z4
	VPSRLW     $1, Z4, Z4 // 0x7fff in every word
	VPXORD     Z5, Z5, Z5
	SHRQ       $5, CX
	JZ         done

loop:
	VPANDD    (SI), Z4, Z1
	VPMOVZXWD (SI), Z0
	VPMOVZXWD 32(SI), Z2
	VPMAXUW   Z1, Z5, Z5
	VPSLLD    $16, Z0, Z0
	VPSLLD    $16, Z2, Z2
	VCVTPS2PH $0, Z0, Y0
	VCVTPS2PH $0, Z2, Y2
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y2, 32(DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       loop

done:
	VEXTRACTI64X4 $1, Z5, Y1
	VPMAXUW       Y1, Y5, Y5
	BF16_MAX_AX
	MOVW AX, ret+24(FP)
	RET

// func bf16MaxAVX2(src *byte, n int) uint16
// The largest bit pattern v & 0x7fff of n little-endian bfloat16 values
// (n a multiple of 32): a bf16 row's largest magnitude while it is finite,
// infinity's 0x7f80 or more if it is not. 32 values per step, in two
// running maxima.
TEXT ·bf16MaxAVX2(SB), NOSPLIT, $0-18
	MOVQ     src+0(FP), SI
	MOVQ     n+8(FP), CX
	VPCMPEQW Y4, Y4, Y4
	VPSRLW   $1, Y4, Y4 // 0x7fff in every word
	VPXOR    Y5, Y5, Y5
	VPXOR    Y6, Y6, Y6
	SHRQ     $5, CX
	JZ       done

loop:
	VPAND   (SI), Y4, Y0
	VPAND   32(SI), Y4, Y1
	VPMAXUW Y0, Y5, Y5
	VPMAXUW Y1, Y6, Y6
	ADDQ    $64, SI
	DECQ    CX
	JNZ     loop

done:
	VPMAXUW Y6, Y5, Y5
	BF16_MAX_AX
	MOVW AX, ret+16(FP)
	RET

// func bf16MaxAVX512(src *byte, n int) uint16
// bf16MaxAVX2 with 512-bit vectors, 32 values per step.
TEXT ·bf16MaxAVX512(SB), NOSPLIT, $0-18
	MOVQ       src+0(FP), SI
	MOVQ       n+8(FP), CX
	VPTERNLOGD $0xff, Z4, Z4, Z4
	VPSRLW     $1, Z4, Z4 // 0x7fff in every word
	VPXORD     Z5, Z5, Z5
	SHRQ       $5, CX
	JZ         done

loop:
	VPANDD  (SI), Z4, Z0
	VPMAXUW Z0, Z5, Z5
	ADDQ    $64, SI
	DECQ    CX
	JNZ     loop

done:
	VEXTRACTI64X4 $1, Z5, Y1
	VPMAXUW       Y1, Y5, Y5
	BF16_MAX_AX
	MOVW AX, ret+16(FP)
	RET
