package text

import "testing"

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"exps=CPU", 80, `"exps=CPU"`},
		{"a\x00b\n", 80, `"a\x00b\n"`},
		{"0123456789", 10, `"0123456789"`},
		{"0123456789x", 10, `"0123456789"... (11 bytes)`},
		{"GGUF\x03\x00\x00\x00" + string(make([]byte, 1000)), 6, `"GGUF\x03\x00"... (1008 bytes)`},
		{"ab模型", 4, `"ab"... (8 bytes)`}, // not inside a character
	} {
		if got := Quote(tc.in, tc.max); got != tc.want {
			t.Errorf("Quote(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.want)
		}
	}
}
