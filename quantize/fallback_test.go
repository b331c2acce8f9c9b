package quantize_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// TestQuantizeRowsReportFallback quantizes to iq2_xxs three rows of which
// rows 0 and 2 hold a block whose only non-zero value has importance 0, where
// the reference aborts: the call succeeds, its Report names rows 0 and 2,
// QuantizeRowsInto writes the same bytes without a report, and a call
// without such rows reports nothing.
func TestQuantizeRowsReportFallback(t *testing.T) {
	const cols = 256
	imatrix := make([]float32, cols)
	src := make([]float32, 3*cols)
	for i := range imatrix {
		imatrix[i] = 1 + float32(i%7)/8
	}
	imatrix[40] = 0
	for r := 0; r < 3; r++ {
		for i := 0; i < cols; i++ {
			src[r*cols+i] = float32((i*37+r*11)%29-14) / 700
		}
	}
	for _, r := range []int{0, 2} {
		clear(src[r*cols+32 : r*cols+64])
		src[r*cols+40] = 0.03
	}
	rs, _ := formats.IQ2_XXS.RowSize(cols)
	got := make([]byte, 3*int(rs))
	rep, err := quantize.QuantizeRowsReport(got, formats.IQ2_XXS, 3, cols, src, imatrix)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fallback == nil || rep.Fallback.Type != formats.IQ2_XXS || len(rep.Fallback.Rows) != 2 || rep.Fallback.Rows[0] != 0 || rep.Fallback.Rows[1] != 2 {
		t.Fatalf("report %+v, want a fallback for rows 0 and 2", rep.Fallback)
	}
	if s := rep.Fallback.String(); !strings.HasPrefix(s, "iq2_xxs rows 0, 2: ") || !strings.Contains(s, "uniform importance") {
		t.Errorf("String() = %q", s)
	}
	plain := make([]byte, len(got))
	if err := quantize.QuantizeRowsInto(plain, formats.IQ2_XXS, 3, cols, src, imatrix); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, got) {
		t.Error("QuantizeRowsInto wrote other bytes than QuantizeRowsReport")
	}
	rep, err = quantize.QuantizeRowsReport(got[int(rs):2*int(rs)], formats.IQ2_XXS, 1, cols, src[cols:2*cols], imatrix)
	if err != nil || rep.Fallback != nil {
		t.Errorf("row 1 alone: report %+v, error %v; want neither", rep.Fallback, err)
	}
}

func TestFallbackString(t *testing.T) {
	f := &quantize.Fallback{Type: formats.IQ1_S, Rows: []int64{4}, Reason: "why"}
	if got, want := f.String(), "iq1_s row 4: why"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	f.Rows = []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if got, want := f.String(), "iq1_s rows 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more: why"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
