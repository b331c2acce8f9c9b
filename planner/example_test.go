package planner_test

import (
	"fmt"
	"log"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/planner"
	"github.com/gquant/gquant/recipes"
)

// Plan a Q4_K_M run from the headers only, with the expert tensors on the
// CPU and everything else on a GPU of 2 MiB, and check the budgets before
// any weight is read.
func ExampleNew() {
	in, err := gguf.Open("../testdata/tiny-deepseek2-bf16.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	ft, _, err := recipes.ParseFileType("Q4_K_M")
	if err != nil {
		log.Fatal(err)
	}
	plan, err := pipeline.Build(in, pipeline.Config{Selection: recipes.Options{FileType: ft}, Output: "out.gguf"})
	if err != nil {
		log.Fatal(err)
	}
	var place planner.Placement
	for _, rule := range []string{"exps=CPU", ".*=GPU"} {
		if err := place.AddFlag(rule); err != nil {
			log.Fatal(err)
		}
	}
	budgets, err := planner.ParseBudgets("GPU=2MiB")
	if err != nil {
		log.Fatal(err)
	}
	r, err := planner.New(in, plan, planner.Options{Placement: &place, Budgets: budgets})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range r.Devices {
		fmt.Println(d.Device, d.Tensors, "tensors", d.Bytes, "bytes")
	}
	fmt.Printf("%d bytes, %.2f bits per weight, fits: %v\n", r.Total.Bytes, r.Total.BPW, r.Fits())
	// Output:
	// CPU 6 tensors 952320 bytes
	// GPU 49 tensors 2072096 bytes
	// 3029088 bytes, 5.57 bits per weight, fits: true
}
