//go:build amd64 && !purego

package iquant

// hasAsm reports whether this build and CPU run the assembly paths.
var hasAsm = useNeighbourAVX2 && useSplitAVX2 && useIQ4SumsFMA

// setAsm switches this package's assembly paths on or off (the kernel
// package's own switches stay as they are).
func setAsm(on bool) {
	useNeighbourAVX2, useSplitAVX2, useIQ4SumsFMA = on, on, on
}
