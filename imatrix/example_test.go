package imatrix_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/gquant/gquant/imatrix"
)

// Write an importance matrix in llama.cpp's legacy .dat layout, read it
// back, and find the entry the quantizer uses for a tensor: ffn_gate takes
// ffn_up's data when it has none of its own, as in the reference.
func ExampleReadDat() {
	m := &imatrix.Matrix{Chunks: 10, Datasets: []string{"calibration.txt"}, Entries: []imatrix.Entry{
		{Name: "blk.0.ffn_up.weight", Sums: []float32{20, 40, 60, 80}, Counts: []float64{10}},
	}}
	var buf bytes.Buffer
	if err := imatrix.WriteDat(&buf, m); err != nil {
		log.Fatal(err)
	}
	back, err := imatrix.ReadDat(&buf, int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	e, from, ok := back.Find("blk.0.ffn_gate.weight")
	fmt.Println(ok, from, e.Mean(), back.Chunks, back.Datasets)
	// Output: true blk.0.ffn_up.weight [2 4 6 8] 10 [calibration.txt]
}
