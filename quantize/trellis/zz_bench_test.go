package trellis

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gquant/gquant/formats"
)

func zzThreadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func TestZZSpeed(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const rows, cols = 2, 4096
	r := rand.New(rand.NewPCG(42, 4096))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(0.02 * r.NormFloat64())
	}
	imatrix := make([]float32, cols)
	for i := range imatrix {
		imatrix[i] = float32(r.ExpFloat64())
	}
	ks := Kernels()
	for _, typ := range []formats.Type{formats.IQ1_KT, formats.IQ2_KT, formats.IQ3_KT, formats.IQ4_KT} {
		k := ks[typ]
		rs, _ := typ.RowSize(cols)
		dst := make([]byte, rows*int(rs))
		k(dst, src, rows, cols, imatrix)
		best := [2]float64{1e18, 1e18}
		for rep := 0; rep < 31; rep++ {
			for v := 0; v < 2; v++ {
				useBlockSearch = v == 1
				t0 := zzThreadCPU()
				k(dst, src, rows, cols, imatrix)
				d := float64(zzThreadCPU()-t0) / 1e9
				best[v] = min(best[v], d)
			}
		}
		useBlockSearch = true
		mb := float64(rows*cols*2) / 1e6
		fmt.Printf("%s old %.3f new %.3f cpu-MB/s (x%.3f)\n", typ, mb/best[0], mb/best[1], best[0]/best[1])
	}
}
