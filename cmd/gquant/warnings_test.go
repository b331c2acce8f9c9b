package main

import "testing"

// Every warning line the commands make gets a kind of its own; "plan" is
// left for lines no phrase knows (fit's and calibrate's all had it).
func TestWarningKinds(t *testing.T) {
	for _, tc := range []struct{ line, kind string }{
		{"--tie up,gate ties nothing: no two quantized tensors differ only in these fragments (a tensor joins the first fragment its name contains)", "tie-unused"},
		{"blk.0.ffn_up.weight as iq1_s gives weights that are not finite (the kernel fails on its data or importance): iq1_s left out", "candidate-not-finite"},
		{"type iq2_xxs left out: needs importance data", "candidate-left-out"},
		{"rule 2 (--custom-q) decides no tensor: it matches none, or only tensors an earlier rule decides", "rule-unused"},
		{"mix a is measured twice (rows 1 and 2: KL divergence 0.1 and 0.2): both are fitted", "kld-duplicate"},
		{"3 measured mix(es) for 9 parameters (5 classes of tensors, the depth slope, two floors and the saturation): the table does not determine the gains; measure at least 9 mixes", "kld-too-few"},
		{"something nobody classified", "plan"},
	} {
		if w := warningOf(tc.line, nil); w.Kind != tc.kind {
			t.Errorf("%q: kind %q, want %q", tc.line, w.Kind, tc.kind)
		}
	}
}
