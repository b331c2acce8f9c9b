//go:build linux && !amd64 && !arm64

package gguf

// sysRenameat2 is 0 where this package does not know renameat2's number:
// renameNoReplace takes the link-based way.
const sysRenameat2 = 0
