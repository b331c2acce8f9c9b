package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "inspect",
		Summary: "show an importance matrix: format, chunks, datasets, per-tensor statistics",
		JSON:    true,
		Run:     runInspect,
	})
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("inspect", "inspect FILE [--model MODEL.gguf] [--json]",
		"Shows the file's format, chunk count and datasets, and per entry: values, calls, the\n"+
			"min/mean/max of the per-column means, the share of zero columns, and the experts\n"+
			"(or heads) that never received data. A .dat file does not record how many experts\n"+
			"an entry holds: --model gives it, otherwise it is inferred and the report says how.",
		stderr,
		cli.Example{About: "chunks, datasets and each entry's values; experts without data",
			Line: "imatrix inspect --model model-bf16.gguf imatrix.dat"},
		cli.Example{About: "for a script",
			Line: "imatrix inspect --json imatrix.gguf"},
	)
	asJSON := fs.Bool("json", false, "print one JSON document instead of text (schema gquant.imatrix-inspect/1)")
	model := fs.String("model", "", "model `GGUF` whose tensor shapes give each entry's matrix count")
	if status, done := parseFlags(fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 1 {
		return badArgs(fs, stderr, "want one FILE, got %d argument(s)", fs.NArg())
	}
	return finish("inspect", inspect(fs.Arg(0), *model, *asJSON, stdout), stderr)
}

// inspectReport is what inspect shows, in text or as JSON. Matrix
// numbers (empty_matrices) count from 0, as the text's and the model's
// experts do.
type inspectReport struct {
	Schema   string         `json:"schema"`
	Path     string         `json:"path"`
	Format   imatrix.Format `json:"format"`
	Entries  int            `json:"entries"`
	Chunks   int            `json:"chunks"`
	Datasets []string       `json:"datasets"`
	// Experts and ExpertsFrom say how the expert entries were split.
	Experts     int            `json:"experts,omitempty"`
	ExpertsFrom string         `json:"experts_from,omitempty"`
	Tensors     []tensorReport `json:"tensors"`
	// Warnings: entries with matrices without data ("empty-matrix", "all-zero")
	// and entries whose matrix count is unknown ("unknown-matrices").
	Warnings []cli.Warning `json:"warnings"`
}

type tensorReport struct {
	Name        string    `json:"name"`
	Values      int       `json:"values"`
	Matrices    int       `json:"matrices"`
	MatricesBy  string    `json:"matrices_from"`
	Calls       []float64 `json:"calls"`
	Min         float64   `json:"min"`
	Mean        float64   `json:"mean"`
	Max         float64   `json:"max"`
	ZeroColumns int       `json:"zero_columns"`
	ZeroShare   float64   `json:"zero_share"`
	Empty       []int     `json:"empty_matrices"`
}

func inspect(path, modelPath string, asJSON bool, stdout io.Writer) error {
	m, err := imatrix.Open(path)
	if err != nil {
		return err
	}
	ne2, err := modelShapes(modelPath)
	if err != nil {
		return err
	}
	l := imatrix.NewLayout(m, ne2)
	rep := inspectReport{Schema: cli.Schema(1, "imatrix", "inspect"), Path: path, Tensors: []tensorReport{}, Format: m.Format, Entries: m.Len(), Chunks: m.Chunks,
		Datasets: append([]string{}, m.Datasets...), Experts: l.Experts, ExpertsFrom: l.Inference}
	for _, e := range m.Entries {
		st := e.Stats(l.Matrices[e.Name])
		rep.Tensors = append(rep.Tensors, tensorReport{Name: e.Name, Values: st.Values, Matrices: st.Matrices,
			MatricesBy: l.Source[e.Name], Calls: st.Calls, Min: st.Min, Mean: st.Mean, Max: st.Max,
			ZeroColumns: st.ZeroColumns, ZeroShare: st.ZeroShare, Empty: append([]int{}, st.Empty...)})
	}
	if asJSON {
		rep.Warnings = cli.Warnings(layoutWarnings(m, l))
		return cli.WriteJSON(stdout, rep)
	}
	fmt.Fprintln(stdout, describe(path, m))
	if modelPath != "" {
		fmt.Fprintf(stdout, "matrices per entry: from the tensor shapes of %s\n", modelPath)
	}
	if l.Inference != "" {
		fmt.Fprintf(stdout, "experts: %s\n", l.Inference)
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Names are escaped here, not only by the output's escaping writer:
	// the tabwriter takes a 0xff byte for its escape character and a tab
	// or newline for a cell or row, which broke the table.
	width := len("name")
	for _, t := range rep.Tensors {
		width = max(width, utf8.RuneCountInString(cli.EscapeInline(t.Name)))
	}
	fmt.Fprintf(tw, "%-*s\tvalues\tmatrices\tcalls\tmin\tmean\tmax\tzero cols\tno data\t\n", width, "name")
	var gaps []string
	for _, t := range rep.Tensors {
		empty := "-"
		if len(t.Empty) > 0 {
			empty = strings.Trim(fmt.Sprint(t.Empty), "[]")
			if t.Matrices == 1 {
				empty = "all"
			}
			gaps = append(gaps, t.Name)
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%s\t%.4g\t%.4g\t%.4g\t%s\t%s\t\n", width, cli.EscapeInline(t.Name), t.Values, t.Matrices,
			callsText(t.Calls), t.Min, t.Mean, t.Max, share(t.ZeroShare), empty)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	if len(gaps) == 0 {
		fmt.Fprintln(stdout, "every entry has data for all its matrices")
	} else {
		fmt.Fprintf(stdout, "%d of %d entries have matrices without data (column \"no data\": experts or heads, 0-based)\n", len(gaps), len(rep.Tensors))
	}
	return nil
}

// callsText shows one count, or the range of per-matrix counts.
func callsText(c []float64) string {
	switch {
	case len(c) == 0:
		return "-"
	case len(c) == 1:
		return fmt.Sprintf("%.0f", c[0])
	}
	lo, hi := slices.Min(c), slices.Max(c)
	if lo == hi {
		return fmt.Sprintf("%.0f each", lo)
	}
	return fmt.Sprintf("%.0f..%.0f", lo, hi)
}

func share(f float64) string {
	if f == 0 {
		return "0"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// layoutWarnings lists the entries with matrices (experts, heads) without
// data and those whose matrix count is unknown, in file order.
func layoutWarnings(m *imatrix.Matrix, l *imatrix.Layout) []cli.Warning {
	var out []cli.Warning
	for _, e := range m.Entries {
		n := l.Matrices[e.Name]
		if strings.HasPrefix(l.Source[e.Name], "unknown") {
			out = append(out, cli.Warning{Kind: "unknown-matrices", Tensor: e.Name,
				Message: "expert count unknown: taken as one matrix (pass --model)"})
		}
		st := e.Stats(n)
		switch {
		case len(st.Empty) == 0:
		case st.Matrices > 1:
			out = append(out, cli.Warning{Kind: imatrix.KindEmpty, Tensor: e.Name, Message: imatrix.NoDataText(e.Name, st.Empty, st.Matrices)})
		default:
			out = append(out, cli.Warning{Kind: imatrix.KindAllZero, Tensor: e.Name, Message: "no data: every value is zero"})
		}
	}
	return out
}
