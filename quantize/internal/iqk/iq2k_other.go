//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useSplitSearchAVX2 = false

func splitSearchFast(sumx, sumw []float32, e2, rL float64, maxI1, minI3 int) (d float32, isShifted bool) {
	return
}

func sortRanksAVX2(x *float32, n int, idx *int) bool { return false }
