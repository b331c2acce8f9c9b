package formats

import (
	"syscall"
	"time"
)

// threadCPUTime is the CPU time the calling OS thread has used (user +
// system). Benchmarks lock themselves to a thread and report MB/s against it,
// which stays meaningful on a loaded machine where wall time does not.
func threadCPUTime() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
