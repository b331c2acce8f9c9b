//go:build !amd64 || purego

package iquant

const useNeighbourFMA = false

func bestNeighbourFMA(levels *uint8, dim int, cands *uint16, n int, diffs, wdiffs *[64]float32) int {
	panic("iquant: bestNeighbourFMA without assembly")
}
