//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useIQ4KSSTrialFMA = false

func iq4kssTrialAsm(xv, wv *[32]float32, shifted bool, id, dl float32) (sqxP, sq2P, sqxM, sq2M float32, ok bool) {
	return 0, 0, 0, 0, false
}
