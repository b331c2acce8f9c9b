package iquant

import (
	"syscall"
	"time"
)

// threadCPUTime is the CPU time the calling OS thread has used (user +
// system), as in quantize's benchmarks.
func threadCPUTime() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
