package main

import (
	"strings"
	"testing"
)

// FuzzParseOverrides: --override-kv KEY=TYPE:VALUE and the thread count,
// the command line's own parsers. An accepted override has the key and
// the value's type the text names; an accepted count is 0 or more.
func FuzzParseOverrides(f *testing.F) {
	for _, s := range []string{"general.name=str:x", "a.b=int:-2147483648", "k=float:1e39", "k=bool:true", "=int:1", "k=int", "k=str:" + strings.Repeat("v", 200), "12", "-1", " 8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if kvs, err := parseOverrides([]string{s}); err == nil {
			key, _, _ := strings.Cut(s, "=")
			if len(kvs) != 1 || kvs[0].Key != key || key == "" || len(key) >= 128 {
				t.Fatalf("%q: %+v", s, kvs)
			}
		}
		if n, err := parseThreads(s); err == nil && n < 0 {
			t.Fatalf("%q: %d threads", s, n)
		}
	})
}
