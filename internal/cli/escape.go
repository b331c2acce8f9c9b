package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Names and values printed by the commands come from files (tensor names,
// metadata strings, imatrix entries, recipe lines): a name holding a
// terminal escape sequence could rewrite the user's screen or hide a line.
// So every text a command writes goes through an escaping writer: control
// characters (C0 but tab and newline, DEL, C1), the Unicode controls that
// reorder text (bidi embeddings, overrides and isolates) and bytes that
// are not UTF-8 are written as visible escapes (\x1b, \u202e). JSON output
// is already escaped by encoding/json and passes unchanged.

// Escape returns s with the characters above escaped.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	escapeTo(&b, s)
	return b.String()
}

// EscapeInline returns s escaped as Escape does, and its newlines and tabs
// too (\x0a, \x09): for a name printed inside a line or a table cell,
// where a newline would start a false row and a tab shift the columns.
func EscapeInline(s string) string {
	s = Escape(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\x0a`, "\t", `\x09`).Replace(s)
}

// clean reports whether s needs no escape.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return cleanFrom(s, i)
		}
	}
	return true
}

func cleanFrom(s string, i int) bool {
	for _, r := range s[i:] {
		if mustEscape(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// mustEscape reports the runes written as escapes.
func mustEscape(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1, including CSI
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true // bidi controls
	}
	return false
}

// escapeTo writes s escaped to b.
func escapeTo(b *strings.Builder, s string) {
	escapePrefix(b, s, false)
}

// escapePrefix writes s escaped to b and returns the number of bytes of s
// it consumed, which is less than len(s) only when partial is set and s
// ends in the first bytes of a UTF-8 sequence.
func escapePrefix(b *strings.Builder, s string, partial bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if mustEscape(rune(c)) {
				fmt.Fprintf(b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			if partial && !utf8.FullRuneInString(s[i:]) {
				return i // the rest of the sequence comes with the next write
			}
			fmt.Fprintf(b, `\x%02x`, c)
			i++
			continue
		}
		if mustEscape(r) {
			fmt.Fprintf(b, `\u%04x`, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return len(s)
}

// escaper is the writer Set.Run gives commands.
type escaper struct {
	w     io.Writer
	carry []byte // the start of a UTF-8 sequence split across writes
	// err is the first write error. Later writes fail with it and write
	// nothing, so that output cut short is not continued with later lines,
	// and Set.Run reports it: most text output is written with
	// fmt.Fprintf, whose errors the commands do not look at.
	err error
	n   int64 // bytes written below
}

// Write escapes p and writes it; it reports len(p) when all of it was
// written (or kept for the next call, for a split UTF-8 sequence).
func (e *escaper) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	s := string(p)
	if len(e.carry) > 0 {
		s = string(e.carry) + s
		e.carry = e.carry[:0]
	}
	if clean(s) && utf8.ValidString(s) {
		if err := e.write(s); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	var b strings.Builder
	n := escapePrefix(&b, s, true)
	e.carry = append(e.carry, s[n:]...)
	if err := e.write(b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// write writes s below and keeps the first error.
func (e *escaper) write(s string) error {
	if e.err != nil {
		return e.err
	}
	n, err := io.WriteString(e.w, s)
	e.n += int64(n)
	e.err = err
	return e.err
}

// flush writes a UTF-8 sequence left incomplete by the last write, escaped.
func (e *escaper) flush() error {
	if len(e.carry) == 0 {
		return nil
	}
	var b strings.Builder
	escapeTo(&b, string(e.carry))
	e.carry = e.carry[:0]
	return e.write(b.String())
}

// Raw returns the writer under a command's escaping writer, for output the
// command builds itself from escaped parts (a progress bar on a terminal,
// which moves the cursor), or w itself.
func Raw(w io.Writer) io.Writer {
	if e, ok := w.(*escaper); ok {
		return e.w
	}
	return w
}

// escaping wraps w unless it already escapes.
func escaping(w io.Writer) *escaper {
	if e, ok := w.(*escaper); ok {
		return e
	}
	return &escaper{w: w}
}
