package planner

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// ErrBadBudget is wrapped by every budget parsing error.
var ErrBadBudget = errors.New("planner: bad budget")

// budgetUnits are the units a budget may use. Unlike gguf-split's size
// limits, a bare "G" is refused: whether 240G means 240*10^9 or 240*2^30
// bytes is a 7 % difference, more than most margins.
var budgetUnits = []struct {
	name  string
	bytes int64
}{
	{"B", 1},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
}

const unitHelp = "use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)"

// Budget is the most bytes of weights one device may hold.
type Budget struct {
	Device string
	Bytes  int64
	Text   string // the value as written ("23.5GiB")
}

// ParseBytes reads a size with a unit: "240GiB", "23.5 GiB", "512MB",
// "1000000B". Units are matched without regard to case except that "b" is
// never read as bits. The result is rounded down to a whole byte.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, fmt.Errorf("%w: %q is not a number with a unit (%s)", ErrBadBudget, s, unitHelp)
	}
	if unit == "" {
		return 0, fmt.Errorf("%w: %q has no unit (%s)", ErrBadBudget, s, unitHelp)
	}
	mult := int64(0)
	for _, u := range budgetUnits {
		if strings.EqualFold(unit, u.name) {
			mult = u.bytes
			break
		}
	}
	if mult == 0 {
		return 0, fmt.Errorf("%w: %q: unknown unit %q (%s)", ErrBadBudget, s, unit, unitHelp)
	}
	// Exact decimal arithmetic, so "23.5GiB" is exactly 23.5*2^30 bytes.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%w: %q: %q is not a number", ErrBadBudget, s, num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() || n.Int64() > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrBadBudget, s)
	}
	return n.Int64(), nil
}

// ParseBudgets reads a --budget value: DEVICE=SIZE pairs separated by
// commas ("CPU=240GiB,GPU=23.5GiB"). Each error quotes the offending pair.
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
		n, err := ParseBytes(size)
		if err != nil {
			return nil, fmt.Errorf("budget for %s: %w", dev, err)
		}
		out = append(out, Budget{Device: dev, Bytes: n, Text: strings.TrimSpace(size)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q names no device (want DEVICE=SIZE,...)", ErrBadBudget, s)
	}
	return out, nil
}

// checkBudgets refuses two budgets for one device.
func checkBudgets(bs []Budget) error {
	seen := map[string]Budget{}
	for _, b := range bs {
		if prev, dup := seen[b.Device]; dup {
			return fmt.Errorf("%w: two budgets for %s (%s and %s)", ErrBadBudget, b.Device, prev.Text, b.Text)
		}
		seen[b.Device] = b
	}
	return nil
}
