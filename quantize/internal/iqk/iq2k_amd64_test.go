//go:build amd64 && !purego

package iqk

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
)

// TestSplitSearchPruningPortable runs the pruning check with the assembly
// search switched off, so both paths are checked against the full search
// on this machine (TestSplitSearchPruning covers the default one).
func TestSplitSearchPruningPortable(t *testing.T) {
	saved := useSplitSearchAVX2
	useSplitSearchAVX2 = false
	defer func() { useSplitSearchAVX2 = saved }()
	TestSplitSearchPruning(t)
}

// TestSplitTabLayout checks the field offsets that iq2k_amd64.s hard-codes
// (#define K_field / T_field offset) against splitConsts and splitTab.
func TestSplitTabLayout(t *testing.T) {
	src, err := os.ReadFile("iq2k_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{"K": reflect.TypeFor[splitConsts](), "T": reflect.TypeFor[splitTab]()}
	defs := regexp.MustCompile(`(?m)^#define ([KT])_(\w+) (\d+)$`).FindAllStringSubmatch(string(src), -1)
	if len(defs) < 30 {
		t.Fatalf("found only %d offset definitions in iq2k_amd64.s", len(defs))
	}
	for _, d := range defs {
		f, ok := types[d[1]].FieldByName(d[2])
		if !ok {
			t.Errorf("%s_%s: %v has no field %s", d[1], d[2], types[d[1]], d[2])
			continue
		}
		if off, _ := strconv.Atoi(d[3]); uintptr(off) != f.Offset {
			t.Errorf("%s_%s = %d, but %v.%s is at offset %d", d[1], d[2], off, types[d[1]], d[2], f.Offset)
		}
	}
}
