// Package cpu reports the x86 features the hand-written kernels need. The
// standard library does not export its own flags and golang.org/x/sys/cpu is
// not a dependency, so the few bits needed are read with CPUID here. On other
// architectures, and with the purego build tag, every feature is false and
// the portable Go kernels run.
//
// GODEBUG's cpu options turn features off for the kernels as the Go runtime
// turns them off for itself: GODEBUG=cpu.avx512f=off runs the AVX2 kernels
// on an AVX-512 machine (to measure them, or to rule them out), cpu.avx2=off
// or cpu.all=off the portable Go.
package cpu

import "strings"

// X86 holds the features, each true only when the CPU has it and the OS
// saves the registers it uses.
var X86 struct {
	HasAVX2 bool // AVX2 (with OS support for the YMM state)
	HasFMA  bool // FMA3
	HasF16C bool // VCVTPH2PS / VCVTPS2PH
	// AVX-512 F, DQ, BW and VL (the Skylake-X / Zen 4 baseline) with OS
	// support for the ZMM and opmask state.
	HasAVX512 bool
	// Intel is whether the vendor is GenuineIntel: a few memory-bound
	// kernels have a variant for Intel's cores, whose shuffle and
	// conversion units differ from AMD's (see their callers).
	Intel bool
}

// applyGODEBUG clears the features that env, a GODEBUG value, switches off
// with the runtime's spelling (cpu.NAME=off, comma-separated). Options can
// only take features away: "on" cannot give a CPU what it lacks, and the
// runtime itself reports malformed or unknown options, so they are skipped.
func applyGODEBUG(env string) {
	for _, field := range strings.Split(env, ",") {
		key, value, ok := strings.Cut(field, "=")
		name, isCPU := strings.CutPrefix(key, "cpu.")
		if !ok || !isCPU || value != "off" {
			continue
		}
		switch name {
		case "all", "avx", "avx2":
			// Every kernel that is not portable Go needs AVX2.
			X86.HasAVX2, X86.HasFMA, X86.HasF16C, X86.HasAVX512 = false, false, false, false
		case "fma":
			X86.HasFMA = false
		case "avx512f", "avx512bw", "avx512dq", "avx512vl":
			X86.HasAVX512 = false
		}
	}
}
