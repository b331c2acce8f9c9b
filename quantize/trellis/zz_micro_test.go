package trellis

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestZZMicro(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	books := []struct {
		name string
		cb   *codebook
		div  float32
	}{{"iq1", iq1ktBook(), 100}, {"iq2", iq2ktBook(), 100}, {"iq3", iq3ktBook(), 100}, {"iq4", iq4ktBook(), 110}}
	for _, b := range books {
		r := rand.New(rand.NewPCG(3, 4))
		total := 0.0
		var idx [8]int32
		for blk := 0; blk < 24; blk++ {
			xb, w := make([]float32, 32), make([]float32, 32)
			var amax float32
			for i := range xb {
				xb[i] = float32(0.02 * r.NormFloat64())
				if b.cb.abs && xb[i] < 0 {
					xb[i] = -xb[i]
				}
				amax = max(amax, abs32(xb[i]))
				w[i] = float32(r.ExpFloat64())
			}
			d := amax / b.div
			reps := 1
			if b.cb.group == 4 {
				reps = 20
			}
			best := 1e18
			for s := 0; s < 150; s++ {
				t0 := time.Now()
				for k := 0; k < reps; k++ {
					b.cb.findBestMatch(d, xb, w, idx[:])
				}
				best = min(best, float64(time.Since(t0).Nanoseconds())/float64(reps))
			}
			total += best
		}
		fmt.Printf("%s %.0f ns/block\n", b.name, total/24)
	}
}
