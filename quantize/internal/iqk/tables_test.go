package iqk

import (
	"testing"

	"github.com/gquant/gquant/internal/tables"
)

// TestIQ2KLGrid checks that the pair grid built from iq2klIndex is the one
// the dequantizer uses, that every grid point appears once in the index, and
// that every neighbour list names grid points.
func TestIQ2KLGrid(t *testing.T) {
	seen := map[int8]bool{}
	for j, i := range iq2klIndex {
		if seen[i] {
			t.Errorf("iq2klIndex[%d] = %d appears twice", j, i)
		}
		seen[i] = true
		if i < -32 || i > 31 {
			t.Errorf("iq2klIndex[%d] = %d out of range", j, i)
		}
	}
	for i, p := range tables.IQ2KLValues {
		want := [2]float32{float32(int8(p)), float32(int8(p >> 8))}
		if iq2klGrid[i] != want {
			t.Errorf("grid point %d = %v, tables.IQ2KLValues has %v", i, iq2klGrid[i], want)
		}
	}
	for n, list := range iq2klNeighbours {
		for _, p := range list {
			if p > 31 {
				t.Errorf("neighbour list %d names point %d", n, p)
			}
		}
	}
}

// TestScrambleIQ4KSS checks the closed form against the reference's
// definition of its scramble table: for each 15-bit i, the 15-bit j with
// j ^ (j<<1) equal to i with bit 15 set to make the parity even.
func TestScrambleIQ4KSS(t *testing.T) {
	for i := 0; i < 1<<15; i++ {
		v := uint16(i)
		if ones(i)%2 == 1 {
			v |= 1 << 15
		}
		j := scrambleIQ4KSS(v)
		if j >= 1<<15 || j^(j<<1) != v {
			t.Fatalf("scramble(%#04x) = %#04x: j^(j<<1) = %#04x", v, j, j^(j<<1))
		}
	}
}

func ones(v int) (n int) {
	for ; v != 0; v &= v - 1 {
		n++
	}
	return
}
