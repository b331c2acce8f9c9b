package kernel

// Search runs the reference's scale searches (make_qx_quants and its kin,
// the methods below). The zero value uses the assembly where the CPU and
// the build have it; with Portable it runs only the portable Go loops, the
// reference for the assembly, so that tests can compare whole kernels
// both ways.
type Search struct {
	Portable bool
}

// asm reports whether s runs the assembly. useAVX2 is this package's own
// test switch (its tests clear it to compare each search both ways).
func (s Search) asm() bool { return useAVX2 && !s.Portable }

// HasAssembly reports whether the searches of this package have assembly on
// this CPU and build (false with -tags purego).
func HasAssembly() bool { return hasAVX2 }
