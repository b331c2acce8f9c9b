package fit

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/internal/bytesize"
	"github.com/gquant/gquant/internal/stdregex"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/planner"
	"github.com/gquant/gquant/recipes"
)

// GiB is the step of the "what more bytes would buy" report.
const GiB = 1 << 30

// Options are what Fit is asked.
type Options struct {
	// Imatrix is the importance matrix the quantize run will use (nil for
	// none), already filtered as the run will filter it; ImatrixPath is its
	// file as the run will name it (recorded in the output's metadata, so
	// it counts in the file size).
	Imatrix     *imatrix.Matrix
	ImatrixPath string
	// Placement puts tensors on devices. Without it every tensor goes to
	// the one device of the one budget.
	Placement *planner.Placement
	// Budgets are the bytes each device may hold; a placed device without
	// one gets every tensor at its best type.
	Budgets []planner.Budget
	// Reserves are taken from the budgets before the weights.
	Reserves []Reserve
	// Types are the candidate types (nil: DefaultTypes).
	Types []formats.Type
	// Pins are --custom-q rules kept as given: the tensors they match get
	// their type, and the recipe starts with them.
	Pins *recipes.RuleSet
	// Ties are --tie values: name fragments (ffn_gate_exps,ffn_up_exps)
	// whose tensors that differ only in the fragment get one type.
	Ties [][]string
	// Gains turn errors into loss (zero value: DefaultGains).
	Gains *Gains
	// Measure adjusts the measurements.
	Measure MeasureOptions
	// MoreBytes is the step of the what-if report per device (default 1 GiB).
	MoreBytes int64
	// Warn, when set, receives each warning known before the measuring
	// (a --tie that ties nothing, a pin that decides no tensor) as soon
	// as the checks find it, minutes before the result; Result.Warnings
	// holds them too, first.
	Warn func(string)
}

// Choice is the fitted type of one tensor.
type Choice struct {
	Name   string  `json:"name"`
	Device string  `json:"device"`
	Class  string  `json:"class"`
	Layer  int     `json:"layer"`
	Type   string  `json:"type"`
	Bytes  int64   `json:"bytes"`
	Err    float64 `json:"rel_error"`
	Loss   float64 `json:"loss"`
	Fixed  string  `json:"fixed,omitempty"` // "copied" or "pinned"
	Tie    int     `json:"tie,omitempty"`   // tie group, from 1
	// Options lists the candidates with their bytes and loss, fewest bytes
	// first.
	Options []Option `json:"options,omitempty"`
}

// Option is one candidate of a tensor, for reports.
type Option struct {
	Type  string  `json:"type"`
	Bytes int64   `json:"bytes"`
	Err   float64 `json:"rel_error"`
	SE    float64 `json:"rel_error_se"`
	Loss  float64 `json:"loss"`
}

// Device is what one device gets.
type Device struct {
	Device     string    `json:"device"`
	BudgetText string    `json:"budget,omitempty"` // as given
	Budget     int64     `json:"budget_bytes,omitempty"`
	Reserves   []Reserve `json:"reserves,omitempty"`
	Available  int64     `json:"available_bytes,omitempty"` // budget minus reserves
	Bytes      int64     `json:"bytes"`                     // tensor bytes it holds, as the planner counts them
	Tensors    int       `json:"tensors"`
	Loss       float64   `json:"loss"`
	// Use is Bytes / Available (0 without a budget).
	Use  float64 `json:"use,omitempty"`
	More *WhatIf `json:"more,omitempty"`
}

// WhatIf is what more bytes on a device would buy.
type WhatIf struct {
	Bytes   int64    `json:"extra_bytes"`
	Loss    float64  `json:"loss"`    // the device's loss with them
	KLD     float64  `json:"kld"`     // the model's predicted divergence with them
	Changes []Change `json:"changes"` // largest loss saved first
	Binding bool     `json:"binding"` // false: the budget did not bind, nothing changes
}

// Change is one tensor's type in a what-if.
type Change struct {
	Name string  `json:"name"`
	From string  `json:"from"`
	To   string  `json:"to"`
	Gain float64 `json:"loss_saved"`
}

// Result is a fitted recipe and how it was found.
type Result struct {
	Model    string        `json:"model"`
	Loss     float64       `json:"loss"`
	KLD      float64       `json:"predicted_kld"`
	Devices  []Device      `json:"devices"`
	Tensors  []Choice      `json:"tensors"`
	Rules    []Rule        `json:"rules"`
	FileType string        `json:"file_type"` // the file type to pass with the recipe
	FileSize int64         `json:"file_bytes"`
	Gains    Gains         `json:"gains"`
	Measured MeasureReport `json:"measured"`
	Warnings []string      `json:"warnings,omitempty"`
	// Mainline is true when every type the recipe uses is one mainline
	// llama.cpp knows; MainlineFileType is then the file type to give it:
	// one whose default type no rule uses (some llama.cpp versions ignore a
	// --tensor-type rule whose type is the file type's default and let the
	// built-in mixture decide the tensor).
	Mainline         bool   `json:"mainline"`
	MainlineFileType string `json:"mainline_file_type,omitempty"`
}

// Sentinel errors of Fit; errors wrap them with the details.
var (
	ErrNoBudget  = errors.New("fit: no budget")
	ErrPlacement = errors.New("fit: placement")
	ErrTie       = errors.New("fit: tie")
	// ErrQuantizedInput: a tensor the recipe decides is quantized in the
	// input already.
	ErrQuantizedInput = errors.New("fit: the input is quantized")
)

// item is one unit of the knapsack: a tensor, or tied tensors taking one
// type together.
type item struct {
	members []int // tensor indices
	types   []formats.Type
	opts    []option
}

// Fit chooses every tensor's type for the budgets.
func Fit(in *gguf.Model, opts Options) (*Result, error) {
	gains := DefaultGains()
	if opts.Gains != nil {
		gains = *opts.Gains
	}
	types := opts.Types
	if len(types) == 0 {
		types = defaultTypes
	}
	m, err := describe(in)
	if err != nil {
		return nil, err
	}
	device, devices, err := placeAll(in, opts)
	if err != nil {
		return nil, err
	}
	budgets, err := CheckBudgets(opts, devices)
	if err != nil {
		return nil, err
	}
	var hasData []bool
	if opts.Imatrix != nil && len(opts.Imatrix.Entries) > 0 {
		if hasData, err = importanceFlags(in, opts.Imatrix); err != nil {
			return nil, err
		}
	}
	ts, warnings, err := candidates(m, hasData, opts.Pins, types, device, gains)
	if err != nil {
		return nil, err
	}
	tieWarnings, err := bindTies(m, hasData, ts, opts)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, tieWarnings...)
	if err := checkFeasible(ts, devices, budgets, opts); err != nil {
		return nil, err
	}
	if opts.Warn != nil {
		for _, w := range warnings {
			opts.Warn(w)
		}
	}
	res := &Result{Model: in.Path, Gains: gains, Warnings: warnings}
	if err := measureAll(in, opts, ts, gains, res); err != nil {
		return nil, err
	}
	choice, err := optimize(ts, devices, budgets, opts, gains, res)
	if err != nil {
		return nil, err
	}
	hasIm := opts.Imatrix != nil && len(opts.Imatrix.Entries) > 0
	rs, ft, err := writeRules(m, hasIm, opts.Pins, ts, choice, devices, res)
	if err != nil {
		return nil, err
	}
	if err := checkPlan(in, opts, rs, ft, devices, res); err != nil {
		return nil, err
	}
	return res, nil
}

// optimize solves every device's knapsack and fills res's devices,
// tensors and loss. It returns each tensor's type.
func optimize(ts []Tensor, devices []string, budgets map[string]*planner.Budget, opts Options, gains Gains, res *Result) ([]formats.Type, error) {
	if opts.MoreBytes <= 0 {
		opts.MoreBytes = GiB
	}
	items, tieOf, err := makeItems(ts, opts.Ties)
	if err != nil {
		return nil, err
	}
	choice := make([]formats.Type, len(ts))
	for i := range ts {
		if ts[i].Fixed() {
			choice[i] = ts[i].Cands[0].Type
		}
	}
	res.Devices = make([]Device, len(devices))
	for d, dev := range devices {
		if err := fitDevice(ts, items, dev, budgets[dev], opts, choice, &res.Devices[d]); err != nil {
			return nil, err
		}
	}
	res.Tensors = make([]Choice, 0, len(ts))
	for i := range ts {
		res.Tensors = append(res.Tensors, choiceOf(&ts[i], choice[i], tieOf[i]))
	}
	res.Loss = 0
	for _, d := range res.Devices {
		res.Loss += d.Loss
	}
	res.KLD = gains.KLD(res.Loss)
	for d := range res.Devices {
		if w := res.Devices[d].More; w != nil {
			// The other devices' losses added up, not res.Loss less this
			// device's: a difference of nearly equal sums can come out
			// below zero (-9.5e-20 where more bytes would make every
			// tensor exact), a sum of losses cannot.
			loss := w.Loss
			for e, other := range res.Devices {
				if e != d {
					loss += other.Loss
				}
			}
			w.KLD = gains.KLD(loss)
		}
	}
	return choice, nil
}

// placeAll gives every tensor its device and lists the devices in order.
func placeAll(in *gguf.Model, opts Options) (device, devices []string, err error) {
	device = make([]string, len(in.Tensors))
	if err := planner.CheckBudgets(opts.Budgets); err != nil {
		return nil, nil, err
	}
	if opts.Placement.Len() == 0 {
		if len(opts.Budgets) != 1 {
			return nil, nil, fmt.Errorf("%w: without placement rules give exactly one budget (the device everything goes to), or place tensors with --place 'exps=CPU' --place '.*=GPU'", ErrNoBudget)
		}
		for i := range device {
			device[i] = opts.Budgets[0].Device
		}
		return device, []string{opts.Budgets[0].Device}, nil
	}
	used := map[string]bool{}
	for i, t := range in.Tensors {
		r, err := opts.Placement.DeviceFor(t.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: tensor %s: %w", ErrPlacement, t.Name, err)
		}
		if r == nil {
			return nil, nil, fmt.Errorf("%w: tensor %s matches no placement rule (end the rules with '.*=DEVICE')", ErrPlacement, t.Name)
		}
		device[i] = r.Device
		used[r.Device] = true
	}
	for _, d := range opts.Placement.Devices() {
		if used[d] {
			devices = append(devices, d)
		}
	}
	return device, devices, nil
}

// CheckBudgets maps each device to its budget, refusing budgets and
// reserves for devices nothing is placed on, and two budgets for a device.
func CheckBudgets(opts Options, devices []string) (map[string]*planner.Budget, error) {
	if len(opts.Budgets) == 0 {
		return nil, fmt.Errorf("%w: give --budget DEVICE=SIZE for at least one device", ErrNoBudget)
	}
	known := map[string]bool{}
	for _, d := range devices {
		known[d] = true
	}
	out := map[string]*planner.Budget{}
	for i, b := range opts.Budgets {
		if !known[b.Device] {
			return nil, fmt.Errorf("%w: budget %s=%s: no tensor is placed on %s (devices: %s)", ErrNoBudget, b.Device, b.Text, b.Device, strings.Join(devices, ", "))
		}
		if prev := out[b.Device]; prev != nil {
			return nil, fmt.Errorf("%w: two budgets for %s (%s and %s)", ErrNoBudget, b.Device, prev.Text, b.Text)
		}
		out[b.Device] = &opts.Budgets[i]
	}
	// Each device's reserves add up within its budget: summed with a
	// check, so that no reserve, however large, wraps the sum negative.
	reserved := map[string]int64{}
	over := map[string]bool{}
	for _, r := range opts.Reserves {
		b := out[r.Device]
		if b == nil {
			return nil, fmt.Errorf("%w: reserve %s=%s for %s, which has no budget", ErrNoBudget, r.Device, r.Text, r.Device)
		}
		if r.Bytes < 0 || r.Bytes > bytesize.Max {
			return nil, fmt.Errorf("%w: %s=%s: %d bytes, not a size from 0 to %d", ErrBadReserve, r.Device, r.Text, r.Bytes, int64(bytesize.Max))
		}
		if sum, ok := addBytes(reserved[r.Device], r.Bytes); ok && !over[r.Device] && sum <= b.Bytes {
			reserved[r.Device] = sum
		} else {
			over[r.Device] = true
		}
	}
	for _, d := range devices {
		if !over[d] {
			continue
		}
		var texts []string
		for _, r := range opts.Reserves {
			if r.Device == d {
				texts = append(texts, r.Text)
			}
		}
		b := out[d]
		return nil, fmt.Errorf("device %s: %w: its reserves (%s) come to more than its budget %s (%d bytes)", d, ErrInfeasible, strings.Join(texts, ", "), b.Text, b.Bytes)
	}
	return out, nil
}

// checkFeasible refuses, before anything is measured, a budget that even
// the smallest candidate of every tensor on its device exceeds, with its
// reserves (measuring only ever takes candidates away). Tied tensors
// count as the knapsack takes them, at the smallest type all of them can
// take (a tensor whose rows are no multiple of 256 takes no K type, so
// the group may need more than each member's smallest): counted one by
// one, such a budget passed here and failed after all the measuring. A
// group no type fits is refused here too (makeItems).
func checkFeasible(ts []Tensor, devices []string, budgets map[string]*planner.Budget, opts Options) error {
	items, _, err := makeItems(ts, opts.Ties)
	if err != nil {
		return err
	}
	for _, dev := range devices {
		b := budgets[dev]
		if b == nil {
			continue
		}
		var need, fixed, reserved int64
		for i := range ts {
			if ts[i].Device == dev && ts[i].Fixed() {
				fixed += ts[i].Cands[0].Bytes
			}
		}
		need = fixed
		for _, it := range items {
			if ts[it.members[0]].Device != dev {
				continue
			}
			least := it.opts[0].bytes
			for _, o := range it.opts[1:] {
				least = min(least, o.bytes)
			}
			need += least
		}
		for _, r := range opts.Reserves {
			if r.Device == dev {
				reserved += r.Bytes // CheckBudgets has kept the sum within the budget
			}
		}
		if available := b.Bytes - reserved; need > available {
			return fmt.Errorf("device %s: %w: the smallest choice of every tensor on it needs %d bytes (%d of them tensors with a fixed type), %d more than the %d available (budget %s, reserves %d bytes)",
				dev, ErrInfeasible, need, fixed, need-available, available, b.Text, reserved)
		}
	}
	return nil
}

// measureAll measures every candidate of every quantized tensor and sets
// the candidates' errors and losses.
func measureAll(in *gguf.Model, opts Options, ts []Tensor, g Gains, res *Result) error {
	var reqs []Request
	for i := range ts {
		t := &ts[i]
		if !t.Quantized {
			continue
		}
		var want []formats.Type
		for _, c := range t.Cands {
			if mt := measureType(c.Type); !exact(t.Source, c.Type) && !slicesContains(want, mt) {
				want = append(want, mt)
			}
		}
		if len(want) > 0 {
			reqs = append(reqs, Request{Tensor: t.Index, Types: want})
		}
	}
	ms, rep, err := Measure(in, opts.Imatrix, reqs, opts.Measure, true)
	if err != nil {
		return err
	}
	res.Measured = rep
	for i := range ts {
		t := &ts[i]
		kept := t.Cands[:0]
		for _, c := range t.Cands {
			if t.Quantized && !exact(t.Source, c.Type) {
				mm := ms[t.Index][measureType(c.Type)]
				if mm.Broken() {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%s as %s gives weights that are not finite (the kernel fails on its data or importance): %s left out", t.Name, c.Type, c.Type))
					if t.Pin != nil {
						return fmt.Errorf("fit: %s: pinned to %s by %s, which gives weights that are not finite", t.Name, c.Type, t.Pin)
					}
					if t.TiedPin != nil {
						return fmt.Errorf("fit: %s: tied (--tie) to a tensor %s pins to %s, which gives %s weights that are not finite", t.Name, t.TiedPin, c.Type, t.Name)
					}
					continue
				}
				c.Err, c.SE = mm.Err(), mm.SE()
			}
			c.Loss = t.Gain * (c.Err + g.floor(t.Source, c.Type))
			if !(math.Abs(c.Loss) <= maxLoss) {
				return fmt.Errorf("%w: %s as %s: relative error %v (standard error %v) with gain %v gives loss %v, not a finite loss of at most %g (a damaged cache entry?)",
					ErrBadLoss, t.Name, c.Type, c.Err, c.SE, t.Gain, c.Loss, maxLoss)
			}
			kept = append(kept, c)
		}
		t.Cands = kept
		if len(kept) == 0 {
			return fmt.Errorf("fit: no candidate type gives %s finite weights", t.Name)
		}
	}
	return nil
}

// floor is the loss per unit gain a type adds beyond its weight error.
func (g *Gains) floor(src, t formats.Type) float64 {
	switch {
	case exact(src, t) || !t.IsQuantized():
		return 0
	case t.BlockSize() >= 256:
		return g.FloorK
	}
	return g.Floor
}

func slicesContains(ts []formats.Type, t formats.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// makeItems makes the knapsack items: one per free tensor, one per group
// of tied tensors (same name but for a --tie fragment, same device, types
// all of them can take). A group's pinned members are fixed and out of its
// item; bindTies has left its free members the pinned type alone.
// tieOf gives each tensor's group number (from 1).
func makeItems(ts []Tensor, ties [][]string) ([]item, []int, error) {
	tieOf := make([]int, len(ts))
	groups, _ := tieGroups(ts, ties)
	grouped := make([]bool, len(ts))
	var items []item
	for g, all := range groups {
		var ms []int
		for _, j := range all {
			if ts[j].Device != ts[all[0]].Device {
				return nil, nil, fmt.Errorf("%w: %s is on %s but %s, tied to it, on %s", ErrTie, ts[all[0]].Name, ts[all[0]].Device, ts[j].Name, ts[j].Device)
			}
			tieOf[j] = g + 1
			if !ts[j].Fixed() {
				ms = append(ms, j)
			}
		}
		if len(ms) == 0 {
			continue
		}
		it := item{members: ms}
		for _, c := range ts[ms[0]].Cands {
			o := option{}
			ok := true
			for _, j := range ms {
				k := candIndex(ts[j].Cands, c.Type)
				if k < 0 {
					ok = false
					break
				}
				o.bytes += ts[j].Cands[k].Bytes
				o.loss += ts[j].Cands[k].Loss
			}
			for _, j := range all {
				if ts[j].Fixed() && ts[j].Cands[0].Type != c.Type {
					ok = false // a pinned member decides the group's type
				}
			}
			if ok {
				it.types = append(it.types, c.Type)
				it.opts = append(it.opts, o)
			}
		}
		if len(it.opts) == 0 {
			return nil, nil, fmt.Errorf("%w: no type fits all of %s and the tensors tied to it", ErrTie, ts[all[0]].Name)
		}
		for _, j := range ms {
			grouped[j] = true
		}
		items = append(items, it)
	}
	for i := range ts {
		if ts[i].Fixed() || grouped[i] {
			continue
		}
		it := item{members: []int{i}}
		for _, c := range ts[i].Cands {
			it.types = append(it.types, c.Type)
			it.opts = append(it.opts, option{bytes: c.Bytes, loss: c.Loss})
		}
		items = append(items, it)
	}
	return items, tieOf, nil
}

func candIndex(cs []Candidate, t formats.Type) int {
	for k, c := range cs {
		if c.Type == t {
			return k
		}
	}
	return -1
}

// fitDevice solves one device's knapsack and fills its report.
func fitDevice(ts []Tensor, items []item, dev string, b *planner.Budget, opts Options, choice []formats.Type, out *Device) error {
	out.Device = dev
	var fixed int64
	for i := range ts {
		if ts[i].Device == dev {
			out.Tensors++
			if ts[i].Fixed() {
				fixed += ts[i].Cands[0].Bytes
				out.Loss += ts[i].Cands[0].Loss
			}
		}
	}
	fixedLoss := out.Loss
	var mine []int
	var its [][]option
	for k, it := range items {
		if ts[it.members[0]].Device == dev {
			mine = append(mine, k)
			its = append(its, it.opts)
		}
	}
	available := int64(math.MaxInt64 / 4)
	if b != nil {
		out.BudgetText, out.Budget = b.Text, b.Bytes
		available = b.Bytes
		// CheckBudgets has kept every device's reserves within its
		// budget: available stays from 0 to the budget.
		for _, r := range opts.Reserves {
			if r.Device == dev {
				out.Reserves = append(out.Reserves, r)
				available -= r.Bytes
			}
		}
		out.Available = available
		if available-fixed < 0 {
			return fmt.Errorf("device %s: %w: its reserves (%d bytes) and the %d bytes of tensors with a fixed type exceed its budget %s (%d bytes) by %d bytes",
				dev, ErrInfeasible, out.Budget-available, fixed, out.BudgetText, out.Budget, fixed-available)
		}
	}
	pick, err := solve(its, available-fixed)
	if err != nil {
		return fmt.Errorf("device %s: %w (budget %s, reserves %d bytes, %d bytes of tensors with a fixed type)", dev, err, out.BudgetText, out.Budget-available, fixed)
	}
	out.Bytes = fixed
	for n, k := range mine {
		it := items[k]
		for _, j := range it.members {
			choice[j] = it.types[pick[n]]
		}
		out.Bytes += it.opts[pick[n]].bytes
		out.Loss += it.opts[pick[n]].loss
	}
	if b == nil {
		return nil
	}
	if available > 0 {
		out.Use = float64(out.Bytes) / float64(available)
	}
	more, err := solve(its, available-fixed+opts.MoreBytes)
	if err != nil {
		return err
	}
	// The device's loss with more bytes is summed afresh, not as out.Loss
	// plus the differences of the changed items: those cancel to a tiny
	// negative loss when every item becomes exact.
	w := &WhatIf{Bytes: opts.MoreBytes, Changes: []Change{}} // [] in JSON, not null
	w.Loss = fixedLoss
	for n, k := range mine {
		it := items[k]
		w.Loss += it.opts[more[n]].loss
		if more[n] != pick[n] {
			w.Binding = true
			gain := it.opts[pick[n]].loss - it.opts[more[n]].loss
			for _, j := range it.members {
				w.Changes = append(w.Changes, Change{Name: ts[j].Name, From: it.types[pick[n]].String(), To: it.types[more[n]].String(),
					Gain: gain / float64(len(it.members))})
			}
		}
	}
	sort.SliceStable(w.Changes, func(a, b int) bool { return w.Changes[a].Gain > w.Changes[b].Gain })
	out.More = w
	return nil
}

func choiceOf(t *Tensor, typ formats.Type, tie int) Choice {
	c := Choice{Name: t.Name, Device: t.Device, Class: t.Class.String(), Layer: t.Layer, Type: typ.String(), Tie: tie}
	switch {
	case !t.Quantized:
		c.Fixed = "copied"
	case t.Pin != nil:
		c.Fixed = "pinned"
	}
	for _, o := range t.Cands {
		if o.Type == typ {
			c.Bytes, c.Err, c.Loss = o.Bytes, o.Err, o.Loss
		}
		if t.Quantized {
			c.Options = append(c.Options, Option{Type: o.Type.String(), Bytes: o.Bytes, Err: o.Err, SE: o.SE, Loss: o.Loss})
		}
	}
	return c
}

// writeRules makes the recipe and checks that the reference's type choice
// reads it back as fitted. It returns the whole rule set (pins first) and
// the file type to quantize with.
func writeRules(m model, hasIm bool, pins *recipes.RuleSet, ts []Tensor, choice []formats.Type, devices []string, res *Result) (*recipes.RuleSet, recipes.FileType, error) {
	res.Rules = make([]Rule, 0, len(res.Rules)) // [] in JSON, not null
	if pins != nil {
		for _, r := range pins.Rules {
			rule := Rule{Pattern: r.Pattern, Type: r.Type, TypeStr: r.TypeName, Pinned: true}
			for i := range ts {
				if ts[i].Pin != nil && ts[i].Pin.Index == r.Index {
					rule.Tensors++
					rule.Bytes += ts[i].Cands[0].Bytes
				}
			}
			res.Rules = append(res.Rules, rule)
		}
	}
	fitted := compactRules(ts, choice, devices)
	res.Rules = append(res.Rules, fitted...)
	rs := &recipes.RuleSet{}
	rs.Append(pins)
	var text strings.Builder
	for _, r := range fitted {
		fmt.Fprintf(&text, "%s\n", r)
	}
	fr, err := recipes.ParseRecipe(strings.NewReader(text.String()), "fitted recipe")
	if err != nil {
		return nil, 0, fmt.Errorf("fit: internal error: the recipe does not parse: %w", err)
	}
	rs.Append(fr)
	// Each fitted rule matches exactly the tensors it was written for, so
	// no reading of rule order changes the result.
	res2 := make([]*regexp2.Regexp, len(fitted))
	for k, r := range fitted {
		if res2[k], err = stdregex.Compile(r.Pattern); err != nil {
			return nil, 0, fmt.Errorf("fit: internal error: rule %s: %w", r, err)
		}
	}
	for i := range ts {
		n := 0
		for _, re := range res2 {
			if ok, err := re.MatchString(ts[i].Name); err != nil {
				return nil, 0, fmt.Errorf("fit: internal error: %w", err)
			} else if ok {
				n++
			}
		}
		if want := btoi(ts[i].Quantized && ts[i].Pin == nil); n != want {
			return nil, 0, fmt.Errorf("fit: internal error: %d fitted rules match %s, want %d", n, ts[i].Name, want)
		}
	}
	ft := suggestFileType(ts, choice, hasIm)
	res.FileType = ft.String()
	plan, err := m.selectAll(ft, rs, hasIm)
	if err != nil {
		return nil, 0, err
	}
	for i, c := range plan.Choices {
		if c.Type != choice[i] {
			return nil, 0, fmt.Errorf("fit: internal error: the recipe gives %s %s, the fit chose %s", c.Name, c.Type, choice[i])
		}
	}
	res.Mainline = true
	used := map[formats.Type]bool{}
	for i, t := range ts {
		used[choice[i]] = true
		if t.Quantized && !slicesContains(mainlineTypes, choice[i]) && !mainlineExtra[choice[i]] {
			res.Mainline = false
		}
	}
	if res.Mainline {
		for _, f := range recipes.FileTypes() {
			d, err := f.DefaultType()
			if err == nil && d.IsQuantized() && slicesContains(mainlineTypes, d) && !used[d] && (hasIm || !f.RequiresImatrix()) {
				res.MainlineFileType = f.String()
				break
			}
		}
	}
	return rs, ft, nil
}

// checkPlan plans the quantize run of the recipe as gquant plan would and
// checks the planner puts the fitted bytes on every device; it records the
// file size.
func checkPlan(in *gguf.Model, opts Options, rs *recipes.RuleSet, ft recipes.FileType, devices []string, res *Result) error {
	cfg := pipeline.Config{Selection: recipes.Options{FileType: ft, Rules: rs}, Imatrix: standIn(opts.Imatrix),
		ImatrixPath: opts.ImatrixPath, Output: "fitted.gguf"}
	// The stand-in lacks the data the very low-bit types insist on; the
	// fit only chose them where the real matrix has it.
	cfg.Selection.IgnoreImatrixRules, cfg.SizesOnly = true, true
	p, err := pipeline.Build(in, cfg)
	if err != nil {
		return fmt.Errorf("fit: planning the fitted recipe: %w", err)
	}
	pl := opts.Placement
	if pl.Len() == 0 {
		pl = &planner.Placement{}
		if err := pl.AddFlag(".*=" + devices[0]); err != nil {
			return err
		}
	}
	rep, err := planner.New(in, p, planner.Options{Placement: pl})
	if err != nil {
		return fmt.Errorf("fit: planning the fitted recipe: %w", err)
	}
	res.FileSize = rep.Total.Bytes
	for _, d := range rep.Devices {
		for k := range res.Devices {
			if res.Devices[k].Device == d.Device && res.Devices[k].Bytes != d.Bytes {
				return fmt.Errorf("fit: internal error: the planner puts %d bytes on %s, the fit %d", d.Bytes, d.Device, res.Devices[k].Bytes)
			}
		}
	}
	return nil
}

// standIn returns an importance matrix that plans like m, to the byte,
// without its data: the output records the matrix's file name, datasets,
// entry count and chunk count, the counts in fixed-width integers, so one
// entry of m (the smallest) and its other fields give the same metadata
// size, and the planner does not hold a copy of every tensor's importance
// data (a gigabyte for DeepSeek-R1).
func standIn(m *imatrix.Matrix) *imatrix.Matrix {
	if m == nil || len(m.Entries) == 0 {
		return m
	}
	small := 0
	for i, e := range m.Entries {
		if len(e.Sums) < len(m.Entries[small].Sums) {
			small = i
		}
	}
	return &imatrix.Matrix{Format: m.Format, Chunks: m.Chunks, Datasets: m.Datasets, Entries: m.Entries[small : small+1]}
}

// mainlineExtra are types mainline llama.cpp runs besides mainlineTypes'
// candidates (the types of copied tensors and other base types).
var mainlineExtra = map[formats.Type]bool{formats.F32: true, formats.F16: true, formats.Q4_1: true, formats.Q5_1: true, formats.Q8_1: true}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// suggestFileType is the file type to quantize the recipe with: the one
// whose default type holds the most bytes (the recipe gives every tensor
// its type, so this only names the file), one that needs no importance
// matrix when there is none.
func suggestFileType(ts []Tensor, choice []formats.Type, hasImatrix bool) recipes.FileType {
	byType := map[formats.Type]int64{}
	for i, t := range ts {
		if t.Quantized {
			byType[choice[i]] += bytesOf(t, choice[i])
		}
	}
	var order []formats.Type
	for t := range byType {
		order = append(order, t)
	}
	sort.Slice(order, func(a, b int) bool {
		if byType[order[a]] != byType[order[b]] {
			return byType[order[a]] > byType[order[b]]
		}
		return order[a] < order[b]
	})
	for _, t := range order {
		for _, ft := range recipes.FileTypes() {
			d, err := ft.DefaultType()
			if err == nil && d == t && d.IsQuantized() && (hasImatrix || !ft.RequiresImatrix()) {
				return ft
			}
		}
	}
	return recipes.FileTypeQ8_0
}
