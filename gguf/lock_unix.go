//go:build unix

package gguf

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f for as long as it is open, so that
// other processes see the file is being written (lockedByOther).
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ENOTSUP || err == syscall.ENOSYS || err == syscall.EOPNOTSUPP {
			return nil // a file system without locks: the process id still tells
		}
		return err
	}
}

// lockedByOther reports whether another open file holds the lock of path.
func lockedByOther(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// processAlive reports whether a process with this id runs (as far as this
// process can see; a process of another user counts as running).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// renameOpen: on these systems an open file can be renamed, so the Writer
// renames before closing and its lock covers the whole write.
const renameOpen = true

// openNonBlock keeps an open of a named pipe from waiting for a writer.
const openNonBlock = syscall.O_NONBLOCK
