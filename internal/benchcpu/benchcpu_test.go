package benchcpu

import (
	"runtime"
	"testing"
)

// Thread's time grows with work done on the thread (Linux).
func TestThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := Thread()
	if !ok {
		t.Skip("no thread CPU time here")
	}
	x := 1.0
	for i := 0; i < 50_000_000; i++ {
		x = x*1.0000001 + 1e-9
	}
	end, _ := Thread()
	if end <= start || x == 0 {
		t.Fatalf("thread CPU time %v -> %v after work", start, end)
	}
}

func BenchmarkLoop(b *testing.B) {
	buf := make([]byte, 1<<16)
	Loop(b, len(buf), func() error { clear(buf); return nil })
}
