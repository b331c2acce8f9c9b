//go:build !amd64 || purego

package iquant

const useNeighbourAVX2 = false

func neighbourJobsAVX2(x, w *float32, q *[8]float32, expand *[4][8]int32, lanes *uint32, jobs *nbJob, njobs, dim int) {
	panic("iquant: neighbourJobsAVX2 without assembly")
}
