// Package cpu reports the x86 features the hand-written kernels need. The
// standard library does not export its own flags and golang.org/x/sys/cpu is
// not a dependency, so the few bits needed are read with CPUID here. On other
// architectures, and with the purego build tag, every feature is false and
// the portable Go kernels run.
package cpu

// X86 holds the features, each true only when the CPU has it and the OS
// saves the registers it uses.
var X86 struct {
	HasAVX2 bool // AVX2 (with OS support for the YMM state)
	HasFMA  bool // FMA3
	HasF16C bool // VCVTPH2PS / VCVTPS2PH
	// AVX-512 F, DQ, BW and VL (the Skylake-X / Zen 4 baseline) with OS
	// support for the ZMM and opmask state.
	HasAVX512 bool
}
