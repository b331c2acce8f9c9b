package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gquant/gquant/internal/bytesize"
)

// ErrBadBudget is wrapped by every budget parsing error.
var ErrBadBudget = errors.New("planner: bad budget")

// Budget is the most bytes of weights one device may hold.
type Budget struct {
	Device string
	Bytes  int64
	Text   string // the value as written ("23.5GiB")
}

// ParseBudgets reads a --budget value: DEVICE=SIZE pairs separated by
// commas ("CPU=240GiB,GPU=23.5GiB"), sizes as internal/bytesize reads them.
// Each error quotes the offending pair.
func ParseBudgets(s string) ([]Budget, error) {
	var out []Budget
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		dev, size, ok := strings.Cut(item, "=")
		dev = strings.TrimSpace(dev)
		if !ok || dev == "" {
			return nil, fmt.Errorf("%w: %q: want DEVICE=SIZE, like CPU=240GiB", ErrBadBudget, item)
		}
		n, err := bytesize.Parse(size)
		if err != nil {
			return nil, fmt.Errorf("%w: budget for %s: %w", ErrBadBudget, dev, err)
		}
		out = append(out, Budget{Device: dev, Bytes: n, Text: strings.TrimSpace(size)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q names no device (want DEVICE=SIZE,...)", ErrBadBudget, s)
	}
	return out, nil
}

// CheckBudgets refuses two budgets for one device.
func CheckBudgets(bs []Budget) error {
	seen := map[string]Budget{}
	for _, b := range bs {
		if prev, dup := seen[b.Device]; dup {
			return fmt.Errorf("%w: two budgets for %s (%s and %s)", ErrBadBudget, b.Device, prev.Text, b.Text)
		}
		seen[b.Device] = b
	}
	return nil
}
