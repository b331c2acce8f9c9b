package mediumtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gquant/gquant/gguf"
)

// The manifests were written by Python's json module: scalar values as
// json.dumps writes them, and each array as the first 16 hex digits of the
// sha256 of json.dumps(list) with the default separators (", ") and
// ensure_ascii. The functions here write values the same way, so our metadata
// can be compared with them as text.

// pyFloat writes f as Python's repr(float) does: the shortest digits that
// read back to f, in positional form for decimal exponents -4 to 15 (with
// ".0" when there is no fraction), scientific otherwise ("1e-05", "1.5e+16").
// json.dumps writes non-finite values as NaN, Infinity and -Infinity.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, e, _ := strings.Cut(s, "e")
	exp, err := strconv.Atoi(e)
	if err != nil {
		panic(fmt.Sprintf("pyFloat: %q from strconv", s))
	}
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		out := digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, out, es, exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

// pyString writes s as json.dumps does with ensure_ascii: printable ASCII as
// is, the short escapes, everything else as \uXXXX in lower-case hex, with
// surrogate pairs above U+FFFF. Invalid UTF-8 reads as U+FFFD.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= ' ' && r <= '~':
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				if r == utf8.RuneError {
					r = 0xfffd
				}
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyJSON writes a scalar GGUF value as json.dumps writes the Python value the
// manifest's writer read for it (integers as integers, floats widened to
// float64). ok is false for arrays and invalid values.
func pyJSON(v gguf.Value) (s string, ok bool) {
	switch v.Type() {
	case gguf.TypeString:
		t, _ := v.Text()
		return pyString(t), true
	case gguf.TypeBool:
		b, _ := v.Bool()
		return strconv.FormatBool(b), true
	case gguf.TypeFloat32, gguf.TypeFloat64:
		f, _ := v.Float()
		return pyFloat(f), true
	case gguf.TypeArray:
		return "", false
	}
	if n, ok := v.Int(); ok {
		return strconv.FormatInt(n, 10), true
	}
	if n, ok := v.Uint(); ok {
		return strconv.FormatUint(n, 10), true
	}
	return "", false
}

// arrayDigest is the manifest's "sha" of an array value: the first 16 hex
// digits of sha256(json.dumps(list)). Arrays of arrays are not supported (ok
// false); no model here has them.
func arrayDigest(v gguf.Value) (digest string, ok bool) {
	h := sha256.New()
	h.Write([]byte{'['})
	for i := range v.Len() {
		if i > 0 {
			h.Write([]byte(", "))
		}
		s, ok := pyJSON(v.Elem(i))
		if !ok {
			return "", false
		}
		h.Write([]byte(s))
	}
	h.Write([]byte{']'})
	return hex.EncodeToString(h.Sum(nil))[:16], true
}
