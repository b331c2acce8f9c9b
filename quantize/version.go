package quantize

import (
	"github.com/gquant/gquant/formats"
)

// KernelVersion names the bytes the kernels of this package write. Every
// kernel reproduces ik_llama.cpp at the commit named here byte for byte; the
// number after it counts our own changes of output bytes. Bump the number
// in the same commit as any change that makes any kernel, for any type,
// options or input, write other bytes than before (a fix that matches the
// reference in one more case included): records of earlier outputs (the
// sidecars of gquant quantize, which --reuse and --partial-requant trust,
// and fit's error cache) carry it and stop matching.
const KernelVersion = "ik_llama.cpp@8337e4cd+5"

// Switches lists, by their llama-quantize flag names, the switches of o
// that are on and change the bytes of type t: --symmetric-q40 only q4_0's
// (q4_0_r8 always runs the default search), --slow-iq2ks only iq2_ks's.
// Switches that are on but do not touch t are left out, so records of t's
// bytes do not depend on them. TestSwitchesCoverEveryType checks the list
// against every kernel.
func (o Options) Switches(t formats.Type) []string {
	var out []string
	if o.SymmetricQ40 && t == formats.Q4_0 {
		out = append(out, "symmetric-q40")
	}
	if o.SlowIQ2KS && t == formats.IQ2_KS {
		out = append(out, "slow-iq2ks")
	}
	return out
}
