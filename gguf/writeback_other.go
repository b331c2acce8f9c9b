//go:build !linux

package gguf

import "os"

// startWriteback does nothing where there is no sync_file_range: the
// fsyncs alone make the write durable.
func startWriteback(f *os.File) {}
