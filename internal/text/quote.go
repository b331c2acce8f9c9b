package text

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// QuoteMax is how many bytes of a line Quote shows in an error message:
// enough to recognise a line of a text file.
const QuoteMax = 80

// Quote returns s quoted as %q quotes it, cut after its first max bytes
// (at a character boundary) with its length when longer. Messages quote
// the lines they reject, and a binary file given as a text file (a model
// as --gains) has "lines" of many kilobytes that would fill the terminal
// with escapes and stray characters.
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
}
