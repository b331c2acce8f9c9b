package gguf

import (
	"os"
	"syscall"
)

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writing the dirty
// pages of the range that are not being written already, without waiting.
const syncFileRangeWrite = 2

// startWriteback asks the kernel to start writing f's dirty pages to the
// disk now, and returns without waiting for them. The fsyncs that make a
// write durable then find most of it written: with only those, the disk
// idled while a tensor was computed and then took it all at once (on a
// two-core VM, a bf16 copy of 1.9 GB took 3.0-3.3 s durably against
// 1.5-1.7 s for cp and a sync). Errors are ignored: the fsync that
// follows reports any that matter.
func startWriteback(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, 0, 0, syncFileRangeWrite, 0, 0)
		})
	}
}
