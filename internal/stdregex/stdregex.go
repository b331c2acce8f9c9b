// Package stdregex compiles regexes as llama-quantize reads them: with the
// ECMAScript grammar of libstdc++'s std::regex (--custom-q, --repack-pattern,
// and gquant's own rule files, so that one dialect holds everywhere).
// regexp2's ECMAScript mode, which does the matching, reads a few things
// otherwise: POSIX classes in brackets ([[:digit:]]), which std::regex
// takes and regexp2 does not; escapes of letters std::regex does not know
// (\A, \e, \p), which are the letter itself there and anchors or other
// characters here, and \cX, which libstdc++ reads as X; and what std::regex
// refuses and regexp2 takes: .NET groups ((?i), (?<name>...), lookbehind),
// a { that starts no interval, \x and \u without their hex digits, a
// back-reference to no group, a range from a class escape in brackets.
// Translate rewrites a pattern so that regexp2 reads it as std::regex
// does, and refuses what std::regex refuses. (std::regex also takes a
// few things regexp2 refuses, such as a** and a{1}{2}; those stay errors.)
package stdregex

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dlclark/regexp2"
)

// ErrSyntax is wrapped by Translate's errors: syntax std::regex refuses.
var ErrSyntax = errors.New("not valid for std::regex")

// Compile translates pattern (Translate) and compiles it with regexp2's
// ECMAScript mode.
func Compile(pattern string) (*regexp2.Regexp, error) {
	t, err := Translate(pattern)
	if err != nil {
		return nil, err
	}
	return regexp2.Compile(t, regexp2.ECMAScript)
}

// escapes are the letters std::regex's ECMAScript grammar gives a meaning
// after a backslash; any other letter escaped is the letter itself.
const escapes = "bBdDfnrsStvwWxu"

// classes are the character classes std::regex knows in brackets
// ([[:name:]]), in the "C" locale, as regexp2 bracket contents.
var classes = map[string]string{
	"alnum":  `0-9A-Za-z`,
	"alpha":  `A-Za-z`,
	"blank":  ` \t`,
	"cntrl":  `\x00-\x1F\x7F`,
	"d":      `0-9`,
	"digit":  `0-9`,
	"graph":  `\x21-\x7E`,
	"lower":  `a-z`,
	"print":  `\x20-\x7E`,
	"punct":  `!-/:-@\[-\x60\{-~`,
	"s":      `\t\n\v\f\r `,
	"space":  `\t\n\v\f\r `,
	"upper":  `A-Z`,
	"w":      `0-9A-Za-z_`,
	"xdigit": `0-9A-Fa-f`,
}

// Translate returns pattern as regexp2's ECMAScript mode must read it to
// match what std::regex matches, or an error wrapping ErrSyntax where
// std::regex would refuse it (llama-quantize then stops).
func Translate(pattern string) (string, error) {
	bad := func(at int, format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w: at byte %d: %s", ErrSyntax, at, fmt.Sprintf(format, args...))
	}
	groups := capturingGroups(pattern)
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			at := i
			i++
			n := pattern[i]
			switch {
			case n == 'c':
				// libstdc++ reads \cX as the letter X itself, not a
				// control character.
				if i+1 >= len(pattern) {
					return bad(at, "\\c at the end")
				}
				i++
				b.WriteString(regexp2.Escape(string(pattern[i])))
				continue
			case n == 'x' && !hexDigits(pattern[i+1:], 2), n == 'u' && !hexDigits(pattern[i+1:], 4):
				return bad(at, "\\%c needs %d hex digits", n, map[byte]int{'x': 2, 'u': 4}[n])
			case n >= '1' && n <= '9' && !inClass:
				k := i
				for k < len(pattern) && pattern[k] >= '0' && pattern[k] <= '9' {
					k++
				}
				if ref := atoiSmall(pattern[i:k]); ref > groups {
					return bad(at, "back-reference \\%s to a group that does not exist", pattern[i:k])
				}
			case n >= '1' && n <= '9' && inClass, n == 'B' && inClass:
				return bad(at, "\\%c in a bracket", n)
			case inClass && strings.ContainsRune("dDsSwW", rune(n)) && i+2 < len(pattern) && pattern[i+1] == '-' && pattern[i+2] != ']':
				return bad(at, "a range from the class \\%c", n)
			case isLetter(n) && !strings.ContainsRune(escapes, rune(n)):
				b.WriteByte(n) // an unknown escape is the letter itself
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
		case inClass && c == '[' && i+1 < len(pattern) && strings.ContainsRune(":=.", rune(pattern[i+1])):
			kind := pattern[i+1]
			end := strings.Index(pattern[i+2:], string(kind)+"]")
			if end < 0 {
				return bad(i, "[%c has no closing %c]", kind, kind)
			}
			name := pattern[i+2 : i+2+end]
			switch set, ok := classes[name]; {
			case kind == ':' && ok:
				b.WriteString(set)
			case kind != ':' && len(name) == 1:
				// A collating element or equivalence class of one
				// character is that character in the "C" locale.
				b.WriteString(regexp2.Escape(name))
			default:
				return bad(i, "[%c%s%c] is not a class it knows", kind, name, kind)
			}
			i += 2 + end + 1
		case !inClass && c == '[':
			inClass = true
			b.WriteByte(c)
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
		case !inClass && c == '{':
			k := strings.IndexByte(pattern[i:], '}')
			if k < 0 || !interval(pattern[i+1:i+k]) {
				return bad(i, "{ starts no interval {n}, {n,} or {n,m}")
			}
			b.WriteString(pattern[i : i+k+1])
			i += k
		case !inClass && c == '(' && i+1 < len(pattern) && pattern[i+1] == '?':
			if i+2 >= len(pattern) || !strings.ContainsRune(":=!", rune(pattern[i+2])) {
				return bad(i, "only (?: (?= (?! groups exist there")
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// capturingGroups counts the ( that open a capturing group, outside
// brackets and escapes.
func capturingGroups(p string) int {
	n, inClass := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(' && (i+1 >= len(p) || p[i+1] != '?'):
			n++
		}
	}
	return n
}

// interval reports whether s (between { and }) is n, n, or n,m.
func interval(s string) bool {
	from, to, comma := strings.Cut(s, ",")
	digits := func(t string) bool {
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		}
		return true
	}
	return from != "" && digits(from) && (!comma || digits(to))
}

// hexDigits reports whether s starts with n hex digits.
func hexDigits(s string, n int) bool {
	if len(s) < n {
		return false
	}
	for i := 0; i < n; i++ {
		c := s[i] | 0x20
		if !(s[i] >= '0' && s[i] <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// atoiSmall reads the digits of a back-reference, saturating.
func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s) && n < 1<<20; i++ {
		n = 10*n + int(s[i]-'0')
	}
	return n
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
