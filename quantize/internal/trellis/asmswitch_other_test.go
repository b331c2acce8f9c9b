//go:build !amd64 || purego

package trellis

// asmLevels are the search paths this build can run: the portable Go.
var asmLevels = []int{0}

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {}
