//go:build amd64 && !purego

package iqk

// iq6SumsFMA (in nearest_amd64.s, sharing nearestSumsFMA's loop) is iq6Sums
// for n > 0 weights in assembly, with the same float32
// operations in the same order and the hardware fused multiply-add; out
// receives sqxP, sq2P, sqxM, sq2M. It is used when useSumsFMA is set.
//
//go:noescape
func iq6SumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32)
