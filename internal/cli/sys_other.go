//go:build !linux

package cli

// Elsewhere the free space and access checks are left to the write itself:
// a full disk or a read-only directory still fails the run, only later, and
// the temporary file is still removed.

func freeSpace(string) (int64, bool)     { return 0, false }
func fileSystemID(string) (uint64, bool) { return 0, false }
func writable(string) error              { return nil }
