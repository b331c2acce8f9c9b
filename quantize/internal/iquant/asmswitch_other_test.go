//go:build !amd64 || purego

package iquant

// hasAsm reports whether this build and CPU run the assembly paths.
const hasAsm = false

// setAsm does nothing where there is no assembly.
func setAsm(on bool) {}
