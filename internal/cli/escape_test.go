package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Control characters from files never reach the terminal (issue 16, item
// 13): they are written as visible escapes; text, tabs, newlines and
// ordinary Unicode are written as they are.
func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"blk.0.attn_q.weight", "blk.0.attn_q.weight"},
		{"a\tb\nc", "a\tb\nc"},
		{"▁▂█ × ✓ é 模型", "▁▂█ × ✓ é 模型"},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"bell\a back\b cr\r del\x7f nul\x00", `bell\x07 back\x08 cr\x0d del\x7f nul\x00`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u202c \u2066x\u2069", `bidi \u202eevil\u202c \u2066x\u2069`},
		{"bad \xff\xfe utf8 \xe2\x82", `bad \xff\xfe utf8 \xe2\x82`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var b bytes.Buffer
		w := escaping(&b)
		// Byte by byte: UTF-8 sequences split across writes stay whole.
		for i := 0; i < len(tc.in); i++ {
			if n, err := w.Write([]byte{tc.in[i]}); n != 1 || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		w.flush()
		if b.String() != tc.want {
			t.Errorf("writer, byte by byte: %q, want %q", b.String(), tc.want)
		}
	}
}

// Set.Run gives commands escaping writers; Raw reaches the one below.
func TestRunEscapes(t *testing.T) {
	var s Set
	s.Program = "prog"
	var raw io.Writer
	s.Register(&Command{Name: "say", Run: func(args []string, stdout, stderr io.Writer) int {
		io.WriteString(stdout, args[0])
		io.WriteString(stderr, "error: "+args[0])
		raw = Raw(stdout)
		return 0
	}})
	var out, errOut bytes.Buffer
	s.Run([]string{"say", "x\x1b]0;title\x07y"}, &out, &errOut)
	for _, got := range []string{out.String(), errOut.String()} {
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("control characters written: %q", got)
		}
	}
	if raw != &out {
		t.Error("Raw does not give the writer below")
	}
}

// EscapeInline escapes newlines and tabs as well, in the form Escape gives
// the other control characters.
func TestEscapeInline(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"blk.0.attn_q.weight", "blk.0.attn_q.weight"},
		{"a\tb\nc", `a\x09b\x0ac`},
		{"é\n\xff\x1b", `é\x0a\xff\x1b`},
	} {
		if got := EscapeInline(tc.in); got != tc.want {
			t.Errorf("EscapeInline(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
