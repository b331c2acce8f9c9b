package quantize_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// stressBelowFull lists the cases of ../shared/golden/stress that do not yet
// match the reference byte for byte, keyed "set/type/variant", with the
// number of row groups (Interleave rows) that still differ, so that a
// regression fails. The goal is an empty table; issue 15 tracks what is left.
var stressBelowFull = map[string]int{}

// TestGoldenStress runs every case of ../shared/golden/stress/*/manifest.tsv
// as TestGoldenKernels runs kernels/: one QuantizeRows call over the whole
// input, compared byte for byte with the reference, row group by row group
// so that a failure names the rows (and their recipe, row % 16) that differ.
func TestGoldenStress(t *testing.T) {
	for _, set := range golden.StressSets(t) {
		input, imatrix := golden.Input(t, set)
		for _, c := range golden.Manifest(t, set) {
			name := strings.TrimPrefix(set, "stress/") + "/" + c.Name()
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				typ, err := formats.ParseType(c.Type)
				if err != nil {
					t.Fatal(err)
				}
				var weights []float32
				if c.Imatrix {
					weights = imatrix
				}
				got, err := quantize.QuantizeRows(typ, c.Rows, c.Cols, input, weights)
				if c.File == "abort" {
					// The reference stopped on this case; we must not. We
					// must report the rows it stops on (sparse ones,
					// recipe 10) and write the same bytes every time; the
					// rows it does quantize are compared with its bytes
					// in quantize/internal/iquant's TestStressAbortRows.
					if err != nil {
						t.Fatalf("the reference aborts here, but we must write an encoding: %v", err)
					}
					again := make([]byte, len(got))
					rep, err := quantize.QuantizeRowsReport(again, typ, c.Rows, c.Cols, input, weights)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(again, got) {
						t.Error("a second call wrote other bytes")
					}
					if rep.Fallback == nil {
						t.Fatal("no rows reported as written by a fallback")
					}
					for _, r := range rep.Fallback.Rows {
						if r%16 != 10 {
							t.Errorf("row %d (recipe %d) reported as written by a fallback", r, r%16)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := golden.ReadFile(t, set, c.File)
				bad, groups, diff := rowGroupDiff(typ, c.Cols, got, want)
				allowed := stressBelowFull[name]
				switch {
				case bad > allowed:
					t.Fatalf("%d of %d row groups differ, want %d; first rows of those groups (row:recipe): %s", bad, groups, allowed, diff)
				case bad < allowed:
					t.Errorf("%d of %d row groups differ, fewer than the %d in stressBelowFull: update the table", bad, groups, allowed)
				}
			})
		}
	}
}

// rowGroupDiff compares got with want one row group (Interleave rows) at a
// time; it returns the number of groups that differ, the number of groups,
// and the first rows of the differing groups with their recipe (row % 16).
func rowGroupDiff(typ formats.Type, cols int, got, want []byte) (bad, groups int, rows string) {
	if len(got) != len(want) {
		return 1, 1, fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	info, _ := typ.Info()
	rs, _ := typ.RowSize(int64(cols))
	group := int(rs) * info.Interleave
	var parts []string
	for off := 0; off < len(want); off += group {
		groups++
		if string(got[off:off+group]) != string(want[off:off+group]) {
			r := off / int(rs)
			parts = append(parts, fmt.Sprintf("%d:%d", r, r%16))
		}
	}
	return len(parts), groups, strings.Join(parts, " ")
}
