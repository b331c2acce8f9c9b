package pipeline

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

var workcostBench = flag.String("workcost", "", "write workcost.tsv from this output of go test ./quantize -run '^$' -bench 'Quantize/' -count 5 (medians of cpu-MB/s)")

// The io and convert rows of workcost.tsv: what a run costs besides the
// kernels, in MB/s of one thread's CPU time (user and system), measured
// with whole runs of the medium model (../shared/models/medium, 1.94 GB
// bf16, 970 M weights) on the machine of the kernel speeds, two threads,
// input in the page cache; medians of five COPY runs and three Q8_0 runs,
// each with gquant quantize --force, timed by /usr/bin/time:
//   - io: COPY reads and writes 3.88 GB in 3.44 s of CPU (2.97 to 5.17):
//     1128 MB/s of bytes read or written, mostly the kernel's (write, fsync).
//   - convert: Q8_0 takes 4.18 s (4.07 to 4.47); the q8_0 kernel's 0.45 s
//     (4349 MB/s) and the io of 1.94 GB read and 1.03 GB written (2.63 s)
//     leave 1.10 s for the 1.94 GB of bf16 converted to float32, checked
//     and hashed: 1750 MB/s of bf16 input.
const (
	ioSpeed      = 1128
	convertSpeed = 1750
)

// The table covers every type quantize can write (with importance data
// where it takes any),
// the K-quants without it (they search differently), and parses.
func TestWorkCostTable(t *testing.T) {
	if *workcostBench != "" {
		writeWorkCosts(t, *workcostBench)
	}
	m, err := parseWorkCosts(workCostTSV)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range quantize.SupportedTypes() {
		// A type that takes no importance data has its row without it.
		info, _ := typ.Info()
		if _, ok := m.perKi[costKey{typ, !info.ImatrixFails}]; !ok {
			t.Errorf("workcost.tsv has no row for %s (with importance data: %v)", typ, !info.ImatrixFails)
		}
	}
	for _, typ := range []formats.Type{formats.Q2_K, formats.Q3_K, formats.Q4_K, formats.Q5_K, formats.Q6_K} {
		if _, ok := m.perKi[costKey{typ, false}]; !ok {
			t.Errorf("workcost.tsv has no row for %s without importance data", typ)
		}
	}
	// The estimates on which the parts depend, pinned: a change of the
	// table changes the parts of a job array, so it must be deliberate.
	q8 := Tensor{Name: "a", Shape: []int64{4096, 4096}, Type: formats.Q8_0, Convert: true, Imatrix: make([]float32, 4096)}
	if w := TensorWork(q8, 2*4096*4096); w <= 0 || w > time.Second {
		t.Errorf("q8_0 4096x4096: %v, want a fraction of a second", w)
	}
	if w := TensorWork(Tensor{Name: "n", Shape: []int64{4096}, Type: formats.F32}, 4*4096); w <= 0 {
		t.Errorf("copy of 16 KiB: %v, want more than nothing", w)
	}
	if m.machine == "" {
		t.Error("workcost.tsv names no machine")
	}
	const ok = "# machine: x\nio\t-\t1\nconvert\t-\t1\n"
	if _, err := parseWorkCosts(ok + "q8_0\t1\t1\n"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{ok + "q8_0\t1\n", ok + "q8_0\t1\t0\n", ok + "nope\t1\t1\n", ok + "q8_0\t2\t1\n", "# machine: x\nio\t-\t1\nq8_0\t1\t1\n", "io\t-\t1\nconvert\t-\t1\n", ok + "q8_0\t1\t1\nq8_0\t1\t2\n"} {
		if _, err := parseWorkCosts(bad); err == nil {
			t.Errorf("parseWorkCosts(%q) = nil error", bad)
		}
	}
}

// writeWorkCosts writes workcost.tsv from benchmark output: per type the
// median of its cpu-MB/s results.
func writeWorkCosts(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs := map[string][]float64{}
	var order []string
	cpu := "unknown"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "cpu: "); ok {
			cpu = strings.TrimSpace(c)
		}
		fs := strings.Fields(line)
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "BenchmarkQuantize/") {
			continue
		}
		name := strings.TrimPrefix(fs[0], "BenchmarkQuantize/")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		for i := 2; i+1 < len(fs); i += 2 {
			if fs[i+1] == "cpu-MB/s" {
				v, err := strconv.ParseFloat(fs[i], 64)
				if err != nil {
					t.Fatalf("%s: %v", fs[0], err)
				}
				if runs[name] == nil {
					order = append(order, name)
				}
				runs[name] = append(runs[name], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# gquant's quantization speed per type: the cost model of --only-shards K/N and gquant plan\n")
	fmt.Fprintf(&b, "# --shards (pipeline/workcost.go). cpu_MB_per_s is bf16 input bytes (2 per weight) per second of\n")
	fmt.Fprintf(&b, "# one thread's CPU time quantizing 64 rows x 4096 (BenchmarkQuantize), the median of %d runs of\n", len(runs[order[0]]))
	fmt.Fprintf(&b, "#   go test ./quantize -run '^$' -bench 'Quantize/' -count %d\n", len(runs[order[0]]))
	fmt.Fprintf(&b, "# on the machine below (Go's cpu line), a shared and loaded one: CPU time,\n")
	fmt.Fprintf(&b, "# not wall time. imatrix 0: without importance data (only where the search differs).\n")
	fmt.Fprintf(&b, "# io: bytes read or written, convert: bf16 input to float32 rows, checked and hashed (measured\n")
	fmt.Fprintf(&b, "# on whole runs of the medium model: pipeline/workcost_test.go's ioSpeed and convertSpeed).\n")
	fmt.Fprintf(&b, "# Written by go test ./pipeline -run TestWorkCostTable -workcost BENCH.txt; changing it changes\n")
	fmt.Fprintf(&b, "# the parts of K/N, so every host of a job array must run the same gquant.\n")
	fmt.Fprintf(&b, "# machine: %s\n", cpu)
	fmt.Fprintf(&b, "# type\timatrix\tcpu_MB_per_s\n")
	fmt.Fprintf(&b, "io\t-\t%d\nconvert\t-\t%d\n", ioSpeed, convertSpeed)
	for _, name := range order {
		imat := "1"
		typ := name
		if rest, ok := strings.CutPrefix(name, "noimat/"); ok {
			imat, typ = "0", rest
		}
		vs := slices.Clone(runs[name])
		slices.Sort(vs)
		med := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		prec := 1
		if med < 10 {
			prec = 2
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", typ, imat, strconv.FormatFloat(math.Round(med*100)/100, 'f', prec, 64))
	}
	if err := os.WriteFile("workcost.tsv", []byte(b.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote workcost.tsv from %s: %d rows", path, len(order))
	workCostTSV = b.String()
}
