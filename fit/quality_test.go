package fit

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gquant/gquant/planner"
)

// mediumRows reads kld.tsv and the measurement table.
func mediumRows(t *testing.T) ([]KLDRow, *table) {
	t.Helper()
	rows, err := LoadKLD(filepath.Join(mediumDir(t), "kld.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	return rows, readTable(t, tablePath)
}

// TestDefaultGainsAreCalibrated refits the gains to kld.tsv from the
// measurements kept in testdata and checks DefaultGains() are that fit (to
// the three digits they are written with).
func TestDefaultGainsAreCalibrated(t *testing.T) {
	rows, tb := mediumRows(t)
	cal, err := calibrate(tb.m, true, rows, tb.errs, DefaultGains())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log-RMS error %.3f, %d of %d pairs discordant", cal.RMSLog, cal.Discordant, cal.Pairs)
	got, want := cal.Gains, DefaultGains()
	check := func(name string, g, w float64) {
		if math.Abs(g-w) > 0.01*math.Abs(w) {
			t.Errorf("%s: calibration gives %.4g, DefaultGains() has %.4g", name, g, w)
		}
	}
	for c := Class(0); c < numClasses; c++ {
		check(c.String(), got.Class[c], want.Class[c])
	}
	check("first", got.First, want.First)
	check("last", got.Last, want.Last)
	check("floor", got.Floor, want.Floor)
	check("floor_k", got.FloorK, want.FloorK)
	check("saturation", got.Saturation, want.Saturation)
}

// TestPredictedLossRanksKLD checks the default gains' predictions order the
// quants of kld.tsv exactly as their measured divergences do, and come
// within 10 % of each on the log scale.
func TestPredictedLossRanksKLD(t *testing.T) {
	rows, tb := mediumRows(t)
	g := DefaultGains()
	var fits []RowFit
	for _, row := range rows {
		terms, need, err := mixTerms(tb.m, true, row, tb.errs)
		if err != nil {
			t.Fatal(err)
		}
		if len(need) > 0 {
			t.Fatalf("%s: %d tensors without measurements in %s", row.Mix, len(need), tablePath)
		}
		fits = append(fits, RowFit{KLDRow: row, Predicted: g.KLD(predict(terms, &g, tb.m.params.NLayer))})
	}
	sortRowsByKLD(fits)
	for _, f := range fits {
		ratio := f.Predicted / f.KLD
		t.Logf("%-28s kld %.5f predicted %.5f (%.3f)", f.Mix, f.KLD, f.Predicted, ratio)
		if math.Abs(math.Log(ratio)) > 0.1 {
			t.Errorf("%s: predicted %.5f, measured %.5f: off by more than 10 %%", f.Mix, f.Predicted, f.KLD)
		}
	}
	disc, _, pairs := rankAgreement(fits)
	if disc != 0 {
		t.Errorf("%d of %d pairs ordered otherwise than measured", disc, pairs)
	}
}

// TestFittedBeatsHandRecipes fits the medium model at the exact tensor
// bytes of each hand-written recipe of kld.tsv (the bytes the planner
// counts for it) and checks the fitted recipe predicts a lower loss, with
// the budget used to at least 99 %.
func TestFittedBeatsHandRecipes(t *testing.T) {
	rows, tb := mediumRows(t)
	g := DefaultGains()
	n := 0
	for _, row := range rows {
		if !strings.HasPrefix(row.Mix, "hand:") {
			continue
		}
		n++
		plan, err := tb.m.selectAll(row.FileType, row.RuleSet, true)
		if err != nil {
			t.Fatal(err)
		}
		var bytes int64
		for _, c := range plan.Choices {
			b, err := c.Type.TensorSize(c.Shape)
			if err != nil {
				t.Fatal(err)
			}
			bytes += b
		}
		terms, _, err := mixTerms(tb.m, true, row, tb.errs)
		if err != nil {
			t.Fatal(err)
		}
		handLoss := predict(terms, &g, tb.m.params.NLayer)

		ts := tableTensors(t, tb, DefaultTypes(), g, "CPU")
		budget := planner.Budget{Device: "CPU", Bytes: bytes, Text: "hand"}
		res := &Result{}
		if _, err := optimize(ts, []string{"CPU"}, map[string]*planner.Budget{"CPU": &budget}, Options{}, g, res); err != nil {
			t.Fatal(err)
		}
		d := res.Devices[0]
		t.Logf("%s at %d bytes: hand predicts %.5f (measured %.5f), fitted %.5f, %.3f %% of the budget used",
			row.Mix, bytes, g.KLD(handLoss), row.KLD, res.KLD, 100*d.Use)
		if d.Bytes > bytes {
			t.Errorf("%s: fitted %d bytes, over the hand recipe's %d", row.Mix, d.Bytes, bytes)
		}
		if d.Use < 0.99 {
			t.Errorf("%s: fitted recipe uses %.2f %% of the budget, want at least 99 %%", row.Mix, 100*d.Use)
		}
		if res.Loss > handLoss {
			t.Errorf("%s: fitted recipe predicts loss %.5g, above the hand recipe's %.5g", row.Mix, res.Loss, handLoss)
		}
	}
	if n == 0 {
		t.Fatal("kld.tsv has no hand: rows")
	}
}

// sortRowsByKLD orders calibration rows by measured divergence.
func sortRowsByKLD(rows []RowFit) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].KLD < rows[j].KLD })
}
