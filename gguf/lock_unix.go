//go:build unix

package gguf

import (
	"bytes"
	"errors"
	"os"
	"strconv"
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
// process can see; a process of another user counts as running). A process
// that has exited but not yet been reaped by its parent (a zombie) still
// answers kill(pid, 0), and its temporary files would be taken for a write
// under way until the parent waits for it: where /proc tells (Linux), a
// zombie does not count.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return (err == nil || errors.Is(err, syscall.EPERM)) && !zombie(pid)
}

// zombie reports whether /proc says that process pid has exited and waits
// to be reaped (state Z, or X while it goes); false where /proc has no
// such file.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// renameOpen: on these systems an open file can be renamed, so the Writer
// renames before closing and its lock covers the whole write.
const renameOpen = true

// openNonBlock keeps an open of a named pipe from waiting for a writer.
const openNonBlock = syscall.O_NONBLOCK
