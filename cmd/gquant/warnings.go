package main

import (
	"strings"

	"github.com/gquant/gquant/internal/cli"
)

// Warnings of a plan come from several packages as lines of text; the
// commands print them as text and, with --json, as cli.Warning objects.
// warningOf gives a line its kind and the tensor it is about.

// warningKinds maps a phrase of a warning to its kind; the first phrase
// found decides. Kinds are stable names scripts can test.
var warningKinds = []struct{ phrase, kind string }{
	{"no importance data in", "no-imatrix"},
	{"none matches a tensor quantized here", "imatrix-unused"},
	{"importance data of", "imatrix-adapted"},
	{"without importance data", "imatrix-adapted"},
	{"placement", "placement"},
	{"match no placement rule", "placement"},
	{"matches no tensor", "rule-unused"},
	{"decides nothing", "rule-shadowed"},
	{"to earlier rules that give another type", "rule-overlap"},
	{"probably matches tensors you did not mean", "rule-unanchored"},
	{"only accepts the exact spelling", "type-spelling"},
	{"only knows the spelling", "type-spelling"},
	{"reads flags only before IN", "flag-order"},
	{"surrounding white space", "rule-whitespace"},
	{"contains a comma", "rule-comma"},
	{"empty regex", "rule-empty"},
	{"is not a quantization type", "rule-type"},
	{"custom rules applied with", "rules-ignored-by-reference"},
	{"custom rules ignored with", "rules-ignored"},
	{"--partial-requant", "partial-requant"},
	{"completed by the interrupted run", "resume"},
	{"shard set of another size", "other-shards"},
	{"--extra-output-tensor", "extra-output"},
	{"n_attention_wv", "model-shape"},
	// fit and fit calibrate
	{"ties nothing", "tie-unused"},
	{"gives weights that are not finite", "candidate-not-finite"},
	{"left out:", "candidate-left-out"},
	{"decides no tensor", "rule-unused"},
	{"is measured twice", "kld-duplicate"},
	{"the table does not determine the gains", "kld-too-few"},
	{"shards", "shards"},
}

// warningOf classifies a warning line. A line "NAME: message" where NAME
// is in tensors is about that tensor.
func warningOf(line string, tensors map[string]bool) cli.Warning {
	w := cli.Warning{Kind: "plan", Message: line}
	if name, rest, ok := strings.Cut(line, ": "); ok && tensors[name] {
		w.Tensor, w.Message = name, rest
	}
	for _, k := range warningKinds {
		if strings.Contains(line, k.phrase) {
			w.Kind = k.kind
			break
		}
	}
	return w
}

// warningsOf classifies lines; the result is never nil.
func warningsOf(lines []string, tensors map[string]bool) []cli.Warning {
	out := make([]cli.Warning, 0, len(lines))
	for _, l := range lines {
		out = append(out, warningOf(l, tensors))
	}
	return out
}
