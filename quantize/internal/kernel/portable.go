package kernel

// UsePortable makes the searches of this package run their portable Go loops
// (on) or the assembly the CPU and the build allow (off), and returns a
// function that restores the previous choice. It exists for the tests of the
// families, which compare whole kernels, assembly against portable, bit for
// bit; it must not be called while a kernel runs.
func UsePortable(on bool) (restore func()) {
	saved := useAVX2
	useAVX2 = hasAVX2 && !on
	return func() { useAVX2 = saved }
}

// HasAssembly reports whether the searches of this package have assembly on
// this CPU and build (false with -tags purego).
func HasAssembly() bool { return hasAVX2 }
