package bytesize

import (
	"errors"
	"strings"
	"testing"
)

// TestParse: the forms split limits (llama-gguf-split's 2M, 4G) and budgets
// (240GiB, 23.5 GiB) were documented with, and what is refused.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string // substring of the error, "" for success
	}{
		// llama-gguf-split's decimal M and G, and the forms split documented.
		{"2M", 2_000_000, ""},
		{"4G", 4_000_000_000, ""},
		{"500MB", 500_000_000, ""},
		{"2MiB", 2 << 20, ""},
		{"1.5GiB", 3 << 29, ""},
		{"1gb", 1_000_000_000, ""},
		{"123456", 123456, ""},
		{"10 KiB", 10240, ""},
		{"24G", 24e9, ""},
		{"1e9", 1e9, ""},
		{"0.29K", 290, ""}, // exact: float64 would give 289.99999999999997
		// The forms budgets documented.
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
		{"0M", 0, ""},
		{"10gib", 10 << 30, ""},
		{"0.1B", 0, ""}, // rounded down to a whole byte
		{"24Gb", 24e9, ""},
		// Refused.
		{"24 bytes", 0, `unknown unit "bytes"`},
		{"2X", 0, `unknown unit "X"`},
		{"GiB", 0, "not a number"},
		{"M", 0, "not a number"},
		{"", 0, "not a number"},
		{"1.2.3GiB", 0, "is not a number"},
		{"-5GiB", 0, "not a number"},
		{"-1G", 0, "not a number"},
		{"99999999999TiB", 0, "out of range"},
		{"1e400", 0, "out of range"},
	} {
		got, err := Parse(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrSize)):
			t.Errorf("Parse(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
		case tc.err == "" && got != tc.want:
			t.Errorf("Parse(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2M", "23.5 GiB", "1e9", "0.1B", "-1", "1.2.3", "9e999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err == nil && (n < 0 || n > Max) {
			t.Fatalf("Parse(%q) = %d", s, n)
		}
	})
}

// ParseUp rounds a fraction of a byte up (a reserve of 1.5 bytes keeps 2
// free, not 1); whole sizes are as Parse gives them.
func TestParseUp(t *testing.T) {
	for _, c := range []struct {
		in       string
		down, up int64
	}{
		{"1.5", 1, 2}, {"1", 1, 1}, {"0.1", 0, 1}, {"0", 0, 0}, {"1.5KiB", 1536, 1536},
		{"0.0001KiB", 0, 1}, {"2.0000001MB", 2000000, 2000001}, {"4611686018427387903B", Max, Max},
	} {
		down, err1 := Parse(c.in)
		up, err2 := ParseUp(c.in)
		if err1 != nil || err2 != nil || down != c.down || up != c.up {
			t.Errorf("%q: Parse %d %v, ParseUp %d %v; want %d and %d", c.in, down, err1, up, err2, c.down, c.up)
		}
	}
}

// Format is the one size form of reports and recipe comments.
func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB", 5 << 20: "5.00 MiB", Max: "4.00 EiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
