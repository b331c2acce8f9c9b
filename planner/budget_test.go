package planner

import (
	"errors"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string // substring of the error, "" for success
	}{
		{"240GiB", 240 << 30, ""},
		{"23.5GiB", 47 << 29, ""},
		{"23.5 GiB", 47 << 29, ""},
		{"225736MiB", 225736 << 20, ""},
		{"1TiB", 1 << 40, ""},
		{"1.5KiB", 1536, ""},
		{"500GB", 500e9, ""},
		{"2.5TB", 2.5e12, ""},
		{"1KB", 1000, ""},
		{"7MB", 7e6, ""},
		{"123B", 123, ""},
		{"0B", 0, ""},
		{"10gib", 10 << 30, ""},
		{"0.1B", 0, ""}, // rounded down to a whole byte
		{"24G", 0, `unknown unit "G"`},
		{"24Gb", 24e9, ""},
		{"24 bytes", 0, `unknown unit "bytes"`},
		{"24", 0, "has no unit"},
		{"GiB", 0, "not a number"},
		{"", 0, "not a number"},
		{"1.2.3GiB", 0, "is not a number"},
		{"-5GiB", 0, "not a number"},
		{"99999999999TiB", 0, "out of range"},
	} {
		got, err := ParseBytes(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseBytes(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadBudget)):
			t.Errorf("ParseBytes(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParseBytes(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseBudgets(t *testing.T) {
	got, err := ParseBudgets("CPU=240GiB, GPU=23.5GiB,")
	if err != nil {
		t.Fatal(err)
	}
	want := []Budget{{"CPU", 240 << 30, "240GiB"}, {"GPU", 47 << 29, "23.5GiB"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "CPU", "=1GiB", "CPU=1XB", "CPU=1GiB,GPU"} {
		if _, err := ParseBudgets(bad); !errors.Is(err, ErrBadBudget) {
			t.Errorf("ParseBudgets(%q): %v, want ErrBadBudget", bad, err)
		}
	}
	if err := checkBudgets([]Budget{{Device: "GPU", Text: "1GiB"}, {Device: "GPU", Text: "2GiB"}}); err == nil || !strings.Contains(err.Error(), "1GiB and 2GiB") {
		t.Errorf("duplicate budget: %v", err)
	}
}
