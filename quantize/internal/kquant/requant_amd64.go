//go:build amd64 && !purego

package kquant

import "github.com/gquant/gquant/internal/cpu"

// useAVX2 selects requantAVX2; tests clear it to check the portable loop.
var useAVX2 = cpu.X86.HasAVX2

// requantAVX2 is requantPortable for n a multiple of 8, eight values per
// step with the same float32 operations.
//
//go:noescape
func requantAVX2(x *float32, n int, dm, d float32, lo, hi, off int32, L *uint8)

// absMaxAVX2 is TernaryCheck.AddMax's largest magnitude of x[:n] for n a
// multiple of 8, or nan true.
//
//go:noescape
func absMaxAVX2(x *float32, n int) (max float32, nan bool)

// ternarySumsAVX2 is TernaryCheck.AddSums for x[:n], n > 0, no NaN in the
// call.
//
//go:noescape
func ternarySumsAVX2(x *float32, n int, out *ternarySums)

// roundShiftedAVX2 is roundShifted's fast path for n a multiple of 8: it
// reports false, leaving L partly set, when a product is not below 2^22 in
// magnitude or is NaN.
//
//go:noescape
func roundShiftedAVX2(x *float32, n int, mm, lm, id float32, hi int32, L *uint8) bool
