package gguf

import (
	"os"
	"syscall"
	"unsafe"
)

// writeData writes all of p to f at its offset, as f.Write does, but as a
// raw system call, which the Go scheduler does not see.
//
// Writing tensor data into the page cache (or tmpfs) is work for the CPU,
// about a millisecond per piece, not a wait. Through f.Write the scheduler
// takes the goroutine's P away after 20 µs in the call and hands it to
// another thread; on a machine whose cores are all busy with workers,
// that keeps sysmon waking every 20 µs and threads trading Ps: on our
// two-core VM about half the runs of the medium model went that way (11,000
// context switches against 700), F16 to tmpfs taking 0.94-0.99 s instead of
// 0.70-0.73 s and BF16 0.74-0.86 s instead of 0.63-0.69 s. As a raw call
// the writer keeps its P while the kernel copies; a write that waits for
// the disk (the kernel throttling dirty pages) keeps it too, while the
// workers, which have theirs, go on until the memory budget fills.
func writeData(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Write(p)
	}
	done := 0
	var errno syscall.Errno
	cerr := rc.Control(func(fd uintptr) {
		for done < len(p) {
			chunk := p[done:]
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&chunk[0])), uintptr(len(chunk)))
			switch {
			case e == syscall.EINTR:
				continue
			case e != 0:
				errno = e
				return
			case n == 0:
				errno = syscall.EIO // a regular file never takes nothing without an error
				return
			}
			done += int(n)
		}
	})
	if cerr != nil {
		return done, &os.PathError{Op: "write", Path: f.Name(), Err: cerr}
	}
	if errno != 0 {
		return done, &os.PathError{Op: "write", Path: f.Name(), Err: errno}
	}
	return done, nil
}
