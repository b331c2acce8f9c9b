//go:build !unix

package main

// lockDir is no lock where flock is not: two fits saving one --cache at
// once may then lose one's new measurements (see saveCache).
func lockDir(dir string, waiting func()) (release func()) { return func() {} }
