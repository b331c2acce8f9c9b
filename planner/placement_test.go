package planner

import (
	"errors"
	"strings"
	"testing"
)

var placementNames = []string{
	"token_embd.weight",
	"blk.3.attn_output.weight",
	"blk.3.ffn_gate_exps.weight",
	"blk.3.ffn_down_exps.weight",
	"blk.3.ffn_up_shexp.weight",
	"blk.13.ffn_up_exps.weight",
	"output.weight",
}

func TestPlacementFirstMatchWins(t *testing.T) {
	p := &Placement{}
	// llama.cpp's -ot form: several rules in one value, searched anywhere
	// in the name with the ECMAScript grammar (\d, lookahead).
	if err := p.AddFlag(`blk\.3\.ffn_(?=up|down).*_exps=CUDA1,exps=CPU`); err != nil {
		t.Fatal(err)
	}
	if err := p.AddReader(strings.NewReader("# the rest\n\n^output\\.weight$=CUDA1\n.*=CUDA0\n"), "place.txt"); err != nil {
		t.Fatal(err)
	}
	bytes := []int64{1, 2, 4, 8, 16, 32, 64}
	device, by, uses, err := p.assign(placementNames, bytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CUDA0", "CUDA0", "CPU", "CUDA1", "CUDA0", "CPU", "CUDA1"}
	for i, name := range placementNames {
		if device[i] != want[i] {
			t.Errorf("%s on %s (rule %d), want %s", name, device[i], by[i]+1, want[i])
		}
	}
	wantUses := []struct {
		tensors, shadowed int
		bytes             int64
	}{{1, 0, 8}, {2, 1, 4 + 32}, {1, 0, 64}, {3, 4, 1 + 2 + 16}}
	for i, w := range wantUses {
		if u := uses[i]; u.Tensors != w.tensors || u.Shadowed != w.shadowed || u.Bytes != w.bytes {
			t.Errorf("rule %s: %d tensors %d bytes %d shadowed, want %+v", u.Rule, u.Tensors, u.Bytes, u.Shadowed, w)
		}
	}
	if got := strings.Join(p.Devices(), ","); got != "CUDA1,CPU,CUDA0" {
		t.Errorf("devices %s", got)
	}
	if w := p.Rules[2].Where(); w != "place.txt:3" {
		t.Errorf("file rule at %s, want place.txt:3", w)
	}
	if w := p.Rules[1].Where(); w != "--place item 2" {
		t.Errorf("flag rule at %s, want --place item 2", w)
	}
}

func TestPlacementErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"same regex, other device", []string{"exps=CPU", "exps=GPU"}, []string{"--place item 2", "contradicts --place item 1 exps=CPU"}},
		{"same regex twice", []string{"exps=CPU,exps=CPU"}, []string{"--place item 2", "repeats --place item 1"}},
		{"no =", []string{"exps"}, []string{"want regex=DEVICE"}},
		{"empty regex", []string{"=CPU"}, []string{"empty regex"}},
		{"no device", []string{"exps="}, []string{"no device"}},
		{"bad regex", []string{"exps=CPU", "ffn_(up=CPU"}, []string{"--place item 2", "invalid regex"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Placement{}
			var err error
			for _, f := range tc.flags {
				if err = p.AddFlag(f); err != nil {
					break
				}
			}
			var pe *PlaceError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBadPlacement) {
				t.Fatalf("got %v, want a *PlaceError wrapping ErrBadPlacement", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}

	// A rule whose every match is taken by earlier rules is an error; one
	// that matches nothing is only worth a warning (the report's).
	p := &Placement{}
	for _, f := range []string{"exps=CPU", "attn=CUDA0", "ffn_up_exps=CUDA0", "nothing_like_this=CPU"} {
		if err := p.AddFlag(f); err != nil {
			t.Fatal(err)
		}
	}
	_, _, _, err := p.assign(placementNames, make([]int64, len(placementNames)), nil)
	if err == nil || !strings.Contains(err.Error(), "--place item 3") || !strings.Contains(err.Error(), "already placed by --place item 1 exps=CPU") {
		t.Errorf("fully shadowed rule: %v", err)
	}
	p.Rules = append(p.Rules[:2], p.Rules[3])
	if _, _, uses, err := p.assign(placementNames, make([]int64, len(placementNames)), nil); err != nil || uses[2].Tensors != 0 {
		t.Errorf("unused rule: %v, %+v", err, uses)
	}
}
