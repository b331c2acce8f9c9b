package formats_test

import (
	"encoding/binary"
	"fmt"
	"log"

	"github.com/gquant/gquant/formats"
)

// Look a type up by its name, as llama-quantize spells it in any case, and
// size its rows.
func ExampleParseType() {
	t, err := formats.ParseType("Q4_K")
	if err != nil {
		log.Fatal(err)
	}
	rs, err := t.RowSize(4096)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t, t.BlockSize(), "weights per block,", rs, "bytes per row of 4096,", t.BitsPerWeight(4096), "bits per weight")
	// Output: q4_K 256 weights per block, 2304 bytes per row of 4096, 4.5 bits per weight
}

// Ids come from files: an unknown one prints as a number and has no
// descriptor, and its accessors return zero values instead of panicking.
func ExampleType_Info() {
	for _, t := range []formats.Type{formats.IQ2_XXS, formats.Type(250)} {
		info, ok := t.Info()
		fmt.Println(t, ok, info.NeedsImatrix, t.BlockSize())
	}
	// Output:
	// iq2_xxs true true 256
	// type(250) false false 0
}

// Convert a row of a bf16 model to f16 in one pass; the magnitude says
// whether any value might not fit (65504 is the largest finite half).
func ExampleBF16RowToFP16Magnitude() {
	values := []float32{1, -0.5, 3.140625, 70000}
	src := make([]byte, 2*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint16(src[2*i:], formats.FP32ToBF16(v))
	}
	dst := make([]byte, len(src))
	m := formats.BF16RowToFP16Magnitude(dst, src)
	for i := range values {
		fmt.Print(formats.FP16ToFP32(binary.LittleEndian.Uint16(dst[2*i:])), " ")
	}
	fmt.Println(formats.BF16ToFP32(m))
	// Output: 1 -0.5 3.140625 +Inf 70144
}
