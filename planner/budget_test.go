package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/bytesize"
)

func TestParseBudgets(t *testing.T) {
	got, err := ParseBudgets("CPU=240GiB, GPU=23.5GiB,")
	if err != nil {
		t.Fatal(err)
	}
	want := []Budget{{"CPU", 240 << 30, "240GiB"}, {"GPU", 47 << 29, "23.5GiB"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Sizes are internal/bytesize's (its tests hold the grammar): a bare G
	// is 10^9, as in llama-gguf-split's limits.
	if got, err := ParseBudgets("GPU=24G"); err != nil || got[0].Bytes != 24e9 {
		t.Errorf("GPU=24G: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "CPU", "=1GiB", "CPU=1XB", "CPU=1GiB,GPU", "CPU=-1GiB"} {
		if _, err := ParseBudgets(bad); !errors.Is(err, ErrBadBudget) {
			t.Errorf("ParseBudgets(%q): %v, want ErrBadBudget", bad, err)
		}
	}
	if _, err := ParseBudgets("CPU=1XB"); !errors.Is(err, bytesize.ErrSize) || !strings.Contains(err.Error(), `unknown unit "XB"`) {
		t.Errorf("CPU=1XB: %v", err)
	}
	if err := CheckBudgets([]Budget{{Device: "GPU", Text: "1GiB"}, {Device: "GPU", Text: "2GiB"}}); err == nil || !strings.Contains(err.Error(), "1GiB and 2GiB") {
		t.Errorf("duplicate budget: %v", err)
	}
}
