//go:build !linux

package gguf

// renameNoReplace renames old to new unless new exists (an error wrapping
// os.ErrExist); without renameat2, through a hard link (linkNoReplace).
func renameNoReplace(old, new string) error { return linkNoReplace(old, new) }
