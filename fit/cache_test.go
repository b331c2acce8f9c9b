package fit

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheBytes is a cache file holding s under key 1, written whatever s
// is (as a damaged or crafted file would be, with a valid checksum).
func cacheBytes(t *testing.T, s Stats) []byte {
	t.Helper()
	c := NewCache()
	c.entries[1] = s
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadCacheRange: a cache record is read only when its numbers can be
// a measurement: sums from 0 to maxCachedValue, a whole number of rows, a
// bounded relative error and a finite standard error, or a broken
// measurement. Num 1e300 over Den 1e-300 (an infinite relative error,
// behind a recomputed checksum) once panicked the optimizer; now such a
// file is refused with ErrBadCache naming the file and the record.
func TestReadCacheRange(t *testing.T) {
	good := Stats{N: 2, Num: 0.5, Den: 10, Num2: 0.2, Den2: 60, NumDen: 3}
	with := func(f func(s *Stats)) Stats {
		s := good
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		s    Stats
		want string // part of the error; "" reads
	}{
		{"good", good, ""},
		{"broken", broken, ""},
		{"no rows", Stats{}, ""},
		{"infinite ratio", with(func(s *Stats) { s.Num, s.Den = 1e300, 1e-300 }), "Num is 1e+300, not from 0 to 1e+100"},
		{"huge ratio", with(func(s *Stats) { s.Num, s.Den = 1e90, 1e-90 }), "relative error Num/Den = 1e+90/1e-90 = 1e+180, more than 1e+06"},
		{"negative Num", with(func(s *Stats) { s.Num = -0.5 }), "Num is -0.5"},
		{"negative Den", with(func(s *Stats) { s.Den = -10 }), "Den is -10"},
		{"negative N", with(func(s *Stats) { s.N = -2 }), "N is -2"},
		{"broken with sums", Stats{N: -1, Num: 1}, "N is -1"},
		{"fractional N", with(func(s *Stats) { s.N = 2.5 }), "N is 2.5, not a whole number"},
		{"NaN", with(func(s *Stats) { s.Den2 = math.NaN() }), "Den2 is NaN"},
		{"+Inf", with(func(s *Stats) { s.NumDen = math.Inf(1) }), "NumDen is +Inf"},
		{"absurd Num2", with(func(s *Stats) { s.Num2 = 1e200 }), "Num2 is 1e+200"},
		{"infinite SE", with(func(s *Stats) { s.Num, s.Den, s.Num2 = 1e-295, 1e-300, 1e100 }), "standard error +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fit.cache")
			if err := os.WriteFile(path, cacheBytes(t, tc.s), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := LoadCache(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got, ok := c.Get(1); !ok || got != tc.s {
					t.Errorf("read back %+v, %v", got, ok)
				}
				return
			}
			if !errors.Is(err, ErrBadCache) || !strings.Contains(err.Error(), path+": fit: bad cache file: record 1: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want ErrBadCache naming %s, record 1 and %q", err, path, tc.want)
			}
			// Put keeps no such entry: a cache never writes what it
			// cannot read back.
			c = NewCache()
			c.Put(1, tc.s)
			if c.Len() != 0 || c.Added() != 0 {
				t.Errorf("Put stored it: %d entries, %d added", c.Len(), c.Added())
			}
		})
	}
}

// TestFitBadLoss: losses that are not finite are errors naming the tensor
// and type (from Fit) or the item (from solve), never a panic: they come
// from data (measurements, cache entries), not from a programming error.
func TestFitBadLoss(t *testing.T) {
	for _, loss := range []float64{math.Inf(1), math.NaN(), 1e200} {
		items := [][]option{{{bytes: 10, loss: 1}, {bytes: 20, loss: 0.5}}, {{bytes: 10, loss: 1}, {bytes: 5, loss: loss}}}
		if _, err := solve(items, 25); !errors.Is(err, ErrBadLoss) || !strings.Contains(err.Error(), "item 2 of 2, option 2") {
			t.Errorf("loss %v: %v, want ErrBadLoss naming item 2, option 2", loss, err)
		}
	}
	in := openTiny(t)
	opts := tinyOptions(in)
	opts.Budgets = mustBudgets(t, "CPU=6MiB")
	if _, err := Fit(in, opts); err != nil {
		t.Fatal(err)
	}
	// The same fit from a cache whose entries (read without checks) have
	// an infinite relative error.
	bad := NewCache()
	shared := opts.Measure.Cache
	shared.mu.Lock()
	for k, s := range shared.entries {
		if !s.Broken() {
			s = Stats{N: s.N, Num: 1e300, Den: 1e-300}
		}
		bad.entries[k] = s
	}
	shared.mu.Unlock()
	opts.Measure.Cache = bad
	_, err := Fit(in, opts)
	if !errors.Is(err, ErrBadLoss) || !strings.Contains(err.Error(), " as ") || !strings.Contains(err.Error(), "relative error +Inf") {
		t.Errorf("Fit from a damaged cache: %v, want ErrBadLoss naming a tensor and type", err)
	}
}
