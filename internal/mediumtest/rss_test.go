//go:build medium

package mediumtest

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// Sixty-four workers on the medium model stay under 512 MiB of peak RSS:
// the bytes in flight have a budget (pipeline.Options.Memory) that does not
// grow with the threads. Q8_0, the fastest of the quantized types, keeps
// the run short (about 10 s on two cores); before the budget it peaked at
// 2.2 GB.
func TestMediumPeakRSSThreads64(t *testing.T) {
	dir := mediumDir(t)
	model := mediumModel(t, dir)
	in, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out := filepath.Join(t.TempDir(), "out-q8_0.gguf")
	ft, _, err := recipes.ParseFileType("Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	// What earlier tests left goes back to the system before the peak is
	// reset, so that the peak is this run's.
	debug.FreeOSMemory()
	resetPeakRSS()
	start := time.Now()
	plan, err := pipeline.Build(in, pipeline.Config{Selection: recipes.Options{FileType: ft}, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), in, plan.Outputs, pipeline.Options{Threads: 64, Inputs: []string{model}}); err != nil {
		t.Fatal(err)
	}
	rss := peakRSS()
	t.Logf("Q8_0 at 64 threads: %.1f s, peak RSS %d MiB", time.Since(start).Seconds(), rss>>20)
	if rss >= 512<<20 {
		t.Errorf("Q8_0 at 64 threads: peak RSS %d MiB, want under 512 MiB", rss>>20)
	}
}
