package pipeline

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"
)

// Any --only-shards text parses or fails with ErrShardSelection; what
// parses resolves, against any number of shards, to shards in order, each
// once, all of them in range, or fails with ErrShardSelection.
func FuzzShardSelection(f *testing.F) {
	for _, s := range []string{"3", "3,4", "3-5", "1,4-6", "2/3", "0", "5-3", "1/0", "4/3", "", ",", "1-", "-1", "1/3,2", "99999999999999999999", "1-1048577"} {
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, s string, count uint8) {
		sel, err := ParseShardSelection(s)
		if err != nil {
			if !errors.Is(err, ErrShardSelection) {
				t.Fatalf("%q: %v is not ErrShardSelection", s, err)
			}
			return
		}
		work := make([]time.Duration, count)
		for i := range work {
			work[i] = time.Duration(i%3) * time.Second
		}
		got, err := sel.Resolve(work)
		if err != nil {
			if !errors.Is(err, ErrShardSelection) {
				t.Fatalf("%q of %d: %v is not ErrShardSelection", s, count, err)
			}
			return
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("%q of %d: %v", s, count, got)
		}
		for _, i := range got {
			if i < 0 || i >= int(count) {
				t.Fatalf("%q of %d: shard index %d", s, count, i)
			}
		}
	})
}

// AssignParts, on any work and any number of parts, gives every shard a
// part, in consecutive runs from 1, none empty while shards remain, and
// the same parts again.
func FuzzAssignParts(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}, uint8(3))
	f.Add([]byte{}, uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		var work []time.Duration
		for len(data) >= 8 && len(work) < 200 {
			// Up to 2^52 ns each (52 days), so that sums stay in range.
			work = append(work, time.Duration(binary.LittleEndian.Uint64(data)>>12))
			data = data[8:]
		}
		parts := max(int(n), 1)
		got := AssignParts(work, parts)
		if len(got) != len(work) {
			t.Fatalf("%d parts for %d shards", len(got), len(work))
		}
		for i, p := range got {
			want := 1
			if i > 0 {
				want = got[i-1]
			}
			if p != want && p != want+1 || p > parts || i == 0 && p != 1 {
				t.Fatalf("%v into %d: %v", work, parts, got)
			}
		}
		if len(work) > 0 && got[len(got)-1] != min(len(work), parts) {
			t.Fatalf("%v into %d: %v, want parts 1 to %d", work, parts, got, min(len(work), parts))
		}
		if again := AssignParts(work, parts); !slices.Equal(again, got) {
			t.Fatalf("%v into %d: %v, then %v", work, parts, got, again)
		}
	})
}
