//go:build amd64 && !purego

package iquant

// hasAsm reports whether this build and CPU run the assembly paths.
var hasAsm = useNeighbourAVX2 && useSplitAVX2 && useIQ4SumsFMA

// hasAVX512 reports whether the AVX-512 paths run here.
var hasAVX512 = hasAsm && useAVX512

// asmLevels are the kernel paths this build and CPU can run, portable first:
// 0 the portable Go, 1 the AVX2/FMA assembly, 2 that with the AVX-512
// kernels on top.
var asmLevels = func() []int {
	switch {
	case hasAVX512:
		return []int{0, 1, 2}
	case hasAsm:
		return []int{0, 1}
	}
	return []int{0}
}()

// setAsm switches this package's assembly paths on (all this CPU runs) or
// off (the kernel package's own switches stay as they are).
func setAsm(on bool) {
	if on {
		setAsmLevel(asmLevels[len(asmLevels)-1])
	} else {
		setAsmLevel(0)
	}
}

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {
	useNeighbourAVX2, useSplitAVX2, useIQ4SumsFMA = level >= 1, level >= 1, level >= 1
	useAVX512 = level >= 2
}
