//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock (flock) on the directory dir, waiting
// for another holder to release it, and returns the release. Where another
// holds it, waiting is called first: the wait has no bound (a fit stopped
// with Ctrl-Z while it saves holds the lock until it goes on), and a run
// that has printed its results and then sits silent looks hung. A lock
// that cannot be taken (a file system without flock) is no lock: the
// release does nothing.
func lockDir(dir string, waiting func()) (release func()) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	err = flockRetry(d, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		waiting()
		err = flockRetry(d, syscall.LOCK_EX)
	}
	if err != nil {
		d.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}
}

// flockRetry is flock, taken again where a signal interrupted it: an
// interrupted wait is no reason to go on without the lock.
func flockRetry(d *os.File, how int) error {
	for {
		err := syscall.Flock(int(d.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
