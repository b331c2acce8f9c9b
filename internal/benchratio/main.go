// Command benchratio compares the output of the quantize benchmarks with the
// reference's measured speed per type, so that the ratios quoted in issue
// notes can be reproduced:
//
//	go test ./quantize -run '^$' -bench 'Quantize/' -count 5 > bench.txt
//	go run ./internal/benchratio bench.txt
//
// For every type with a reference figure it prints the mean, the slowest and
// the fastest run and their ratios to the reference, slowest mean first. It
// exits with status 1 when a type's mean is below -min times the reference.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

func main() {
	ref := flag.String("ref", "../shared/bench/reference-quantize-speed.tsv", "the reference's speed per type (TSV)")
	metric := flag.String("metric", "MB/s", "the benchmark unit to compare: MB/s or cpu-MB/s")
	minRatio := flag.Float64("min", 1.0, "exit with status 1 when a type's mean ratio is below this")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: benchratio [flags] [BENCH.txt ...] (standard input without files)\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(os.Stdout, *ref, *metric, *minRatio, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// errBelow reports that some type is below the required ratio.
var errBelow = errors.New("some types are below the required ratio")

func run(w io.Writer, refPath, metric string, minRatio float64, files []string) error {
	rf, err := os.Open(refPath)
	if err != nil {
		return err
	}
	defer rf.Close()
	ref, err := parseReference(rf)
	if err != nil {
		return fmt.Errorf("%s: %w", refPath, err)
	}
	runs := map[string][]float64{}
	if len(files) == 0 {
		if err := parseBench(os.Stdin, metric, runs); err != nil {
			return fmt.Errorf("standard input: %w", err)
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = parseBench(f, metric, runs)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	rows := compare(ref, runs)
	if len(rows) == 0 {
		return fmt.Errorf("no BenchmarkQuantize/<type> results with %s and a reference figure", metric)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "type\truns\tmean %s\treference\tratio mean\tmin\tmax\t\n", metric)
	below := false
	for _, r := range rows {
		mark := ""
		if r.mean/r.ref < minRatio {
			mark, below = "below", true
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\n",
			r.typ, r.n, speed(r.mean), speed(r.ref), r.mean/r.ref, r.min/r.ref, r.max/r.ref, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if below {
		return errBelow
	}
	return nil
}

// parseReference reads the TSV: type, imatrix flag, MB/s; # starts a comment.
func parseReference(r io.Reader) (map[string]float64, error) {
	ref := map[string]float64{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want 3 tab-separated fields, have %d", line, len(f))
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("line %d: bad speed %q", line, f[2])
		}
		ref[f[0]] = v
	}
	return ref, sc.Err()
}

// parseBench adds to runs, per type, every BenchmarkQuantize/<type>-N
// result's value in the given unit. Other lines are ignored.
func parseBench(r io.Reader, metric string, runs map[string][]float64) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkQuantize/") {
			continue
		}
		typ := strings.TrimPrefix(f[0], "BenchmarkQuantize/")
		if i := strings.LastIndexByte(typ, '-'); i > 0 {
			if _, err := strconv.Atoi(typ[i+1:]); err == nil {
				typ = typ[:i]
			}
		}
		// After the iteration count come value-unit pairs.
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] != metric {
				continue
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: bad %s value %q", f[0], metric, f[i])
			}
			runs[typ] = append(runs[typ], v)
		}
	}
	return sc.Err()
}

// A row is one type's runs against its reference figure.
type row struct {
	typ                 string
	n                   int
	mean, min, max, ref float64
}

// compare summarises the runs of every type that has a reference figure,
// the lowest mean ratio first.
func compare(ref map[string]float64, runs map[string][]float64) []row {
	var rows []row
	for typ, vs := range runs {
		r, ok := ref[typ]
		if !ok || len(vs) == 0 {
			continue
		}
		x := row{typ: typ, n: len(vs), min: vs[0], max: vs[0], ref: r}
		for _, v := range vs {
			x.mean += v
			x.min, x.max = min(x.min, v), max(x.max, v)
		}
		x.mean /= float64(len(vs))
		rows = append(rows, x)
	}
	sort.Slice(rows, func(i, j int) bool {
		ri, rj := rows[i].mean/rows[i].ref, rows[j].mean/rows[j].ref
		if ri != rj {
			return ri < rj
		}
		return rows[i].typ < rows[j].typ
	})
	return rows
}

// speed formats MB/s with the precision that matters at its size.
func speed(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
