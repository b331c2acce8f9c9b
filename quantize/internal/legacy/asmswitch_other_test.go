//go:build !amd64 || purego

package legacy

// asmLevels are the kernel levels this build can run: the portable Go.
var asmLevels = []int{0}

// setAsmLevel selects one of asmLevels.
func setAsmLevel(level int) {}
