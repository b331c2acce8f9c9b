package imatrix

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Two .dat entries of one name are an error naming the entry (issue 16,
// item 11): the reference silently keeps the last one.
func TestReadDatDuplicateEntry(t *testing.T) {
	m := &Matrix{Entries: []Entry{
		{Name: "a.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "b.weight", Sums: []float32{1, 2}, Counts: []float64{1}},
		{Name: "a.weight", Sums: []float32{3, 4}, Counts: []float64{1}},
	}}
	var buf bytes.Buffer
	if err := WriteDat(&buf, m); err != nil {
		t.Fatal(err)
	}
	_, err := ReadDat(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `entry "a.weight" appears twice (entries 1 and 3)`) {
		t.Errorf("error %v, want one naming the entry", err)
	}
}
