//go:build !amd64 || purego

package iqk

// No assembly in this build (see package kernel's doc): the switches are
// false, and the assembly functions are stubs that do nothing and return
// zero values, "nothing done".

var useIQ2KSAVX2 = false

var useIQ2KS512 = false

func iq2ksFitAVX2(x, w *float32, params *[12]float32, out *[4]float32) {}

func iq2ksErrorAVX2(x, w *float32, params *[8]float32, negD float32, idx *[32]int32) float32 {
	return 0
}

func iq2ksFitsAVX2(x, w *float32, params *[12]float32, n int, out *[4]float32) {}

type iq2ksGrid struct{}

var iq2ksGrids [2]iq2ksGrid

type iq2ksFitSums struct {
	sumqx1, sumq21, sumqx2, sumq22 [56]float32
}

type iq2ksPicks struct {
	ok           [56]int32
	bestD, score [56]float32
}

func iq2ksFitsCountAVX2(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32) {
}

func iq2ksFitsCount512(x, w *float32, maxv float32, den *float32, n int, grid *iq2ksGrid, raw *[4][8]float32) {
}

func iq2ksReducePickAVX2(raw *[56][4][8]float32, p *iq2ksPicks) {}

func iq2ksPickAVX2(s *iq2ksFitSums, p *iq2ksPicks) {}

func iq2ksAccumAVX2(x, w *float32, idx *[32]uint8, values *[8]float32, vd float32, acc *[16]float32) {
}

type iq2ksThrGrid struct{}

var iq2ksThrGrids [2]iq2ksThrGrid

var iq2ksThrDen [2][32]float32

func iq2ksFitsThr512(x, w *float32, maxv float32, den *[32]float32, grid *iq2ksThrGrid, raw *[4][8]float32) bool {
	return false
}
