//go:build amd64 && !purego

package iquant

import "github.com/gquant/gquant/internal/cpu"

// useIQ4SumsFMA selects the assembly iq4Sums, trial and descent kernels (FMA
// and AVX2). It is off with the purego tag, which tests the portable code.
var useIQ4SumsFMA = cpu.X86.HasFMA && cpu.X86.HasAVX2

// iq4SumsFMA is iq4Sums with scalar VFMADD231SS: the same sequential sums,
// each product w*q rounded to float32 and each accumulation a single fused
// rounding.
//
//go:noescape
func iq4SumsFMA(weight, xb *float32, L *[32]uint8, values *[17]float32) (sumqx, sumq2 float32)

// iq4TrialsAVX2 is iq4TrialSumsGo for all trial scales at once, one per lane.
//
//go:noescape
func iq4TrialsAVX2(xb, weight *float32, ids *[32]float32, tab *iq4TrialTables, sums *[64]float32)

// iq4DescentStepAVX2 is iq4DescentStepGo over the 32 bytes of levels at L.
//
//go:noescape
func iq4DescentStepAVX2(xb, weight *float32, L *uint8, d float32, tab *iq4TrialTables) (j, dir int)
