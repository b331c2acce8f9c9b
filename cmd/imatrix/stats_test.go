package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gquant/gquant/imatrix"
)

// kimiScale is an importance matrix of Kimi-K2's layout (61 layers, the
// first dense, then 384 routed experts and a shared expert per layer) with
// narrow tensors (64 input columns, 16 for the experts' down projections)
// so that it is small: per-expert importance spreads log-normally, wider
// in deeper layers, a few experts per layer are hot, and some never
// received data (two in layer 3, one in every seventh layer).
func kimiScale() *imatrix.Matrix {
	const (
		layers  = 61
		experts = 384
		embd    = 64
		expFF   = 16
	)
	rng := rand.New(rand.NewPCG(17, 61))
	m := &imatrix.Matrix{Chunks: 200, Datasets: []string{"kimi-scale synthetic"}}
	add := func(name string, cols int, scale float64, rel []float64) {
		n := 1
		if rel != nil {
			n = len(rel)
		}
		sums := make([]float32, cols*n)
		for j := 0; j < n; j++ {
			r := 1.0
			if rel != nil {
				r = rel[j]
			}
			for c := 0; c < cols; c++ {
				sums[j*cols+c] = float32(scale * r * (0.5 + rng.Float64()) * 100)
			}
		}
		m.Entries = append(m.Entries, imatrix.Entry{Name: name, Sums: sums, Counts: []float64{100}})
	}
	for l := 0; l < layers; l++ {
		depth := float64(l) / layers
		p := fmt.Sprintf("blk.%d.", l)
		for _, t := range []string{"attn_q_a", "attn_kv_a_mqa", "attn_q_b", "attn_kv_b"} {
			add(p+t+".weight", embd, 0.4+depth, nil)
		}
		add(p+"attn_output.weight", embd, 0.2+0.5*depth, nil)
		if l == 0 {
			for _, t := range []string{"ffn_gate", "ffn_up"} {
				add(p+t+".weight", embd, 0.8, nil)
			}
			add(p+"ffn_down.weight", embd, 0.3, nil)
			continue
		}
		rel := make([]float64, experts)
		for j := range rel {
			rel[j] = math.Exp(rng.NormFloat64() * (0.15 + 0.6*depth))
		}
		for range 3 {
			rel[rng.IntN(experts)] *= 6
		}
		if l == 3 {
			rel[17], rel[250] = 0, 0
		}
		if l%7 == 0 {
			rel[rng.IntN(experts)] = 0
		}
		add(p+"ffn_gate_inp.weight", embd, 0.6+depth, nil)
		for _, t := range []string{"ffn_gate_exps", "ffn_up_exps"} {
			add(p+t+".weight", embd, 0.6+depth, rel)
		}
		add(p+"ffn_down_exps.weight", expFF, 0.05+0.1*depth, rel)
		for _, t := range []string{"ffn_gate_shexp", "ffn_up_shexp"} {
			add(p+t+".weight", embd, 0.6+depth, nil)
		}
		add(p+"ffn_down_shexp.weight", expFF, 0.1+0.3*depth, nil)
	}
	add("output.weight", embd, 3, nil)
	return m
}

// svgFacts parses an SVG (failing on XML that is not well-formed) and
// returns its text elements' contents and how many shapes have each fill.
func svgFacts(t *testing.T, data []byte) (texts map[string]int, fills map[string]int) {
	t.Helper()
	texts, fills = map[string]int{}, map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts, fills
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			inText = el.Name.Local == "text"
			for _, a := range el.Attr {
				if a.Name.Local == "fill" {
					fills[a.Value]++
				}
			}
		case xml.CharData:
			if inText {
				texts[strings.TrimSpace(string(el))]++
			}
		case xml.EndElement:
			inText = false
		}
	}
}

// At Kimi-K2's scale the chart labels every tenth layer and expert, marks
// each expert without data, and its colours are a log scale centred on 1x.
func TestStatsKimiScale(t *testing.T) {
	dir := t.TempDir()
	m := kimiScale()
	dat := writeDat(t, dir, "kimi.dat", m)
	svgPath := filepath.Join(dir, "kimi.svg")
	status, out, errOut := runCmd(t, "stats", "--json", "--svg", svgPath, dat)
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var rep statsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	jsonDoc(t, "gquant.imatrix-stats/1", out)
	if rep.Experts != 384 || len(rep.Layers) != 62 || rep.SVG != svgPath || rep.ExpertRange == nil {
		t.Fatalf("experts %d, %d layers, svg %q, range %v", rep.Experts, len(rep.Layers), rep.SVG, rep.ExpertRange)
	}
	noData := 0
	for i, l := range rep.Layers {
		switch {
		case i == 61:
			if l.Layer != nil || l.Mean[imatrix.GroupOther] == 0 {
				t.Errorf("last layer: %+v, want the other entries (layer null)", l)
			}
		case l.Layer == nil || *l.Layer != i:
			t.Errorf("layer %d: %v", i, l.Layer)
		case i == 0 && l.Experts != nil:
			t.Errorf("the dense layer has experts")
		case i > 0 && len(l.Experts) != 384:
			t.Errorf("layer %d: %d experts", i, len(l.Experts))
		}
		if i == 3 && fmt.Sprint(l.NoData) != "[17 250]" {
			t.Errorf("layer 3: no data %v, want [17 250]", l.NoData)
		}
		noData += len(l.NoData)
	}
	data, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	texts, fills := svgFacts(t, data)
	// Layer labels 0, 10, ... 60 on both panels, expert labels 0, 10, ...
	// 380, and nothing in between.
	for k := 0; k <= 380; k += 10 {
		want := 1
		if k <= 60 {
			want = 3
		}
		if k == 0 {
			want = 3 + 5 // and the zero of each bar column
		}
		if got := texts[fmt.Sprint(k)]; got != want {
			t.Errorf("label %d appears %d times, want %d", k, got, want)
		}
	}
	for _, k := range []int{1, 5, 9, 11, 55, 61, 383} {
		if texts[fmt.Sprint(k)] != 0 {
			t.Errorf("label %d: only every tenth layer and expert is labelled", k)
		}
	}
	if texts["other"] != 3 || texts["1x"] != 1 {
		t.Errorf("labels other %d, 1x %d", texts["other"], texts["1x"])
	}
	// One black cell per expert without data, and the legend's swatch.
	if fills[noDataColor] != noData+1 || noData != 2+8 {
		t.Errorf("%d no-data cells for %d experts without data", fills[noDataColor]-1, noData)
	}
}

// The colour scale is logarithmic and centred: 1x is the middle (white),
// 2x and 0.5x are equally far from it, and values beyond the percentile
// range saturate.
func TestLogScale(t *testing.T) {
	layers := []imatrix.LayerSummary{{Layer: 1, Experts: []float64{0.25, 0.5, 1, 1, 2, 4, 0}, Empty: []int{6}}}
	sc := newLogScale(layers)
	if math.Abs(sc.R-math.Log(4)) > 1e-12 {
		t.Errorf("R = %v, want log 4", sc.R)
	}
	if heatColor(sc.pos(1)) != "#f7f7f7" || sc.pos(1) != 0.5 {
		t.Errorf("1x at %v (%s), want the white middle", sc.pos(1), heatColor(sc.pos(1)))
	}
	if d := sc.pos(2) - 0.5 - (0.5 - sc.pos(0.5)); math.Abs(d) > 1e-12 || sc.pos(4) != 1 || sc.pos(0.25) != 0 || sc.pos(100) != 1 || sc.pos(0) != 0 {
		t.Errorf("pos: 0.25x %v, 0.5x %v, 2x %v, 4x %v, 100x %v", sc.pos(0.25), sc.pos(0.5), sc.pos(2), sc.pos(4), sc.pos(100))
	}
	if got := fmt.Sprint(sc.ticks()); got != "[2 4]" {
		t.Errorf("ticks %s", got)
	}
	// Experts within 1 % of each other: the scale does not magnify noise.
	if sc := newLogScale([]imatrix.LayerSummary{{Layer: 1, Experts: []float64{0.999, 1.001}}}); sc.R != minLogRange {
		t.Errorf("narrow spread: R = %v", sc.R)
	}
}

// The medium model's real importance matrix (computed by the reference on
// text) renders: 16 experts each labelled, 6 layers, no expert without data.
func TestStatsMedium(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dat := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "models", "medium", "medium.imatrix.dat")
	if _, err := os.Stat(dat); err != nil {
		t.Skipf("medium model data not found: %v", err)
	}
	svgPath := filepath.Join(t.TempDir(), "medium.svg")
	out := mustRun(t, "stats", dat, "--svg", svgPath)
	if !strings.Contains(out, "log scale") || strings.Contains(out, "no data:") {
		t.Errorf("stats output:\n%s", out)
	}
	data, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	texts, fills := svgFacts(t, data)
	for k := 0; k < 16; k++ {
		if texts[fmt.Sprint(k)] == 0 {
			t.Errorf("expert %d not labelled", k)
		}
	}
	if fills[noDataColor] != 1 || !strings.Contains(string(data), "every expert has data") {
		t.Errorf("%d no-data fills", fills[noDataColor])
	}
}
