//go:build medium

package fit

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/planner"
)

// The medium-model tests need the 1.9 GB model: GQUANT_MEDIUM_MODEL names
// it, or it is generated (about 20 s) into the test's temporary folder.
//
//	go test -tags medium -run TestMedium -v ./fit            # timings, RSS
//	go test -tags medium -run TestMedium -update ./fit       # rewrite testdata/medium-measure.tsv

var update = flag.Bool("update", false, "rewrite "+tablePath)

func mediumModel(t *testing.T) (*gguf.Model, *imatrix.Matrix) {
	dir := mediumDir(t)
	path := os.Getenv("GQUANT_MEDIUM_MODEL")
	if path == "" {
		path = filepath.Join(t.TempDir(), "medium-bf16.gguf")
		cmd := exec.Command("python3", filepath.Join(dir, "mk_medium_model.py"), filepath.Join(dir, "ggml-vocab-llama-spm.gguf"), path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("generating the medium model: %v\n%s", err, out)
		}
	}
	in, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	im, err := imatrix.Open(filepath.Join(dir, "medium.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	return in, im
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's high-water resident set (VmHWM), 0 if unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

// TestMedium fits the medium model on two threads: the first fit (every
// measurement made) and a refit with other budgets from the cache. The
// limits are on CPU time, which other load on the machine does not
// inflate: first fit under 2 x 60 s of CPU (60 s on two threads), refit
// under 1 s; and the peak RSS under 512 MiB.
func TestMedium(t *testing.T) {
	in, im := mediumModel(t)
	cachePath := filepath.Join(t.TempDir(), "fit.cache")
	run := func(budget string) (*Result, time.Duration, time.Duration) {
		cache, err := LoadCache(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := planner.ParseBudgets(budget)
		if err != nil {
			t.Fatal(err)
		}
		start, cpu := time.Now(), cpuTime()
		res, err := Fit(in, Options{Imatrix: im, Budgets: bs, Measure: MeasureOptions{Threads: 2, Cache: cache}})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := cache.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cachePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return res, time.Since(start), cpuTime() - cpu
	}
	res, wall, cpu := run("CPU=600MB")
	t.Logf("first fit: %v wall, %v CPU; %d measurements, %d weights quantized; predicted KLD %.4g", wall.Round(time.Millisecond), cpu.Round(time.Millisecond), res.Measured.Measured, res.Measured.Weights, res.KLD)
	if cpu > 120*time.Second {
		t.Errorf("first fit took %v of CPU, want under 120 s (60 s on two threads)", cpu)
	}
	res, wall, cpu = run("CPU=500MB")
	t.Logf("refit: %v wall, %v CPU; %d measurements from the cache; predicted KLD %.4g", wall.Round(time.Millisecond), cpu.Round(time.Millisecond), res.Measured.Cached, res.KLD)
	if res.Measured.Measured != 0 {
		t.Errorf("refit measured %d samples, want all from the cache", res.Measured.Measured)
	}
	if cpu > time.Second {
		t.Errorf("refit took %v of CPU, want under 1 s", cpu)
	}
	rss := peakRSS()
	t.Logf("peak RSS %d MiB", rss>>20)
	if rss > 512<<20 {
		t.Errorf("peak RSS %d MiB, want under 512 MiB", rss>>20)
	}
	if *update {
		writeMediumTable(t, in, im, cachePath)
	}
}

// writeMediumTable measures every type the tests need (the default and
// mainline candidates, and every type the mixes of kld.tsv use) and writes
// the table.
func writeMediumTable(t *testing.T, in *gguf.Model, im *imatrix.Matrix, cachePath string) {
	m, err := describe(in)
	if err != nil {
		t.Fatal(err)
	}
	hasData, err := importanceFlags(in, im)
	if err != nil {
		t.Fatal(err)
	}
	device := make([]string, len(in.Tensors))
	for i := range device {
		device[i] = "CPU"
	}
	types := append(append([]formats.Type(nil), DefaultTypes()...), MainlineTypes()...)
	ts, _, err := candidates(m, hasData, nil, types, device, DefaultGains())
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]formats.Type, len(ts))
	for i := range ts {
		if !ts[i].Quantized {
			continue
		}
		for _, c := range ts[i].Cands {
			if mt := measureType(c.Type); !exact(ts[i].Source, c.Type) && !slicesContains(want[i], mt) {
				want[i] = append(want[i], mt)
			}
		}
	}
	rows, err := LoadKLD(filepath.Join(mediumDir(t), "kld.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	empty := make(errorTable, len(ts))
	for _, row := range rows {
		_, need, err := mixTerms(m, true, row, empty)
		if err != nil {
			t.Fatal(err)
		}
		for i, nt := range need {
			for _, ty := range nt {
				if !slicesContains(want[i], ty) {
					want[i] = append(want[i], ty)
				}
			}
		}
	}
	var reqs []Request
	for i, w := range want {
		if len(w) > 0 {
			reqs = append(reqs, Request{Tensor: i, Types: w})
		}
	}
	cache, err := LoadCache(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := Measure(in, im, reqs, MeasureOptions{Cache: cache}, true)
	if err != nil {
		t.Fatal(err)
	}
	tb := &table{m: m, hasData: hasData, errs: make(errorTable, len(ts)), ses: make(errorTable, len(ts))}
	for i := range ts {
		tb.errs[i], tb.ses[i] = map[formats.Type]float64{}, map[formats.Type]float64{}
		for ty, mm := range ms[i] {
			tb.errs[i][ty], tb.ses[i][ty] = mm.Err(), mm.SE()
		}
	}
	f, err := os.Create(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	comment := fmt.Sprintf("Relative errors (importance-weighted, sum v (w-q)^2 / sum v w^2) and their standard errors of every\n"+
		"tensor of the medium model (../shared/models/medium, with medium.imatrix.dat) in every type the fit tests use,\n"+
		"measured by fit.Measure (%s). Written by: go test -tags medium -run TestMedium -update ./fit", KernelVersion)
	if err := writeTable(f, tb, comment); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
