//go:build !amd64 || purego

package iqk

// assemblyModes lists the paths a test should run: only the portable code
// in this build.
func assemblyModes() []bool { return []bool{false} }

// setAssembly does nothing: this build has no assembly.
func setAssembly(on bool) (restore func()) { return func() {} }
