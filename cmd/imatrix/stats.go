package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "stats",
		Summary: "chart importance per layer and per expert (terminal and SVG)",
		JSON:    true,
		Run:     runStats,
	})
}

func runStats(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stats", "stats FILE [--model MODEL.gguf] [--svg OUT.svg] [--json]",
		"Summarises importance per layer: the mean importance (average per-column mean) of\n"+
			"the attention, dense feed-forward, routed-expert and shared-expert tensors, and each\n"+
			"expert's importance relative to its layer's average expert (on a log scale centred\n"+
			"on 1.0x), as bars in the terminal and, with --svg, as a picture. Experts are\n"+
			"numbered from 0, as in the model.",
		stderr,
		cli.Example{About: "importance per layer and per expert, as a chart in the terminal",
			Line: "imatrix stats --model model-bf16.gguf imatrix.dat"},
		cli.Example{About: "as an SVG picture (log scale centred on 1.0x)",
			Line: "imatrix stats --model model-bf16.gguf --svg imatrix.svg imatrix.dat"},
		cli.Example{About: "the numbers for a script",
			Line: "imatrix stats --json imatrix.dat"},
	)
	model := fs.String("model", "", "model `GGUF` whose tensor shapes give each entry's matrix count")
	svgOut := fs.String("svg", "", "also write the chart as an SVG picture to `FILE`")
	force := fs.Bool("force", false, "replace the --svg file if it exists (never an input, never a read-only file)")
	asJSON := fs.Bool("json", false, "print the numbers as one JSON document instead of the chart (schema gquant.imatrix-stats/1)")
	if status, done := parseFlags(fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 1 {
		return badArgs(fs, stderr, "want one FILE, got %d argument(s)", fs.NArg())
	}
	return finish("stats", stats(fs.Arg(0), *model, *svgOut, *force, *asJSON, stdout, stderr), stderr)
}

// statsReport is stats' JSON output. Layers are in the chart's order,
// blk.N by N and the entries outside the blocks last (layer null).
type statsReport struct {
	Schema      string          `json:"schema"`
	Path        string          `json:"path"`
	Format      imatrix.Format  `json:"format"`
	Entries     int             `json:"entries"`
	Chunks      int             `json:"chunks"`
	Datasets    []string        `json:"datasets"`
	Experts     int             `json:"experts,omitempty"`
	ExpertsFrom string          `json:"experts_from,omitempty"`
	Groups      []imatrix.Group `json:"groups"`
	Layers      []layerReport   `json:"layers"`
	// ExpertRange is the smallest and largest relative importance of an
	// expert with data (absent without experts).
	ExpertRange *[2]float64   `json:"expert_range,omitempty"`
	SVG         string        `json:"svg,omitempty"` // the --svg file written
	Warnings    []cli.Warning `json:"warnings"`
}

type layerReport struct {
	Layer *int `json:"layer"` // N of blk.N; null for the other entries
	// Mean is the mean importance of each group the layer has.
	Mean map[imatrix.Group]float64 `json:"mean"`
	// Experts is each expert's importance relative to the layer's average
	// expert (1 = average), by expert number from 0; NoData lists the
	// experts without data (their Experts value is 0).
	Experts []float64 `json:"experts,omitempty"`
	NoData  []int     `json:"no_data,omitempty"`
}

func newStatsReport(path string, m *imatrix.Matrix, l *imatrix.Layout, layers []imatrix.LayerSummary) statsReport {
	rep := statsReport{Schema: cli.Schema(1, "imatrix", "stats"), Path: path, Format: m.Format, Entries: m.Len(),
		Chunks: m.Chunks, Datasets: append([]string{}, m.Datasets...), Experts: l.Experts, ExpertsFrom: l.Inference,
		Groups: append([]imatrix.Group{}, groupsPresent(layers)...), Layers: []layerReport{},
		Warnings: cli.Warnings(layoutWarnings(m, l))}
	for _, s := range layers {
		lr := layerReport{Mean: map[imatrix.Group]float64{}, Experts: s.Experts, NoData: s.Empty}
		if s.Layer >= 0 {
			lr.Layer = &s.Layer
		}
		for g, v := range s.Mean {
			if !math.IsNaN(v) {
				lr.Mean[g] = v
			}
		}
		rep.Layers = append(rep.Layers, lr)
	}
	if lo, hi := expertRange(layers); hi > 0 {
		rep.ExpertRange = &[2]float64{lo, hi}
	}
	return rep
}

func stats(path, modelPath, svgOut string, force, asJSON bool, stdout, stderr io.Writer) error {
	var files *cli.Files
	if svgOut != "" {
		var err error
		if files, err = checkOutput(svgOut, force, stderr, path, modelPath); err != nil {
			return err
		}
	}
	m, err := imatrix.Open(path)
	if err != nil {
		return err
	}
	ne2, err := modelShapes(modelPath)
	if err != nil {
		return err
	}
	l := imatrix.NewLayout(m, ne2)
	layers := imatrix.Summarize(m, l)
	if asJSON {
		rep := newStatsReport(path, m, l, layers)
		if svgOut != "" {
			if err := writeGuarded(files, "imatrix stats", stderr, func() error { return cli.WriteFile(svgOut, []byte(renderSVG(path, m, layers)), force) }); err != nil {
				return err
			}
			rep.SVG = svgOut
		}
		return cli.WriteJSON(stdout, rep)
	}
	fmt.Fprintln(stdout, describe(path, m))
	if l.Inference != "" {
		fmt.Fprintf(stdout, "experts: %s\n", l.Inference)
	}
	fmt.Fprintln(stdout)
	writeChart(stdout, layers)
	if svgOut != "" {
		svg := renderSVG(path, m, layers)
		if err := writeGuarded(files, "imatrix stats", stderr, func() error { return cli.WriteFile(svgOut, []byte(svg), force) }); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", svgOut)
	}
	return nil
}

// groupsPresent lists the groups that occur in any layer.
func groupsPresent(layers []imatrix.LayerSummary) []imatrix.Group {
	var out []imatrix.Group
	for _, g := range imatrix.Groups() {
		for _, s := range layers {
			if !math.IsNaN(s.Mean[g]) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// groupMax is the largest mean of each group over all layers.
func groupMax(layers []imatrix.LayerSummary) map[imatrix.Group]float64 {
	out := map[imatrix.Group]float64{}
	for _, s := range layers {
		for g, v := range s.Mean {
			if !math.IsNaN(v) {
				out[g] = math.Max(out[g], v)
			}
		}
	}
	return out
}

// expertRange is the smallest and largest relative importance of the
// experts with data, over all layers (0, 0 without experts).
func expertRange(layers []imatrix.LayerSummary) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range layers {
		empty := map[int]bool{}
		for _, j := range s.Empty {
			empty[j] = true
		}
		for j, v := range s.Experts {
			if !empty[j] {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 0
	}
	return lo, hi
}

func layerName(k int) string {
	if k < 0 {
		return "other"
	}
	return fmt.Sprint(k)
}

const barWidth = 12 // characters of a full terminal bar

var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws v/top as a bar of barWidth characters with eighth-block ends.
func bar(v, top float64) string {
	if math.IsNaN(v) || top <= 0 {
		return strings.Repeat(" ", barWidth)
	}
	n := int(math.Round(v / top * barWidth * 8))
	s := strings.Repeat("█", n/8) + eighths[n%8]
	return s + strings.Repeat(" ", barWidth-len([]rune(s)))
}

var levels = []rune(" ▁▂▃▄▅▆▇█")

// writeChart prints the per-layer bars and the per-expert strips.
func writeChart(w io.Writer, layers []imatrix.LayerSummary) {
	groups := groupsPresent(layers)
	tops := groupMax(layers)
	fmt.Fprintln(w, "mean importance per layer (bars scaled to each column's largest value)")
	fmt.Fprintf(w, "%6s", "layer")
	for _, g := range groups {
		fmt.Fprintf(w, "  %-*s", barWidth+9, g)
	}
	fmt.Fprintln(w)
	for _, s := range layers {
		fmt.Fprintf(w, "%6s", layerName(s.Layer))
		for _, g := range groups {
			v := s.Mean[g]
			num := ""
			if !math.IsNaN(v) {
				num = fmt.Sprintf("%.3g", v)
			}
			fmt.Fprintf(w, "  %s %-8s", bar(v, tops[g]), num)
		}
		fmt.Fprintln(w)
	}
	if _, hi := expertRange(layers); hi == 0 {
		return
	}
	sc := newLogScale(layers)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "expert importance relative to the layer's average expert, log scale: one column per expert (from 0), ▁ = %s or less, ▄▅ = 1x, █ = %s or more, × = no data\n",
		factorText(math.Exp(-sc.R)), factorText(math.Exp(sc.R)))
	for _, s := range layers {
		if s.Experts == nil {
			continue
		}
		empty := map[int]bool{}
		for _, j := range s.Empty {
			empty[j] = true
		}
		var b strings.Builder
		for j, v := range s.Experts {
			if j > 0 && j%64 == 0 {
				b.WriteString("\n" + strings.Repeat(" ", 8))
			}
			switch {
			case empty[j]:
				b.WriteRune('×')
			default:
				b.WriteRune(levels[1+min(len(levels)-2, int(sc.pos(v)*float64(len(levels)-1)))])
			}
		}
		fmt.Fprintf(w, "%6s  %s  %s\n", layerName(s.Layer), b.String(), topExperts(s, 3))
	}
}

// topExperts names the n most important experts of a layer and those
// without data.
func topExperts(s imatrix.LayerSummary, n int) string {
	idx := make([]int, len(s.Experts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.Experts[idx[a]] > s.Experts[idx[b]] })
	var parts []string
	for _, j := range idx[:min(n, len(idx))] {
		parts = append(parts, fmt.Sprintf("%d (%.2fx)", j, s.Experts[j]))
	}
	out := "top " + strings.Join(parts, ", ")
	if len(s.Empty) > 0 {
		out += fmt.Sprintf("; no data: %s", strings.Trim(fmt.Sprint(s.Empty), "[]"))
	}
	return out
}
