package fit

import (
	"errors"
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
