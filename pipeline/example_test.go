package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// Quantize a bf16 model to Q4_K_M, as llama-quantize IN OUT Q4_K_M does:
// choose every tensor's type, plan the output's exact size, then stream it.
func Example() {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	ft, _, err := recipes.ParseFileType("Q4_K_M")
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := pipeline.Config{Selection: recipes.Options{FileType: ft}, Output: filepath.Join(dir, "out.gguf")}
	plan, err := pipeline.Build(in, cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), in, plan.Outputs, pipeline.Options{}); err != nil {
		log.Fatal(err)
	}
	st, err := os.Stat(cfg.Output)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range plan.Tensors[6:10] {
		fmt.Printf("%-26s %-5s %s\n", t.Name, t.Type, t.Reason)
	}
	fmt.Println(len(plan.Tensors), "tensors,", plan.Total(), "bytes planned,", st.Size(), "written")
	// Output:
	// blk.0.attn_kv_a_mqa.weight q8_0  built-in
	// blk.0.attn_kv_b.weight     q8_0  built-in
	// blk.0.attn_k_b.weight      q8_0  built-in
	// blk.0.attn_v_b.weight      q4_K  default
	// 55 tensors, 3029088 bytes planned, 3029088 written
}
