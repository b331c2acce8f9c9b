package fit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gquant/gquant/recipes"
)

// A --custom-q pin on one member of a --tie group binds the group: the
// free members take the pinned type (measured even where it is no
// candidate), or the fit refuses, naming the tie and the pins. The tie
// was dropped: the pinned tensor was left out of the grouping and its
// partner fitted freely (q8_0 gate, iq4_ks up).
func TestTieBindsPin(t *testing.T) {
	in := openTiny(t)
	cases := []struct {
		name, pins string
		want       map[int]string // layer: the type gate and up must share
		err        string
	}{
		{"pin in the types", `blk\.2\.ffn_gate_exps=q8_0`, map[int]string{2: "q8_0"}, ""},
		{"pin not a candidate", `blk\.1\.ffn_up_exps=q4_0`, map[int]string{1: "q4_0"}, ""},
		{"both pinned alike", `blk\.2\.ffn_(gate|up)_exps=q6_0`, map[int]string{2: "q6_0"}, ""},
		{"pins disagree", `blk\.2\.ffn_gate_exps=q8_0,blk\.2\.ffn_up_exps=q6_0`, nil, "pins them to different types"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := tinyOptions(in)
			opts.Placement = mustPlacement(t, "exps=CPU", ".*=GPU")
			opts.Budgets = mustBudgets(t, "CPU=3MiB,GPU=2MiB")
			opts.Ties = [][]string{{"ffn_gate_exps", "ffn_up_exps"}}
			pins, err := recipes.ParseCustomQ(c.pins)
			if err != nil {
				t.Fatal(err)
			}
			opts.Pins = pins
			res, err := Fit(in, opts)
			if c.err != "" {
				if !errors.Is(err, ErrTie) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want a tie error saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]Choice{}
			for _, ch := range res.Tensors {
				byName[ch.Name] = ch
			}
			for l := 1; l <= 2; l++ {
				g, u := byName[fmt.Sprintf("blk.%d.ffn_gate_exps.weight", l)], byName[fmt.Sprintf("blk.%d.ffn_up_exps.weight", l)]
				if g.Type != u.Type || g.Tie == 0 || g.Tie != u.Tie {
					t.Errorf("layer %d: tied gate %s (tie %d) and up %s (tie %d)", l, g.Type, g.Tie, u.Type, u.Tie)
				}
				if w := c.want[l]; w != "" && g.Type != w {
					t.Errorf("layer %d: tied pair is %s, want the pinned %s", l, g.Type, w)
				}
			}
			planRecipe(t, in, res, opts.Imatrix, opts.Placement)
		})
	}
}
