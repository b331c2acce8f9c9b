//go:build amd64 && !purego

package iqk

import "testing"

// TestSplitSearchPruningPortable runs the pruning check with the assembly
// pre-filter switched off, so both paths are checked against the full
// search on this machine (TestSplitSearchPruning covers the default one).
func TestSplitSearchPruningPortable(t *testing.T) {
	saved := useSplitScanAVX2
	useSplitScanAVX2 = false
	defer func() { useSplitScanAVX2 = saved }()
	TestSplitSearchPruning(t)
}
