//go:build amd64 && !purego

package trellis

import "testing"

// TestPruneLeftPack checks the list pass's table: for every mask, its set
// bits in increasing order, then zeros.
func TestPruneLeftPack(t *testing.T) {
	for m := range pruneLeftPack {
		var want [8]uint32
		n := 0
		for i := uint32(0); i < 8; i++ {
			if m&(1<<i) != 0 {
				want[n] = i
				n++
			}
		}
		if pruneLeftPack[m] != want {
			t.Fatalf("mask %08b: %v, want %v", m, pruneLeftPack[m], want)
		}
	}
}
