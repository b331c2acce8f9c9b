//go:build !amd64 || purego

package iquant

// hasAsm reports whether this build and CPU run the assembly paths.
const hasAsm = false

// asmLevels are the kernel paths this build can run: the portable Go.
var asmLevels = []int{0}

// setAsm does nothing where there is no assembly.
func setAsm(on bool) {}

// setAsmLevel does nothing where there is no assembly.
func setAsmLevel(level int) {}
