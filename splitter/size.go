package splitter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits maps the units ParseSize accepts (lower case) to bytes. Bare K,
// M, G, T are decimal, as gguf-split reads M and G.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseSize reads a size limit like "2M" (2*10^6 bytes, as gguf-split reads
// it), "4G", "500MB", "1.5GiB" or "123456" (bytes). Units are
// case-insensitive; the result must be at least one byte.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("splitter: size %q: unknown unit %q (use K, M, G, T for powers of 1000, KiB, MiB, GiB, TiB for powers of 1024)", s, t[i:])
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(t[:i]), 64)
	if err != nil || math.IsNaN(n) {
		return 0, fmt.Errorf("splitter: size %q is not a number with a unit", s)
	}
	bytes := math.Floor(n * unit)
	if bytes < 1 || bytes > math.MaxInt64/2 {
		return 0, fmt.Errorf("splitter: size %q out of range", s)
	}
	return int64(bytes), nil
}
