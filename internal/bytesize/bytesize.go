// Package bytesize reads the byte sizes users write on command lines: split
// limits (--split-max-size), device budgets and reserves (--budget,
// --reserve, --more). One grammar serves them all.
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// ErrSize is wrapped by every error of Parse.
var ErrSize = errors.New("bytesize: bad size")

// units are the units Parse accepts, matched without regard to case. Bare
// K, M, G and T are powers of 1000, as llama-gguf-split reads its
// --split-max-size 2M and 4G; "b" is always bytes, never bits.
var units = []struct {
	name  string
	bytes int64
}{
	{"", 1}, {"B", 1},
	{"K", 1e3}, {"KB", 1e3}, {"M", 1e6}, {"MB", 1e6}, {"G", 1e9}, {"GB", 1e9}, {"T", 1e12}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
}

const unitHelp = "B or none, K, KB, M, MB, G, GB, T, TB for powers of 1000, KiB, MiB, GiB, TiB for powers of 1024"

// Max is the largest size Parse returns: sizes add up, and twice Max still
// fits an int64.
const Max = math.MaxInt64 / 2

// Parse reads a size: a decimal number (with a fraction or an exponent if
// wanted), optional spaces, and an optional unit: "2M" (2*10^6 bytes, as
// llama-gguf-split reads it), "4G", "500MB", "240GiB", "23.5 GiB",
// "1000000B", "123456". The arithmetic is exact ("23.5GiB" is 23.5*2^30
// bytes), rounded down to a whole byte. Sizes from 0 to Max are accepted;
// callers that need at least one byte say so.
func Parse(s string) (int64, error) { return parse(s, false) }

// ParseUp is Parse rounding a fraction of a byte up, for sizes that must
// be kept free ("1.5" reserves 2 bytes, not 1): rounding them down is the
// unsafe direction.
func ParseUp(s string) (int64, error) { return parse(s, true) }

func parse(s string, up bool) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if t[j] == '+' || t[j] == '-' {
			j++
		}
		k := j
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
		}
		if k > j {
			// big.Rat would compute 10^exp in full: bound it first.
			if exp := strings.TrimLeft(t[j:k], "0"); len(exp) > 2 {
				return 0, fmt.Errorf("%w: %q is out of range", ErrSize, s)
			}
			i = k
		}
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, fmt.Errorf("%w: %q is not a number with a unit (%s)", ErrSize, s, unitHelp)
	}
	mult := int64(0)
	for _, u := range units {
		if strings.EqualFold(unit, u.name) {
			mult = u.bytes
			break
		}
	}
	if mult == 0 {
		return 0, fmt.Errorf("%w: %q: unknown unit %q (%s)", ErrSize, s, unit, unitHelp)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%w: %q: %q is not a number", ErrSize, s, num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	// Exponents can make huge numbers: compare before converting.
	if r.Cmp(new(big.Rat).SetInt64(Max)) > 0 {
		return 0, fmt.Errorf("%w: %q is out of range", ErrSize, s)
	}
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if up && m.Sign() > 0 {
		q.Add(q, big.NewInt(1)) // at most Max: Max is a whole number of bytes
	}
	return q.Int64(), nil
}

// Format writes a size in binary units with two decimals ("1.50 GiB",
// "512 B"): the one form of gquant's reports and recipe comments.
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
