//go:build amd64 && !purego

package iqk

import "testing"

// TestSplitSearchPruningPortable runs the pruning check with the assembly
// search switched off, so both paths are checked against the full search
// on this machine (TestSplitSearchPruning covers the default one).
func TestSplitSearchPruningPortable(t *testing.T) {
	saved := useSplitSearchAVX2
	useSplitSearchAVX2 = false
	defer func() { useSplitSearchAVX2 = saved }()
	TestSplitSearchPruning(t)
}
