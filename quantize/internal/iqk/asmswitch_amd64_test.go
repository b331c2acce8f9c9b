//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// assemblyModes lists the paths a test should run: the portable code, and
// the assembly where the CPU has it.
func assemblyModes() []bool {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return []bool{false, true}
	}
	return []bool{false}
}

// setAssembly turns every assembly path of the package on or off and
// returns a function that restores the previous state.
func setAssembly(on bool) (restore func()) {
	flags := []*bool{&useSplitSearchAVX2, &useIQ2KLSumsFMA, &useIQ2KLLanes, &useIQ2KSAVX2,
		&useIQ4KSSTrialFMA, &useSumsFMA, &useTrialsAVX2, &useWeightsAVX2}
	saved := make([]bool, len(flags))
	for i, f := range flags {
		saved[i], *f = *f, on
	}
	return func() {
		for i, f := range flags {
			*f = saved[i]
		}
	}
}
