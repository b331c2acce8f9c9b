package planner

import (
	"errors"
	"testing"
)

// FuzzParseBudgets: any input either parses to non-negative budgets or
// fails with ErrBadBudget; nothing panics.
func FuzzParseBudgets(f *testing.F) {
	for _, s := range []string{"CPU=240GiB,GPU=23.5GiB", "GPU=24G", "=", ",,", "a=1.5.5KB", "x=99999999999999999999TiB", "CPU= 1 kib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := ParseBudgets(s)
		if err != nil {
			if !errors.Is(err, ErrBadBudget) {
				t.Fatalf("%q: error %v does not wrap ErrBadBudget", s, err)
			}
			return
		}
		for _, b := range bs {
			if b.Bytes < 0 || b.Device == "" {
				t.Fatalf("%q: bad budget %+v", s, b)
			}
		}
	})
}

// FuzzPlacement: any --place value either adds rules that can be matched
// or fails with a *PlaceError.
func FuzzPlacement(f *testing.F) {
	for _, s := range []string{"exps=CPU,.*=GPU", `blk\.(?=1)=CUDA0`, "a=b=c", "=", "(=CPU", "x=CPU,x=GPU"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := &Placement{}
		if err := p.AddFlag(s); err != nil {
			var pe *PlaceError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v is not a *PlaceError", s, err)
			}
			return
		}
		_, _, _, _ = p.assign(placementNames, make([]int64, len(placementNames)))
	})
}
