//go:build !amd64 || purego

package iquant

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useNeighbourAVX2 = false

func neighbourJobsAVX2(x, w *float32, q *[8]float32, expand *[4][8]int32, lanes *uint32, jobs *nbJob, njobs, dim int) {
}
