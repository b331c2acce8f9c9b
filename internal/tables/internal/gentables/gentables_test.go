package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUpToDate: iq_grids.go is what the generator makes of iq_tables.go's
// seeds, byte for byte (run `go generate ./internal/tables` after changing a seed).
func TestUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..")
	seeds, err := os.ReadFile(filepath.Join(dir, "iq_tables.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(seeds)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join(dir, "iq_grids.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Error("internal/tables/iq_grids.go is not what internal/tables/internal/gentables generates from iq_tables.go: run go generate ./internal/tables")
	}
}

// TestNLIndexMidpoints: the integers next to a midpoint are marked, both of
// them when it falls between two integers, one when it is an integer.
func TestNLIndexMidpoints(t *testing.T) {
	got, err := nlIndex([]int64{-3, 0, 4})
	if err != nil {
		t.Fatal(err)
	}
	// x: -3 -2 -1 0 1 2 3 4; midpoints -1.5 (between 0 and 1) and 2 (level 1 and 2).
	want := []int{0, 16, 16, 1, 1, 17, 2, 2}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
}
