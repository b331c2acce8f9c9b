package fit

import (
	"errors"
	"strings"
	"testing"

	"github.com/gquant/gquant/recipes"
)

// checkRowBytes takes a table row whose size is this model's plan plus up
// to the input's header size and room for quantize's keys, and refuses
// other sizes (another model's table): the slack grows with the header, as
// a small model with a large vocabulary has a header of many percent.
func TestCheckRowBytes(t *testing.T) {
	in := openTiny(t)
	m, err := describe(in)
	if err != nil {
		t.Fatal(err)
	}
	ft, _, _ := recipes.ParseFileType("Q8_0")
	plan, err := m.selectAll(ft, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var data int64
	for _, c := range plan.Choices {
		n, err := c.Type.TensorSize(c.Shape)
		if err != nil {
			t.Fatal(err)
		}
		data += n
	}
	for _, tc := range []struct {
		header, extra int64
		ok            bool
	}{
		{5000, 5000, true},
		{5000, 60 << 10, true},
		{5000, 200 << 10, false},     // another model
		{300 << 10, 290 << 10, true}, // a large header
		{0, -1, false},               // smaller than its tensor data
	} {
		row := KLDRow{Mix: "filetype:Q8_0", FileType: ft, Bytes: data + tc.extra}
		err := checkRowBytes(m, false, tc.header, row)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrOtherModel) {
			t.Errorf("header %d, %d bytes past the data: %v, want ok %v", tc.header, tc.extra, err, tc.ok)
		}
	}
}

// The header of a KLD table is optional: a first line that reads as a row
// is a row. The first line was skipped unread, so a table without its
// header lost its first measurement silently (and one of one row "had no
// rows"). A first line that looks like a row but does not parse is an
// error, not a header.
func TestReadKLDHeader(t *testing.T) {
	const (
		head = "mix\trules\tbytes\tkld_mean\tkld_err\n"
		r1   = "filetype:Q4_K_M\t-\t100\t0.04\t0.001\n"
		r2   = "q8_0+attn\tattn=iq2_ks\t200\t0.3\t0.002\n"
	)
	cases := []struct {
		name, tsv string
		rows      int    // 0: an error
		err       string // in the error
	}{
		{"header", head + r1 + r2, 2, ""},
		{"no header", r1 + r2, 2, ""},
		{"one row, no header", r1, 1, ""},
		{"comment, then header", "# measured on x\n" + head + r1, 1, ""},
		{"blank line, then header", "\n" + head + r1 + r2, 2, ""},
		{"any header word", "h\n" + r1, 1, ""},
		{"bad first row", "filetype:Q4_K_M\t-\t100\tx\t0.001\n" + r2, 0, "k.tsv:1: kld_mean"},
		{"header only", head, 0, "has no rows"},
		{"COPY said <nil>", "filetype:COPY\t-\t100\t0.04\t0.001\n", 0, "only copies"},
	}
	for _, c := range cases {
		rows, err := ReadKLD(strings.NewReader(c.tsv), "k.tsv")
		switch {
		case c.rows > 0 && (err != nil || len(rows) != c.rows):
			t.Errorf("%s: %d rows, %v; want %d rows", c.name, len(rows), err, c.rows)
		case c.rows == 0 && (!errors.Is(err, ErrBadKLD) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want ErrBadKLD saying %q", c.name, err, c.err)
		}
	}
}
