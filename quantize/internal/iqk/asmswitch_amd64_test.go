//go:build amd64 && !purego

package iqk

import "github.com/gquant/gquant/internal/cpu"

// hasIQ2KS512 is useIQ2KS512 as this CPU sets it (the tests switch it),
// and hasTrials512 useTrials512.
var hasIQ2KS512, hasTrials512 = useIQ2KS512, useTrials512

// assemblyModes lists the paths a test should run, portable first: 0 the
// portable Go, 1 the AVX2/FMA assembly, 2 that with the AVX-512 kernels on
// top, as far as the CPU has them.
func assemblyModes() []int {
	switch {
	case !cpu.X86.HasAVX2 || !cpu.X86.HasFMA:
		return []int{0}
	case hasIQ2KS512:
		return []int{0, 1, 2}
	}
	return []int{0, 1}
}

// setAssembly selects one of assemblyModes for every assembly path of the
// package and returns a function that restores the previous state.
func setAssembly(level int) (restore func()) {
	flags := []*bool{&useSplitSearchAVX2, &useIQ2KLSumsFMA, &useIQ2KLLanes, &useIQ2KSAVX2,
		&useIQ4KSSTrialFMA, &useSumsFMA, &useTrialsAVX2, &useWeightsAVX2}
	saved := make([]bool, len(flags))
	for i, f := range flags {
		saved[i], *f = *f, level >= 1
	}
	saved512, savedTrials512 := useIQ2KS512, useTrials512
	useIQ2KS512 = hasIQ2KS512 && level >= 2
	useTrials512 = hasTrials512 && level >= 2
	return func() {
		for i, f := range flags {
			*f = saved[i]
		}
		useIQ2KS512, useTrials512 = saved512, savedTrials512
	}
}
