package iquant

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedOrderMatchesStableSort checks sortedOrder (the insertion sort,
// the AVX2 and the AVX-512 rank sorts) against the library's stable sort,
// with many equal values and signed zeros.
func TestSortedOrderMatchesStableSort(t *testing.T) {
	defer setAsm(true)
	r := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 20000; iter++ {
		setAsmLevel(asmLevels[iter%len(asmLevels)])
		n := []int{16, 32, 40}[iter%3]
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if iter%2 == 1 {
				x[i] = float32(r.IntN(5) - 2)
				if x[i] == 0 && r.IntN(2) == 0 {
					x[i] = float32(math.Copysign(0, -1))
				}
			}
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
		got := sortedOrder(x, make([]int, n))
		if !slices.Equal(got, want) {
			t.Fatalf("x=%v: sortedOrder %v, stable sort %v", x, got, want)
		}
	}
}
