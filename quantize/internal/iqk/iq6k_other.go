//go:build !amd64 || purego

package iqk

func iq6SumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32) {
	panic("iqk: iq6SumsFMA without FMA")
}
