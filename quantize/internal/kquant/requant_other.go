//go:build !amd64 || purego

package kquant

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

// useAVX2 is false here: the portable loop runs.
var useAVX2 = false

func requantAVX2(x *float32, n int, dm, d float32, lo, hi, off int32, L *uint8) {}

func absMaxAVX2(x *float32, n int) (max float32, nan bool) { return 0, true }

func ternarySumsAVX2(x *float32, n int, out *ternarySums) {}

func roundShiftedAVX2(x *float32, n int, mm, lm, id float32, hi int32, L *uint8) bool {
	return false
}
