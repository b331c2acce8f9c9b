//go:build !linux

package benchcpu

import "time"

// Thread is not known here: benchmarks report wall time only.
func Thread() (time.Duration, bool) { return 0, false }
