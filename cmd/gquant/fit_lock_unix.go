//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive lock (flock) on the directory dir, waiting
// for another holder to release it, and returns the release. A lock that
// cannot be taken (a file system without flock) is no lock: the release
// does nothing.
func lockDir(dir string) (release func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		d.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}
}
