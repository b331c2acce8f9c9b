package fit

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/recipes"
)

// tieGroups finds the groups of tied tensors: quantized tensors (free or
// pinned) whose names differ only in a fragment of one --tie value, two
// or more to a group, in the order their first members come. used says
// for each --tie value whether it formed a group.
func tieGroups(ts []Tensor, ties [][]string) (groups [][]int, used []bool) {
	byKey := map[string][]int{}
	var order []string
	owner := map[string]int{}
	for i := range ts {
		t := &ts[i]
		if !t.Quantized {
			continue
		}
	sets:
		for s, frags := range ties {
			for _, f := range frags {
				if f != "" && strings.Contains(t.Name, f) {
					key := fmt.Sprintf("%d\x00%s", s, strings.Replace(t.Name, f, "\x00", 1))
					if byKey[key] == nil {
						order = append(order, key)
						owner[key] = s
					}
					byKey[key] = append(byKey[key], i)
					break sets
				}
			}
		}
	}
	used = make([]bool, len(ties))
	for _, key := range order {
		if ms := byKey[key]; len(ms) >= 2 {
			groups = append(groups, ms)
			used[owner[key]] = true
		}
	}
	return groups, used
}

// bindTies checks the ties before anything is measured: the tensors of a
// group are on one device, and a group with a member a --custom-q rule
// pins takes the pinned type: its free members get that type as their only
// candidate (the tie binds them to the pin). It warns of a --tie value
// that ties nothing.
func bindTies(m model, hasData []bool, ts []Tensor, opts Options) ([]string, error) {
	groups, used := tieGroups(ts, opts.Ties)
	var warnings []string
	for s, u := range used {
		if !u {
			warnings = append(warnings, fmt.Sprintf("--tie %s ties nothing: no two quantized tensors differ only in these fragments (a tensor joins the first fragment its name contains)", strings.Join(opts.Ties[s], ",")))
		}
	}
	hasIm := false
	for _, h := range hasData {
		hasIm = hasIm || h
	}
	for _, ms := range groups {
		first := &ts[ms[0]]
		for _, j := range ms[1:] {
			if ts[j].Device != first.Device {
				return warnings, fmt.Errorf("%w: %s is on %s but %s, tied to it, on %s", ErrTie, first.Name, first.Device, ts[j].Name, ts[j].Device)
			}
		}
		var pin *Tensor
		for _, j := range ms {
			t := &ts[j]
			if t.Pin == nil {
				continue
			}
			if pin == nil {
				pin = t
			} else if t.Cands[0].Type != pin.Cands[0].Type {
				return warnings, fmt.Errorf("%w: %s and %s are tied, but --custom-q pins them to different types: %s by %s, %s by %s",
					ErrTie, pin.Name, t.Name, pin.Cands[0].Type, pin.Pin, t.Cands[0].Type, t.Pin)
			}
		}
		if pin == nil {
			continue
		}
		typ := pin.Cands[0].Type
		var plan *recipes.Plan // what each tensor takes under a rule giving typ, computed once
		for _, j := range ms {
			t := &ts[j]
			if t.Fixed() {
				continue
			}
			why := fmt.Sprintf("%s is tied to %s, which %s pins to %s", t.Name, pin.Name, pin.Pin, typ)
			if k := candIndex(t.Cands, typ); k >= 0 {
				t.Cands = []Candidate{t.Cands[k]}
				t.TiedPin = pin.Pin
				continue
			}
			if plan == nil {
				p, err := m.selectAll(recipes.FileTypeQ8_0, withRule(opts.Pins, typ), hasIm)
				if err != nil {
					return warnings, fmt.Errorf("%w: %s: %w", ErrTie, why, err)
				}
				plan = p
			}
			c := plan.Choices[t.Index]
			eff := c.Type
			bytes, err := eff.TensorSize(t.Shape)
			switch {
			case eff != typ:
				return warnings, fmt.Errorf("%w: %s, but %s cannot take %s (its rows make it %s); pin both, or drop the tie", ErrTie, why, t.Name, typ, eff)
			case err != nil:
				return warnings, fmt.Errorf("%w: %s, but %s cannot take %s: %w", ErrTie, why, t.Name, typ, err)
			case eff.IsInterleaved() && !isCPU(t.Device):
				return warnings, fmt.Errorf("%w: %s, but %s is on %s, which does not run row-interleaved types", ErrTie, why, t.Name, t.Device)
			case (hasData == nil || !hasData[t.Index]) && (c.NeedsImatrix || eff.Known() && mustNeedsImatrix(eff)):
				return warnings, fmt.Errorf("%w: %s, but %s has no importance data, which %s needs", ErrTie, why, t.Name, typ)
			case !exact(t.Source, eff) && !quantize.Supported(measureType(eff)):
				return warnings, fmt.Errorf("%w: %s, but gquant cannot measure %s as %s", ErrTie, why, t.Name, typ)
			}
			t.Cands = []Candidate{{Type: eff, Bytes: bytes}}
			t.TiedPin = pin.Pin
		}
	}
	return warnings, nil
}
