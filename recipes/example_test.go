package recipes_test

import (
	"fmt"
	"log"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// Choose the type of every tensor of a small llama model for IQ4_KS, with
// one --custom-q rule on top of the built-in mixture.
func ExampleSelect() {
	ft, _, err := recipes.ParseFileType("IQ4_KS")
	if err != nil {
		log.Fatal(err)
	}
	rules, err := recipes.ParseCustomQ(`ffn_down=q6_K`)
	if err != nil {
		log.Fatal(err)
	}
	model := recipes.Model{Arch: "llama", NLayer: 1, NHead: 8, NHeadKV: 8, NVocab: 1000}
	var tensors []gguf.TensorInfo
	for _, name := range []string{"token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_v.weight", "blk.0.ffn_down.weight", "output.weight"} {
		shape := []int64{1024, 1024}
		if name == "blk.0.attn_norm.weight" {
			shape = shape[:1]
		}
		tensors = append(tensors, gguf.TensorInfo{Name: name, Shape: shape, Type: formats.BF16})
	}
	plan, err := recipes.Select(recipes.Options{FileType: ft, Rules: rules}, model, tensors)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range plan.Choices {
		fmt.Printf("%-22s %-6s %s\n", c.Name, c.Type, c.Reason)
	}
	// Output:
	// token_embd.weight      iq4_ks default
	// blk.0.attn_norm.weight bf16   copied
	// blk.0.attn_v.weight    iq4_ks default
	// blk.0.ffn_down.weight  q6_K   custom rule
	// output.weight          q6_K   built-in
}
