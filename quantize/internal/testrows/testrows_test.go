package testrows

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestRows(t *testing.T) {
	rows := FixtureRows()
	if len(rows)%16 != 0 {
		t.Errorf("%d fixture rows, not a multiple of 16", len(rows))
	}
	names := map[string]bool{}
	for _, r := range append(rows, PropertyRows(3, 40, 256)...) {
		for i, v := range r.X {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("row %q: value %d is %v", r.Name, i, v)
			}
		}
		names[r.Name] = true
	}
	if len(names) < len(Specials(256))+Kinds {
		t.Errorf("only %d distinct row names", len(names))
	}
	// The same seed gives the same rows.
	a, b := PropertyRows(5, 20, 256), PropertyRows(5, 20, 256)
	for i := range a {
		if !slices.Equal(Float32Bytes(a[i].X), Float32Bytes(b[i].X)) {
			t.Fatalf("row %d differs between two runs", i)
		}
	}
	for _, im := range Imatrices(FixtureCols) {
		if slices.Max(im.W) == 0 {
			t.Errorf("importance vector %s is all zero", im.Name)
		}
	}
}

func TestBF16(t *testing.T) {
	for _, tc := range []struct{ in, want float32 }{
		{1, 1},
		{math.Float32frombits(0x3f808000), 1}, // tie, to even
		{math.Float32frombits(0x3f818000), math.Float32frombits(0x3f820000)}, // tie, to even
		{math.Float32frombits(0x3f808001), math.Float32frombits(0x3f810000)},
		{-0.1, math.Float32frombits(0xbdcd0000)},
	} {
		if got := BF16(tc.in); got != tc.want {
			t.Errorf("BF16(%x) = %x, want %x", tc.in, got, tc.want)
		}
	}
}

func TestFixtureRoundTrip(t *testing.T) {
	f := &Fixture{Input: "0123456789abcdef", Cases: []FixtureCase{
		{"q4_0", "none", []string{"aa", "bb"}},
		{"q4_0_r8", "spread", []string{"cc"}},
	}}
	var buf bytes.Buffer
	if err := f.Write(&buf, "two lines\nof header"); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFixture(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g.Input != f.Input || len(g.Cases) != 2 || g.Cases[1].Type != "q4_0_r8" || !slices.Equal(g.Cases[0].Groups, f.Cases[0].Groups) {
		t.Errorf("read back %+v, want %+v", g, f)
	}
	if _, err := ReadFixture(bytes.NewBufferString("q4_0\tnone\n")); err == nil {
		t.Error("a fixture without an input line was accepted")
	}
	if _, err := ReadFixture(bytes.NewBufferString("input\tx\nq4_0 none aa\n")); err == nil {
		t.Error("a line without tabs was accepted")
	}
}
