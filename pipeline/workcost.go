package pipeline

import (
	"bufio"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gquant/gquant/formats"
)

// workcost.tsv is the cost model of Plan.Work: our kernels' speed per type
// (and, where it differs, without an importance matrix), measured once by
// BenchmarkQuantize on one machine and kept as a table, so that the
// estimate, and the parts of a job array cut from it, depend on the plan
// alone and never on the speed of the machine that computes them. Two rows
// cover what a run does besides the kernels, measured on whole runs of the
// medium model (see workcost_test.go): io, the CPU time of reading and
// writing a byte, and convert, that of turning the input into float32 rows,
// checking and hashing them, per weight converted. TestWorkCostTable checks
// it covers every type; go test ./pipeline -run TestWorkCostTable -workcost
// BENCH.txt writes it again from the output of go test ./quantize -run '^$'
// -bench 'Quantize/' -count 5.
//
//go:embed workcost.tsv
var workCostTSV string

// costKey is a row of the table: a type, with or without importance data.
type costKey struct {
	typ     formats.Type
	imatrix bool
}

// costModel is the parsed table: nanoseconds of one thread per 1024
// weights quantized, per type; per 1024 bytes read or written (io); per
// 1024 weights converted (convert).
type costModel struct {
	perKi     map[costKey]uint64
	ioKiB     uint64
	convertKi uint64
	slowest   uint64 // for a type the table lacks
	machine   string // the "# machine: " line
}

// WorkCostMachine names the machine whose kernel speeds Plan.Work's
// estimates are in: an estimated second is a second of one of its threads.
func WorkCostMachine() string { return workCosts().machine }

var workCosts = sync.OnceValue(func() costModel {
	m, err := parseWorkCosts(workCostTSV)
	if err != nil {
		panic("pipeline: workcost.tsv: " + err.Error()) // TestWorkCostTable reads it
	}
	return m
})

// parseWorkCosts reads the table: type, imatrix (1, 0, or - for the io and
// convert rows), cpu-MB/s: of bf16 input (2 bytes per weight) for a type
// and convert, of bytes for io.
// Costs are rounded to whole nanoseconds per 1024 weights here, once, so
// that everything after is integer arithmetic.
func parseWorkCosts(text string) (costModel, error) {
	m := costModel{perKi: map[costKey]uint64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		row := strings.TrimSpace(sc.Text())
		if machine, ok := strings.CutPrefix(row, "# machine: "); ok {
			m.machine = machine
		}
		if row == "" || strings.HasPrefix(row, "#") {
			continue
		}
		f := strings.Split(row, "\t")
		if len(f) != 3 {
			return m, fmt.Errorf("line %d: want 3 tab-separated fields, have %d", line, len(f))
		}
		speed, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(speed > 0) || math.IsInf(speed, 0) {
			return m, fmt.Errorf("line %d: bad speed %q", line, f[2])
		}
		switch f[0] {
		case "io":
			// ns per byte = 1000 / MB/s.
			m.ioKiB = max(1, uint64(math.Round(1024e3/speed)))
			continue
		case "convert":
			m.convertKi = max(1, uint64(math.Round(2048e3/speed)))
			continue
		}
		t, err := formats.ParseType(f[0])
		if err != nil {
			return m, fmt.Errorf("line %d: %w", line, err)
		}
		if f[1] != "0" && f[1] != "1" {
			return m, fmt.Errorf("line %d: imatrix is 0 or 1, not %q", line, f[1])
		}
		key := costKey{t, f[1] == "1"}
		if _, dup := m.perKi[key]; dup {
			return m, fmt.Errorf("line %d: %s (imatrix %s) again", line, f[0], f[1])
		}
		// ns per weight = 2 bytes / (MB/s * 1e6) * 1e9 = 2000 / MB/s.
		m.perKi[key] = max(1, uint64(math.Round(2048e3/speed)))
		m.slowest = max(m.slowest, m.perKi[key])
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if m.ioKiB == 0 || m.convertKi == 0 {
		return m, fmt.Errorf("no io or no convert row")
	}
	if m.machine == "" {
		return m, fmt.Errorf("no '# machine: ' line")
	}
	return m, nil
}

// TensorWork estimates the time one thread takes to write t from inBytes
// of input: reading the input and writing the output (io), and for a
// tensor converted, turning its weights into float32 (convert) and
// quantizing them at the table's cost for its type, with or without
// importance data as t has it (a conversion to f32 has no kernel).
func TensorWork(t Tensor, inBytes int64) time.Duration {
	m := workCosts()
	outBytes := inBytes
	if t.Convert {
		if n, err := t.Type.TensorSize(t.Shape); err == nil {
			outBytes = n
		}
	}
	work := perKi(uint64(max(inBytes, 0))+uint64(max(outBytes, 0)), m.ioKiB)
	if !t.Convert {
		return time.Duration(work)
	}
	weights := uint64(1)
	for _, d := range t.Shape {
		weights *= uint64(max(d, 0))
	}
	work += perKi(weights, m.convertKi)
	if t.Type == formats.F32 {
		return time.Duration(work)
	}
	cost, ok := m.perKi[costKey{t.Type, t.hasImatrix()}]
	if !ok {
		if cost, ok = m.perKi[costKey{t.Type, true}]; !ok {
			cost = m.slowest
		}
	}
	return time.Duration(work + perKi(weights, cost))
}

// perKi is n units at cost nanoseconds per 1024 of them.
func perKi(n, cost uint64) uint64 { return n/1024*cost + n%1024*cost/1024 }
