//go:build !linux

package gguf

import "os"

// writeData writes all of p to f at its offset (see write_linux.go).
func writeData(f *os.File, p []byte) (int, error) { return f.Write(p) }
