//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

func iq6SumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32) {}
