package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleBench = `goos: linux
BenchmarkQuantize/q4_0-2         	     100	  10 ns/op	  96.00 MB/s	  90.00 cpu-MB/s
BenchmarkQuantize/q4_0-2         	     100	  10 ns/op	 104.00 MB/s	 110.00 cpu-MB/s
BenchmarkQuantize/iq2_kt-2       	       4	  10 ns/op	   3.00 MB/s	   3.10 cpu-MB/s
BenchmarkQuantize/noimat/q2_K-2  	     100	  10 ns/op	  70.00 MB/s	  70.00 cpu-MB/s
BenchmarkQuantize/unknown-2      	     100	  10 ns/op	   1.00 MB/s
PASS
`

const sampleRef = "# type\timatrix\tMB_per_s\nq4_0\t1\t50.0\niq2_kt\t1\t3.6\n"

func TestParseAndCompare(t *testing.T) {
	ref, err := parseReference(strings.NewReader(sampleRef))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		metric string
		want   []row
	}{
		{"MB/s", []row{
			{typ: "iq2_kt", n: 1, mean: 3, min: 3, max: 3, ref: 3.6},
			{typ: "q4_0", n: 2, mean: 100, min: 96, max: 104, ref: 50},
		}},
		{"cpu-MB/s", []row{
			{typ: "iq2_kt", n: 1, mean: 3.1, min: 3.1, max: 3.1, ref: 3.6},
			{typ: "q4_0", n: 2, mean: 100, min: 90, max: 110, ref: 50},
		}},
	} {
		runs := map[string][]float64{}
		if err := parseBench(strings.NewReader(sampleBench), tc.metric, runs); err != nil {
			t.Fatal(err)
		}
		if len(runs["noimat/q2_K"]) != 1 || len(runs["unknown"]) != map[string]int{"MB/s": 1}[tc.metric] {
			t.Errorf("%s: runs %v", tc.metric, runs)
		}
		got := compare(ref, runs)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: got %+v, want %+v", tc.metric, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: row %d = %+v, want %+v", tc.metric, i, got[i], tc.want[i])
			}
		}
	}
}

func TestBadReference(t *testing.T) {
	for _, in := range []string{"q4_0\t1\n", "q4_0\t1\tfast\n", "q4_0\t1\t-3\n", "q4_0\t1\tNaN\n", "q4_0\t1\t+Inf\n"} {
		if _, err := parseReference(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	refPath, benchPath := filepath.Join(dir, "ref.tsv"), filepath.Join(dir, "bench.txt")
	if err := os.WriteFile(refPath, []byte(sampleRef), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(benchPath, []byte(sampleBench), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(&out, refPath, "MB/s", 1.0, []string{benchPath})
	if !errors.Is(err, errBelow) {
		t.Errorf("iq2_kt at 0.83x: err = %v, want errBelow", err)
	}
	if !strings.Contains(out.String(), "below") || !strings.Contains(out.String(), "2.00") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	if err := run(&out, refPath, "MB/s", 0.8, []string{benchPath}); err != nil {
		t.Errorf("with -min 0.8: %v\n%s", err, out.String())
	}
	if err := run(&out, refPath, "ns/op-none", 1.0, []string{benchPath}); err == nil {
		t.Error("no results for an unknown unit: no error")
	}
}

func TestBadBench(t *testing.T) {
	for _, in := range []string{
		"BenchmarkQuantize/q4_0-2 1 1 ns/op fast MB/s",
		"BenchmarkQuantize/q4_0-2 1 1 ns/op NaN MB/s",
		"BenchmarkQuantize/q4_0-2 1 1 ns/op -2 MB/s",
		"BenchmarkQuantize/q4_0-2 1 1 ns/op 1e999 MB/s",
	} {
		if err := parseBench(strings.NewReader(in), "MB/s", map[string][]float64{}); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// The parsers never panic, and whatever they accept is a finite speed.
func FuzzParseBench(f *testing.F) {
	f.Add(sampleBench, "MB/s")
	f.Add("BenchmarkQuantize/x-2 1 1 ns/op 1e999 MB/s", "MB/s")
	f.Fuzz(func(t *testing.T, in, metric string) {
		runs := map[string][]float64{}
		_ = parseBench(strings.NewReader(in), metric, runs)
		for typ, vs := range runs {
			for _, v := range vs {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Errorf("%s: accepted %v", typ, v)
				}
			}
		}
		ref, err := parseReference(strings.NewReader(in))
		for typ, v := range ref {
			if err == nil && (!(v > 0) || math.IsInf(v, 0)) {
				t.Errorf("reference %s: accepted %v", typ, v)
			}
		}
	})
}
