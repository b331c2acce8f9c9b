package benchcpu

import (
	"syscall"
	"time"
)

// Thread is the CPU time (user and system) the calling OS thread has used;
// the caller locks itself to its thread (runtime.LockOSThread).
func Thread() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
