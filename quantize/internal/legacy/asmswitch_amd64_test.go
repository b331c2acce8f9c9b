//go:build amd64 && !purego

package legacy

// hasAVX2 and hasAVX512 are useAVX2 and useAVX512 as this CPU sets them
// (the tests switch them).
var hasAVX2, hasAVX512 = useAVX2, useAVX2 && useAVX512

// asmLevels are the kernel levels this build and CPU can run, portable
// first: 0 the portable Go, 1 the AVX2 assembly, 2 that with the AVX-512
// kernels.
var asmLevels = func() []int {
	switch {
	case hasAVX512:
		return []int{0, 1, 2}
	case hasAVX2:
		return []int{0, 1}
	}
	return []int{0}
}()

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {
	useAVX2 = hasAVX2 && level >= 1
	useAVX512 = hasAVX512 && level >= 2
}
