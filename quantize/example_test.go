package quantize_test

import (
	"fmt"
	"log"
	"math"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

// Quantize two rows of 256 weights to q4_K, as one ggml_quantize_chunk call
// would, and read them back.
func ExampleQuantizeRows() {
	const rows, cols = 2, 256
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(math.Sin(float64(i) / 7))
	}
	q, err := quantize.QuantizeRows(formats.Q4_K, rows, cols, src, nil)
	if err != nil {
		log.Fatal(err)
	}
	back := make([]float32, len(src))
	if err := formats.DequantizeRows(formats.Q4_K, cols, q, back); err != nil {
		log.Fatal(err)
	}
	var worst float64
	for i := range src {
		worst = max(worst, math.Abs(float64(back[i]-src[i])))
	}
	fmt.Printf("%d bytes, largest error %.3f\n", len(q), worst)
	// Output: 288 bytes, largest error 0.076
}

// Quantize with one of llama-quantize's switches (--symmetric-q40). The
// options are a value: other callers keep the defaults at the same time.
func ExampleOptions_QuantizeRows() {
	src := make([]float32, 32)
	for i := range src {
		src[i] = float32(i) - 10
	}
	plain, _ := quantize.QuantizeRows(formats.Q4_0, 1, 32, src, nil)
	sym, err := quantize.Options{SymmetricQ40: true}.QuantizeRows(formats.Q4_0, 1, 32, src, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("default scale %v, symmetric scale %v\n",
		formats.FP16ToFP32(uint16(plain[0])|uint16(plain[1])<<8), formats.FP16ToFP32(uint16(sym[0])|uint16(sym[1])<<8))
	// Output: default scale -2.625, symmetric scale 3
}

// Quantize one q2_K call without importance data (ternary weights, as
// llama-quantize would make of a whole expert matrix) in two pieces: the
// call is scanned first, in two passes over its rows, and each piece is
// quantized with the scan's result. The bytes are those of one call.
func ExampleCallState() {
	const rows, cols = 8, 256
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = 0.02 * float32(i*7%3-1) // -0.02, 0, 0.02
	}
	src[len(src)-1] = 0.021 // the call's largest magnitude, in the second piece
	whole, err := quantize.QuantizeRows(formats.Q2_K, rows, cols, src, nil)
	if err != nil {
		log.Fatal(err)
	}
	c := quantize.NewCallState(formats.Q2_K, false)
	c.ScanMax(src)
	c.ScanSums(src[:4*cols]) // the second pass sees the rows in order
	c.ScanSums(src[4*cols:])
	half := len(whole) / 2
	first, second := make([]byte, half), make([]byte, half)
	for i, dst := range [][]byte{first, second} {
		if _, err := (quantize.Options{}).QuantizeRowsInCall(dst, formats.Q2_K, rows/2, cols, src[i*4*cols:(i+1)*4*cols], nil, c); err != nil {
			log.Fatal(err)
		}
	}
	alone, _ := quantize.QuantizeRows(formats.Q2_K, rows/2, cols, src[:4*cols], nil)
	fmt.Println("ternary:", c.Matters())
	fmt.Println("pieces equal the call:", string(first)+string(second) == string(whole))
	fmt.Println("first piece alone equals it:", string(alone) == string(whole[:half]))
	// Output:
	// ternary: true
	// pieces equal the call: true
	// first piece alone equals it: false
}
