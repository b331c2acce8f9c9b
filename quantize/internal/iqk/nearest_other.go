//go:build !amd64 || purego

package iqk

const useSumsFMA = false

func nearestSumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32) {
	panic("iqk: nearestSumsFMA without FMA")
}
