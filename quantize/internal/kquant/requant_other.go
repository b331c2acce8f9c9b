//go:build !amd64 || purego

package kquant

// useAVX2 is false here: the portable loop runs.
var useAVX2 = false

func requantAVX2(x *float32, n int, dm, d float32, lo, hi, off int32, L *uint8) {
	panic("kquant: no assembly on this platform")
}

func ternarySumsAVX2(x *float32, n int, out *ternarySums) {
	panic("kquant: no assembly on this platform")
}
