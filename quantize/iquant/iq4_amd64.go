//go:build amd64 && !purego

package iquant

import "github.com/gquant/gquant/internal/cpu"

// useIQ4SumsFMA selects the assembly iq4Sums and trial-level kernel (FMA and
// AVX2). It is off with the purego tag, which tests the portable code.
var useIQ4SumsFMA = cpu.X86.HasFMA && cpu.X86.HasAVX2

// iq4SumsFMA is iq4Sums with scalar VFMADD231SS: the same sequential sums,
// each product w*q rounded to float32 and each accumulation a single fused
// rounding.
//
//go:noescape
func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32)

// iq4LevelsAVX2 sets out[j] = bestIndexIQ4NL(id*xb[j]) for 32 weights (see
// iq4VecTables). Valid while |id*xb[j]| stays below 2^31, as it does for the
// trial scales.
//
//go:noescape
func iq4LevelsAVX2(xb *float32, id float32, out *[32]uint8, tab *iq4VecTables)
