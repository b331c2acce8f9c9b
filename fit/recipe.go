package fit

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/bytesize"
)

// Rule is one line of a fitted recipe.
type Rule struct {
	Pattern string       `json:"pattern"`
	Type    formats.Type `json:"-"`
	TypeStr string       `json:"type"`
	Device  string       `json:"device,omitempty"`
	Class   string       `json:"class,omitempty"`
	Pinned  bool         `json:"pinned,omitempty"` // a --custom-q rule, kept as given
	Tensors int          `json:"tensors"`
	Bytes   int64        `json:"bytes"`
}

// String is the rule as a recipe line.
func (r Rule) String() string { return r.Pattern + "=" + r.TypeStr }

// blockName splits "blk.N.rest" into N and rest, N a layer number as
// the range patterns write it (no leading zero). Other names get a rule of
// their own.
var blockName = regexp.MustCompile(`^blk\.(0|[1-9][0-9]{0,8})\.(.+)$`)

// anyBlockName is any "blk.DIGITS.rest": a kind with names blockName
// leaves out (blk.01.ffn_up beside blk.1.ffn_up) is never written as "every
// layer", whose [0-9]+ would match them too.
var anyBlockName = regexp.MustCompile(`^blk\.[0-9]+\.(.+)$`)

// compactRules writes the types chosen for the fitted tensors (those not
// pinned) as few rules: one per device, class, type and set of layers,
// the tensor kinds sharing all four joined in one alternation, the layers
// as numeric ranges. Every rule is anchored at both ends and no two rules
// match the same tensor, so the order of the rules does not matter and the
// recipe means the same under first-match (llama-quantize, --custom-q) and
// last-match (older llama.cpp --tensor-type) readings. The patterns contain
// no comma (--custom-q splits at commas), no white space, no '=' and no
// capital letter (mainline llama.cpp lower-cases them): see escape.
//
// choice[i] is tensor i's type; tensors whose Fixed() is true are left
// out. devices orders the devices.
func compactRules(ts []Tensor, choice []formats.Type, devices []string) []Rule {
	// Where each kind of block tensor exists at all (on any device, pinned
	// or not): a rule may say "every layer" only when it covers all of them.
	kindLayers := map[string]map[int]bool{}
	for _, t := range ts {
		if m := blockName.FindStringSubmatch(t.Name); m != nil {
			l, _ := strconv.Atoi(m[1])
			if kindLayers[m[2]] == nil {
				kindLayers[m[2]] = map[int]bool{}
			}
			kindLayers[m[2]][l] = true
		}
	}
	for _, t := range ts {
		if m := anyBlockName.FindStringSubmatch(t.Name); m != nil && !blockName.MatchString(t.Name) && kindLayers[m[1]] != nil {
			kindLayers[m[1]][-1] = true // a layer no range writes: never "every layer"
		}
	}
	type groupKey struct {
		device string
		class  Class
		typ    formats.Type
		kind   string
	}
	layers := map[groupKey][]int{}
	bytes := map[groupKey]int64{}
	count := map[groupKey]int{}
	var singles []Rule
	for i, t := range ts {
		if t.Fixed() {
			continue
		}
		b := bytesOf(t, choice[i])
		m := blockName.FindStringSubmatch(t.Name)
		if m == nil {
			singles = append(singles, Rule{Pattern: "^" + escape(t.Name) + "$", Type: choice[i], Device: t.Device,
				Class: t.Class.String(), Tensors: 1, Bytes: b})
			continue
		}
		l, _ := strconv.Atoi(m[1])
		k := groupKey{t.Device, t.Class, choice[i], m[2]}
		layers[k] = append(layers[k], l)
		bytes[k] += b
		count[k]++
	}
	// Kinds with the same device, class, type and layers share a rule.
	type ruleKey struct {
		device string
		class  Class
		typ    formats.Type
		layers string
	}
	kinds := map[ruleKey][]string{}
	rb := map[ruleKey]int64{}
	rc := map[ruleKey]int{}
	for k, ls := range layers {
		sort.Ints(ls)
		lp := layerPattern(ls, kindLayers[k.kind])
		rk := ruleKey{k.device, k.class, k.typ, lp}
		kinds[rk] = append(kinds[rk], k.kind)
		rb[rk] += bytes[k]
		rc[rk] += count[k]
	}
	var out []Rule
	for rk, ks := range kinds {
		sort.Strings(ks)
		alt := make([]string, len(ks))
		for i, k := range ks {
			alt[i] = escape(k)
		}
		kp := alt[0]
		if len(alt) > 1 {
			kp = "(" + strings.Join(alt, "|") + ")"
		}
		out = append(out, Rule{Pattern: `^blk\.` + rk.layers + `\.` + kp + "$", Type: rk.typ, Device: rk.device,
			Class: rk.class.String(), Tensors: rc[rk], Bytes: rb[rk]})
	}
	out = append(out, singles...)
	devIndex := map[string]int{}
	for i, d := range devices {
		devIndex[d] = i
	}
	classIndex := map[string]int{}
	for c := Class(0); c < numClasses; c++ {
		classIndex[c.String()] = int(c)
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if devIndex[x.Device] != devIndex[y.Device] {
			return devIndex[x.Device] < devIndex[y.Device]
		}
		if classIndex[x.Class] != classIndex[y.Class] {
			return classIndex[x.Class] < classIndex[y.Class]
		}
		if x.Bytes != y.Bytes {
			return x.Bytes > y.Bytes
		}
		return x.Pattern < y.Pattern
	})
	for i := range out {
		out[i].TypeStr = out[i].Type.String()
	}
	return out
}

// layerPattern is the regex of a set of layer numbers: [0-9]+ when it is
// every layer the kind exists in, else runs of consecutive layers as
// numeric ranges.
func layerPattern(ls []int, all map[int]bool) string {
	if len(ls) == len(all) {
		return "[0-9]+"
	}
	var parts []string
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && ls[j+1] == ls[j]+1 {
			j++
		}
		parts = append(parts, rangePattern(ls[i], ls[j])...)
		i = j + 1
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, "|") + ")"
}

// rangePattern returns alternatives that together match exactly the
// decimal numbers from a to b (no leading zeros), for 0 <= a <= b.
func rangePattern(a, b int) []string {
	if a == b {
		return []string{strconv.Itoa(a)}
	}
	sa, sb := strconv.Itoa(a), strconv.Itoa(b)
	if len(sa) < len(sb) {
		top := 1
		for range sa {
			top *= 10
		}
		return append(rangePattern(a, top-1), rangePattern(top, b)...)
	}
	return sameLength(sa, sb)
}

// sameLength covers the numbers from a to b written with the same number
// of digits.
func sameLength(a, b string) []string {
	if a == b {
		return []string{a}
	}
	if len(a) == 1 {
		return []string{digitClass(a[0], b[0])}
	}
	if a[0] == b[0] {
		var out []string
		for _, s := range sameLength(a[1:], b[1:]) {
			out = append(out, a[:1]+s)
		}
		return out
	}
	rest := len(a) - 1
	zeros, nines := strings.Repeat("0", rest), strings.Repeat("9", rest)
	var out []string
	lo, hi := a[0], b[0]
	if a[1:] != zeros {
		for _, s := range sameLength(a[1:], nines) {
			out = append(out, a[:1]+s)
		}
		lo++
	}
	tail := b[1:] != nines
	if tail {
		hi--
	}
	if lo <= hi {
		out = append(out, digitClass(lo, hi)+strings.Repeat("[0-9]", rest))
	}
	if tail {
		for _, s := range sameLength(zeros, b[1:]) {
			out = append(out, b[:1]+s)
		}
	}
	return out
}

func digitClass(lo, hi byte) string {
	switch {
	case lo == hi:
		return string(lo)
	case lo == '0' && hi == '9':
		return "[0-9]"
	}
	return fmt.Sprintf("[%c-%c]", lo, hi)
}

// escape writes a tensor name as a regex that matches it alone and reads
// the same in every syntax the recipe is used in: regex metacharacters
// get a backslash; capitals, white space, commas, '=', '#', quotes and
// the other ASCII characters beside a-z, 0-9 and "_-/:@" become \xhh
// escapes (lower-case hex digits): mainline llama.cpp lower-cases its
// patterns, --tensor-type-file splits at white space, the comma-joined
// --custom-q splits at commas, a rule splits at its first '=' and '#'
// starts a comment. Bytes beyond ASCII are kept as they are (a literal
// sequence in every engine).
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("_-/:@", c) >= 0, c >= 0x80:
			b.WriteByte(c)
		case strings.IndexByte(`\.+*?()|[]{}^$`, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

// bytesOf returns a tensor's bytes in one of its candidate types.
func bytesOf(t Tensor, typ formats.Type) int64 {
	for _, c := range t.Cands {
		if c.Type == typ {
			return c.Bytes
		}
	}
	panic(fmt.Sprintf("fit: %s has no candidate %s", t.Name, typ))
}

// WriteRecipe writes the recipe: # comments with the budgets, reserves,
// bytes per device, predicted divergence and how to use it, then the rules
// grouped by device and class. command is the fit's command line, for the
// record. The rules alone (grep -v '^#') are a --tensor-type-file for
// mainline llama.cpp and, joined with commas, a --custom-q for
// ik_llama.cpp.
func (r *Result) WriteRecipe(w io.Writer, command string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# gquant fit recipe for %s\n", filepath.Base(r.Model))
	if command != "" {
		fmt.Fprintf(bw, "# made by: %s\n", command)
	}
	fmt.Fprintf(bw, "# predicted KL divergence %.4g (loss %.4g), file %s\n", r.KLD, r.Loss, humanBytes(r.FileSize))
	for _, d := range r.Devices {
		if d.BudgetText == "" {
			fmt.Fprintf(bw, "# %s: no budget: %s in %d tensors, each at its best type\n", d.Device, humanBytes(d.Bytes), d.Tensors)
			continue
		}
		fmt.Fprintf(bw, "# %s: budget %s", d.Device, d.BudgetText)
		for _, res := range d.Reserves {
			fmt.Fprintf(bw, " - %s (%s)", humanBytes(res.Bytes), res.Text)
		}
		fmt.Fprintf(bw, " = %s for weights; %s used (%.2f %%) in %d tensors\n", humanBytes(d.Available), humanBytes(d.Bytes), 100*d.Use, d.Tensors)
		if m := d.More; m != nil && m.Binding {
			fmt.Fprintf(bw, "#   %s more would bring the KL divergence to %.4g (%d tensors upgraded)\n", humanBytes(m.Bytes), m.KLD, len(m.Changes))
		}
	}
	fmt.Fprintf(bw, "# use: gquant quantize --imatrix IMATRIX --recipe THIS IN.gguf OUT.gguf %s\n", r.FileType)
	fmt.Fprintf(bw, "#      ik_llama.cpp: llama-quantize --custom-q \"$(grep -v '^#' THIS | paste -sd, -)\" ... %s\n", r.FileType)
	if r.Mainline && r.MainlineFileType != "" {
		fmt.Fprintf(bw, "#      llama.cpp: grep -v '^#' THIS > types.txt; llama-quantize --tensor-type-file types.txt ... %s\n", r.MainlineFileType)
	} else {
		fmt.Fprintf(bw, "#      (types only ik_llama.cpp runs: fit with --types mainline for llama.cpp)\n")
	}
	lastDev, lastClass := "\x00", "\x00"
	for _, rule := range r.Rules {
		switch {
		case rule.Pinned && lastDev != "pinned":
			fmt.Fprintf(bw, "# pinned (--custom-q, as given)\n")
			lastDev = "pinned"
		case !rule.Pinned && (rule.Device != lastDev || rule.Class != lastClass):
			fmt.Fprintf(bw, "# %s: %s\n", rule.Device, rule.Class)
			lastDev, lastClass = rule.Device, rule.Class
		}
		fmt.Fprintf(bw, "%s\n", rule)
	}
	return bw.Flush()
}

// CustomQ is the recipe's rules joined with commas, for ik_llama.cpp's
// --custom-q.
func (r *Result) CustomQ() string {
	parts := make([]string, len(r.Rules))
	for i, rule := range r.Rules {
		parts[i] = rule.String()
	}
	return strings.Join(parts, ",")
}

// humanBytes prints a size as the reports do.
func humanBytes(n int64) string { return bytesize.Format(n) }
