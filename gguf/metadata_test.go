package gguf

import (
	"errors"
	"strings"
	"testing"
)

// Every typed metadata read returns an error naming the key, the type
// wanted and the type found, never a panic or a silent zero (issue 16,
// item 1).
func TestTypedLookups(t *testing.T) {
	md := Metadata{
		{"s", StringValue("3")},
		{"i", Int32Value(-2)},
		{"u", Uint64Value(1 << 63)},
		{"f", Float32Value(1.5)},
		{"a", ArrayValue([]int32{7, 8})},
		{"as", ArrayValue([]string{"x"})},
		{"aa", ArrayValue([]Value{ArrayValue([]int32{1})})},
		{"e", ArrayValue([]uint8{})},
		{"ab", ArrayValue([]bool{true, false})},
	}
	type result struct {
		n       int64
		present bool
		err     string // substring of the error, "" for none
	}
	for _, tc := range []struct {
		name string
		got  func() (int64, bool, error)
		want result
	}{
		{"int of str", func() (int64, bool, error) { return md.LookupInt("s") }, result{0, true, `s is str "3", want an integer`}},
		{"int of i32", func() (int64, bool, error) { return md.LookupInt("i") }, result{-2, true, ""}},
		{"int of huge u64", func() (int64, bool, error) { return md.LookupInt("u") }, result{0, true, "u is u64"}},
		{"int absent", func() (int64, bool, error) { return md.LookupInt("nope") }, result{0, false, ""}},
		{"uint of negative", func() (int64, bool, error) { n, p, err := md.LookupUint("i"); return int64(n), p, err }, result{0, true, "want a non-negative integer"}},
		{"uint of f32", func() (int64, bool, error) { n, p, err := md.LookupUint("f"); return int64(n), p, err }, result{0, true, "f is f32 1.5"}},
		{"per-layer array", func() (int64, bool, error) { return md.LookupIntOrFirst("a", 0) }, result{7, true, ""}},
		{"per-layer scalar", func() (int64, bool, error) { return md.LookupIntOrFirst("i", 0) }, result{-2, true, ""}},
		{"per-layer str", func() (int64, bool, error) { return md.LookupIntOrFirst("s", 0) }, result{0, true, "s is str"}},
		{"per-layer bools", func() (int64, bool, error) { return md.LookupIntOrFirst("ab", 0) }, result{1, true, ""}},
		{"per-layer bools, layer 1", func() (int64, bool, error) { return md.LookupIntOrFirst("ab", 1) }, result{0, true, ""}},
		{"per-layer strings", func() (int64, bool, error) { return md.LookupIntOrFirst("as", 0) }, result{0, true, "as is array of str"}},
		{"per-layer arrays", func() (int64, bool, error) { return md.LookupIntOrFirst("aa", 0) }, result{0, true, "aa is array of arr"}},
		{"per-layer empty", func() (int64, bool, error) { return md.LookupIntOrFirst("e", 0) }, result{0, false, ""}},
		{"array len of str", func() (int64, bool, error) { n, p, err := md.LookupArrayLen("s"); return int64(n), p, err }, result{0, true, "want an array"}},
		{"array len", func() (int64, bool, error) { n, p, err := md.LookupArrayLen("a"); return int64(n), p, err }, result{2, true, ""}},
		{"text of int", func() (int64, bool, error) { _, p, err := md.LookupText("i"); return 0, p, err }, result{0, true, "i is i32 -2, want str"}},
		{"strings of ints", func() (int64, bool, error) { _, p, err := md.LookupStrings("a"); return 0, p, err }, result{0, true, "want an array of str"}},
	} {
		n, present, err := tc.got()
		if n != tc.want.n || present != tc.want.present {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, n, present, tc.want.n, tc.want.present)
		}
		switch {
		case tc.want.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want.err != "" && (err == nil || !strings.Contains(err.Error(), tc.want.err) || !errors.Is(err, ErrKeyType)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want.err)
		}
	}
}
