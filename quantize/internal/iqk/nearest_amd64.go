//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// useSumsFMA selects the assembly block sums, which run the same float32
// operations in the same order with the hardware fused multiply-add instead
// of its software emulation; tests clear it to check the portable code.
var useSumsFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// nearestSumsFMA is nearestTable.sums for n > 0 weights; out receives
// sqxP, sq2P, sqxM, sq2M.
//
//go:noescape
func nearestSumsFMA(t *nearestTable, x, w *float32, n int, id float32, out *[4]float32)
