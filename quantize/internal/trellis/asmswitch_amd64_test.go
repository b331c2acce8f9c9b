//go:build amd64 && !purego

package trellis

// hasAVX2 is useAVX2 as this CPU sets it (the tests switch useAVX2).
var hasAVX2 = useAVX2

// asmLevels are the search paths this build and CPU can run, portable
// first: 0 the portable Go, 1 the AVX2 assembly with the exhaustive block
// search, 2 that with the pruned block search (the default).
var asmLevels = func() []int {
	if hasAVX2 {
		return []int{0, 1, 2}
	}
	return []int{0}
}()

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {
	useAVX2 = hasAVX2 && level >= 1
	usePrunedSearch = level >= 2
}
