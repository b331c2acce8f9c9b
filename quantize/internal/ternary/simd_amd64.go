//go:build amd64 && !purego

package ternary

import "github.com/gquant/gquant/internal/cpu"

// useAVX2 selects the assembly loops, which need AVX2 and an operating
// system that saves the YMM registers.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// absMaxAVX2 stores in lanes the largest magnitude of src[i] over each lane
// i mod 8 of n (a multiple of 32) values, keeping the lane's maximum when
// the value is a NaN.
//
//go:noescape
func absMaxAVX2(src *float32, n int, lanes *[8]float32)

// tritsAVX2 writes the trit (see tritBits) of each of n (a multiple of 32)
// values to dst, one byte each.
//
//go:noescape
func tritsAVX2(src *float32, n int, thresh float32, dst *byte)
