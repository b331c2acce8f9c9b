package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// FuzzParseBudgets: any input either parses to non-negative budgets or
// fails with ErrBadBudget; nothing panics.
func FuzzParseBudgets(f *testing.F) {
	for _, s := range []string{"CPU=240GiB,GPU=23.5GiB", "GPU=24G", "=", ",,", "a=1.5.5KB", "x=99999999999999999999TiB", "CPU= 1 kib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := ParseBudgets(s)
		if err != nil {
			if !errors.Is(err, ErrBadBudget) {
				t.Fatalf("%q: error %v does not wrap ErrBadBudget", s, err)
			}
			return
		}
		for _, b := range bs {
			if b.Bytes < 0 || b.Device == "" {
				t.Fatalf("%q: bad budget %+v", s, b)
			}
		}
	})
}

// FuzzPlacement: any --place value either adds rules that can be matched
// or fails with a *PlaceError.
func FuzzPlacement(f *testing.F) {
	for _, s := range []string{"exps=CPU,.*=GPU", `blk\.(?=1)=CUDA0`, "a=b=c", "=", "(=CPU", "x=CPU,x=GPU"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := &Placement{}
		if err := p.AddFlag(s); err != nil {
			var pe *PlaceError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v is not a *PlaceError", s, err)
			}
			return
		}
		_, _, _, _ = p.assign(placementNames, make([]int64, len(placementNames)), nil)
	})
}

// fuzzPlanModel writes a small header-only model whose block count has the
// GGUF type kind picks (a str block count made the type choice panic).
func fuzzPlanModel(t *testing.T, arch string, kind byte, n int64, layers int) (*gguf.Model, error) {
	var count gguf.Value
	switch kind % 6 {
	case 0:
		count = gguf.Uint32Value(uint32(n))
	case 1:
		count = gguf.StringValue(strconv.FormatInt(n, 10))
	case 2:
		count = gguf.ArrayValue([]int32{int32(n)})
	case 3:
		count = gguf.Int64Value(n)
	case 4:
		count = gguf.Float32Value(float32(n))
	default:
		count = gguf.ArrayValue([]string{"x"})
	}
	md := gguf.Metadata{{Key: "general.architecture", Value: gguf.StringValue(arch)}, {Key: arch + ".block_count", Value: count}}
	ts := []gguf.TensorInfo{{Name: "token_embd.weight", Shape: []int64{256, 16}, Type: formats.BF16}}
	for l := 0; l < layers; l++ {
		for _, name := range []string{"attn_v", "attn_output", "ffn_down_exps", "ffn_up_shexp"} {
			shape := []int64{256, 16}
			if strings.HasSuffix(name, "exps") {
				shape = append(shape, 4)
			}
			ts = append(ts, gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.%s.weight", l, name), Shape: shape, Type: formats.BF16})
		}
	}
	ts = append(ts, gguf.TensorInfo{Name: "output.weight", Shape: []int64{256, 16}, Type: formats.BF16})
	path := filepath.Join(t.TempDir(), "m.gguf")
	w, err := gguf.Create(path, md, ts, nil)
	if err != nil {
		return nil, err
	}
	if err := w.SkipRemaining(); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return gguf.Open(path)
}

// FuzzPlan runs the whole plan path (rules, model parameters, type choice,
// layout, rule analysis, placement, budgets, text and JSON reports) on
// fuzzed rules, placements, budgets, file types and model keys: nothing
// may panic, and a rule or placement search is never longer than its limit.
func FuzzPlan(f *testing.F) {
	f.Add(`exps=q4_K,attn=q8_0`, `exps=CPU,.*=GPU`, "CPU=1GiB,GPU=1MiB", uint8(0), uint8(2), byte(0), int64(2), "deepseek2")
	f.Add(`(.*.*)*X=q8_0`, `(.*.*)*X=CPU`, "", uint8(3), uint8(1), byte(1), int64(3), "deepseek2")
	f.Add(``, `.*=GPU,exps=CPU`, "GPU=0", uint8(7), uint8(0), byte(2), int64(-1), "llama")
	f.Add(`output\.weight=iq4_nl_r4`, ``, "x", uint8(11), uint8(3), byte(5), int64(1<<40), "qwen3moe")
	names := recipes.FileTypeNames()
	f.Fuzz(func(t *testing.T, customQ, place, budgets string, ft, layers, kind byte, n int64, arch string) {
		ftype, copyOnly, err := recipes.ParseFileType(names[int(ft)%len(names)])
		if err != nil {
			t.Fatal(err)
		}
		sel := recipes.Options{FileType: ftype, CopyOnly: copyOnly, IgnoreImatrixRules: true, RuleBudget: time.Second}
		if customQ != "" {
			if rs, err := recipes.ParseCustomQ(customQ); err == nil {
				rs.SetMatchTimeout(10 * time.Millisecond)
				sel.Rules = rs
			}
		}
		var opts Options
		if place != "" {
			p := &Placement{}
			if p.AddFlag(place) == nil {
				p.setMatchTimeout(10 * time.Millisecond)
				opts.Placement = p
			}
		}
		if bs, err := ParseBudgets(budgets); err == nil {
			opts.Budgets = bs
		}
		in, err := fuzzPlanModel(t, arch, kind, n, int(layers%4))
		if err != nil {
			return
		}
		defer in.Close()
		plan, err := pipeline.Build(in, pipeline.Config{Selection: sel, Output: filepath.Join(t.TempDir(), "out.gguf")})
		if err != nil {
			return
		}
		rep, err := New(in, plan, opts)
		if err != nil {
			return
		}
		if err := rep.WriteText(io.Discard, TextOptions{Tensors: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
	})
}
