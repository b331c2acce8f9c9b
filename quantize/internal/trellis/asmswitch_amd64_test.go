//go:build amd64 && !purego

package trellis

// hasAVX2 and hasAVX512 are useAVX2 and useBlockAVX512 as this CPU sets
// them (the tests switch them).
var hasAVX2, hasAVX512 = useAVX2, useBlockAVX512

// asmLevels are the search paths this build and CPU can run, portable
// first: 0 the portable Go, 1 the AVX2 assembly with the exhaustive block
// search, 2 that with the pruned block searches (groups of 8 and of 4), 3
// that with the AVX-512 block searches (for groups of 4, and for groups of 8 where
// the clusters are small), 4 that with the AVX-512 pruned search for groups
// of 8, 5 that with iq1_kt's trial searches at two scales in one pass, 6 that
// with that pass filtered, 7 that with the AVX-512 pruned search for groups
// of 4 (prune4.go).
var asmLevels = func() []int {
	switch {
	case hasAVX512:
		return []int{0, 1, 2, 3, 4, 5, 6, 7}
	case hasAVX2:
		return []int{0, 1, 2}
	}
	return []int{0}
}()

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {
	useAVX2 = hasAVX2 && level >= 1
	usePrunedSearch = level >= 2
	usePruned4AVX2 = level >= 2
	useBlockAVX512 = hasAVX512 && level >= 3
	usePrunedAVX512 = level >= 4
	useFusedSearch = level >= 5
	useFilteredSearch = level >= 6
	usePruned4 = level >= 7
}
