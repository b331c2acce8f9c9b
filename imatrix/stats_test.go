package imatrix

import (
	"math"
	"strings"
	"testing"
)

func TestInferExperts(t *testing.T) {
	m, _ := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	n, how := InferExperts(m)
	if n != 8 || !strings.Contains(how, "256 columns") {
		t.Fatalf("InferExperts = %d, %q; want 8 experts of 256 columns", n, how)
	}
	l := NewLayout(m, nil)
	if l.Matrices["blk.1.ffn_down_exps.weight"] != 8 || l.Matrices["blk.0.ffn_down.weight"] != 1 || l.Source["blk.2.ffn_up_exps.weight"] != "inferred" {
		t.Errorf("layout %v", l.Matrices)
	}
	// The model's shapes win over inference.
	l = NewLayout(m, map[string]int{"blk.1.ffn_down_exps.weight": 4, "blk.1.attn_v_b.weight": 2})
	if l.Matrices["blk.1.ffn_down_exps.weight"] != 4 || l.Matrices["blk.1.attn_v_b.weight"] != 2 || l.Matrices["blk.2.ffn_down_exps.weight"] != 8 {
		t.Errorf("layout with shapes %v", l.Matrices)
	}
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    int
	}{
		{"no experts", []Entry{{Name: "blk.0.attn_q.weight", Sums: make([]float32, 4)}}, 0},
		{"no fitting size", []Entry{{Name: "blk.0.attn_q.weight", Sums: make([]float32, 3)}, {Name: "blk.0.ffn_up_exps.weight", Sums: make([]float32, 8)}}, 0},
		// 12 values: 3 x 4 (4 is the common size) beats 2 x 6.
		{"common size wins", []Entry{{Name: "a", Sums: make([]float32, 4)}, {Name: "b", Sums: make([]float32, 4)}, {Name: "c", Sums: make([]float32, 6)},
			{Name: "blk.0.ffn_up_exps.weight", Sums: make([]float32, 12)}}, 3},
	} {
		for i := range tc.entries {
			tc.entries[i].Counts = []float64{1}
		}
		if n, how := InferExperts(&Matrix{Entries: tc.entries}); n != tc.want {
			t.Errorf("%s: %d experts (%s), want %d", tc.name, n, how, tc.want)
		}
	}
}

func TestEntryStats(t *testing.T) {
	m, _ := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	e, _ := m.Lookup("blk.1.ffn_up_exps.weight")
	st := e.Stats(8)
	if st.Matrices != 8 || len(st.Empty) != 1 || st.Empty[0] != 5 || st.ZeroColumns != 256 || st.ZeroShare != 0.125 || st.Min != 0 {
		t.Fatalf("stats %+v", st)
	}
	full, _ := readGoldenDat(t, "tiny-ds2.full.imatrix.dat")
	e, _ = full.Lookup("blk.1.ffn_up_exps.weight")
	if st := e.Stats(8); len(st.Empty) != 0 || st.Min <= 0 {
		t.Fatalf("full file: empty %v min %v", st.Empty, st.Min)
	}
	// Per-matrix counts: a zero count is no data.
	g := Entry{Name: "x", Sums: []float32{1, 3, 0, 0}, Counts: []float64{1, 0}}
	st = g.Stats(0)
	if st.Matrices != 2 || st.Mean != 1 || st.Max != 3 || len(st.Empty) != 1 || st.MatrixMeans[0] != 2 {
		t.Fatalf("per-matrix stats %+v", st)
	}
}

func TestSummarize(t *testing.T) {
	m, _ := readGoldenDat(t, "tiny-ds2.imatrix.dat")
	layers := Summarize(m, NewLayout(m, nil))
	if len(layers) != 5 || layers[4].Layer != -1 || layers[0].Layer != 0 {
		t.Fatalf("%d layers", len(layers))
	}
	if !math.IsNaN(layers[0].Mean[GroupExperts]) || math.IsNaN(layers[0].Mean[GroupFFN]) || layers[0].Experts != nil {
		t.Errorf("layer 0 is dense: %+v", layers[0])
	}
	for _, l := range layers[1:4] {
		if len(l.Experts) != 8 || len(l.Empty) != 1 || l.Empty[0] != 5 || l.Experts[5] != 0 {
			t.Fatalf("layer %d: experts %v empty %v", l.Layer, l.Experts, l.Empty)
		}
		var sum float64
		for _, v := range l.Experts {
			sum += v
		}
		if math.Abs(sum/7-1) > 1e-9 { // the average of the experts with data is 1
			t.Errorf("layer %d: relative importance averages %v", l.Layer, sum/7)
		}
	}
}

func TestEntryGroup(t *testing.T) {
	for _, tc := range []struct {
		name  string
		layer int
		g     Group
	}{
		{"blk.3.attn_kv_b.weight", 3, GroupAttn},
		{"blk.12.ffn_down_exps.weight", 12, GroupExperts},
		{"blk.1.ffn_gate_up_exps.weight", 1, GroupExperts},
		{"blk.1.ffn_up_shexp.weight", 1, GroupShared},
		{"blk.0.ffn_up.weight", 0, GroupFFN},
		{"output.weight", -1, GroupOther},
		{"blk.x.ffn_up.weight", -1, GroupOther},
	} {
		if l, g := EntryGroup(tc.name); l != tc.layer || g != tc.g {
			t.Errorf("EntryGroup(%s) = %d %s, want %d %s", tc.name, l, g, tc.layer, tc.g)
		}
	}
}
