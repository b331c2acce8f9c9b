//go:build !amd64 || purego

package iqk

// assemblyModes lists the paths a test should run: only the portable code
// (level 0) in this build.
func assemblyModes() []int { return []int{0} }

// setAssembly does nothing: this build has no assembly.
func setAssembly(level int) (restore func()) { return func() {} }
