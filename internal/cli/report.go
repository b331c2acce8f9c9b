package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// JSON reports. Every command that prints a report with --json prints one
// JSON document on stdout whose "schema" field names the command and the
// version of the document's layout: "gquant.<command>/<version>", where
// <command> is the command line's words after the program joined with '-'
// for gquant's commands ("gquant.plan/1") and prefixed with the program for
// the other programs of the toolchain ("gquant.imatrix-check/1"). The
// version grows only when a field changes meaning or goes away; new fields
// keep it. Warnings are objects of one shape (Warning), in an array that is
// present even when empty, and indices follow the text output's (1-based
// where the text counts from 1, as tensor positions; 0-based where the text
// numbers experts and heads as the model's tensors do).

// Schema returns the schema name of a command's JSON report: Schema(1,
// "plan") is "gquant.plan/1", Schema(1, "imatrix", "check") is
// "gquant.imatrix-check/1".
func Schema(version int, command ...string) string {
	if len(command) > 0 && command[0] == "gquant" {
		command = command[1:]
	}
	return fmt.Sprintf("gquant.%s/%d", strings.Join(command, "-"), version)
}

// WriteJSON writes v as one indented JSON document and a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Warning is one warning of a JSON report: Kind is a short stable name
// scripts can test ("no-data", "empty-matrix", ...), Tensor the tensor (or
// importance-matrix entry) it is about, "" for none, and Message the text
// the command prints.
type Warning struct {
	Kind    string `json:"kind"`
	Tensor  string `json:"tensor"`
	Message string `json:"message"`
}

// String is the warning as a text line: "TENSOR: MESSAGE", or the message
// alone.
func (w Warning) String() string {
	if w.Tensor == "" {
		return w.Message
	}
	return w.Tensor + ": " + w.Message
}

// Warnings returns ws, or an empty slice for nil, so that a report's
// warnings array is always present in its JSON.
func Warnings(ws []Warning) []Warning {
	if ws == nil {
		return []Warning{}
	}
	return ws
}

// SummaryLimit is how many warnings of one kind SummarizeWarnings shows
// one by one before it summarises them: a few lines stay readable, the
// hundreds of a 1T-parameter model (three expert tensors in each of 60
// layers) do not.
const SummaryLimit = 4

// SummarizeWarnings returns the text lines for ws, in their order: every
// warning when verbose or when its kind has at most limit warnings, else
// one line for the kind, at the place of its first warning: that warning
// and how many more of the kind there are, with a pointer to --verbose.
func SummarizeWarnings(ws []Warning, limit int, verbose bool) []string {
	count := map[string]int{}
	for _, w := range ws {
		count[w.Kind]++
	}
	var out []string
	done := map[string]bool{}
	for _, w := range ws {
		n := count[w.Kind]
		switch {
		case verbose || n <= limit:
			out = append(out, w.String())
		case !done[w.Kind]:
			done[w.Kind] = true
			out = append(out, fmt.Sprintf("%s [and %d more %s warnings like it: --verbose lists each]", w, n-1, w.Kind))
		}
	}
	return out
}
