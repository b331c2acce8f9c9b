// Package stdregex compiles regexes as llama-quantize reads them: with the
// ECMAScript grammar of libstdc++'s std::regex (--custom-q, --repack-pattern,
// and gquant's own rule files, so that one dialect holds everywhere).
// regexp2's ECMAScript mode, which does the matching, reads a few things
// otherwise: POSIX classes in brackets ([[:digit:]]), which std::regex
// takes and regexp2 does not; escapes of letters std::regex does not know
// (\A, \e, \p), which are the letter itself there and anchors or other
// characters here; and .NET groups ((?i), (?<name>...), lookbehind), which
// std::regex refuses. Translate rewrites a pattern so that regexp2 reads
// it as std::regex does, and refuses what std::regex refuses.
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
const escapes = "bBdDfnrsStvwWxuc"

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
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			n := pattern[i]
			if isLetter(n) && !strings.ContainsRune(escapes, rune(n)) {
				b.WriteByte(n)
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
		case inClass && c == '[' && i+1 < len(pattern) && strings.ContainsRune(":=.", rune(pattern[i+1])):
			kind := pattern[i+1]
			end := strings.Index(pattern[i+2:], string(kind)+"]")
			if end < 0 {
				return "", fmt.Errorf("%w: [%c at byte %d has no closing %c]", ErrSyntax, kind, i, kind)
			}
			name := pattern[i+2 : i+2+end]
			set, ok := classes[name]
			if kind != ':' || !ok {
				return "", fmt.Errorf("%w: [%c%s%c] at byte %d: not a character class it knows", ErrSyntax, kind, name, kind, i)
			}
			b.WriteString(set)
			i += 2 + end + 1
		case !inClass && c == '[':
			inClass = true
			b.WriteByte(c)
			// A ']' first in a bracket is part of it for neither grammar's
			// closing; leave it to the compilers, as written.
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
		case !inClass && c == '(' && i+1 < len(pattern) && pattern[i+1] == '?':
			if i+2 >= len(pattern) || !strings.ContainsRune(":=!", rune(pattern[i+2])) {
				return "", fmt.Errorf("%w: (? at byte %d: only (?: (?= (?! groups exist there", ErrSyntax, i)
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
