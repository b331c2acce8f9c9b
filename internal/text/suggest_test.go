package text

import (
	"slices"
	"testing"
)

func TestSuggest(t *testing.T) {
	names := []string{"q4_K", "q4_0", "q5_K", "iq4_xs", "Q4_K_M"}
	for _, tc := range []struct {
		name string
		n    int
		want []string
	}{
		{"Q4_k", 3, []string{"q4_K", "q4_0", "q5_K"}}, // case-insensitive, nearest first, ties in order
		{"q4_k", 1, []string{"q4_K"}},
		{"iq4xs", 3, []string{"iq4_xs", "q4_K", "q4_0"}}, // within half the length plus one
		{"zzzzzz", 3, nil},                               // too far from every name
	} {
		if got := Suggest(tc.name, names, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Suggest(%q, %d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
}
