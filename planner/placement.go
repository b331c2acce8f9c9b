package planner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/stdregex"
	"github.com/gquant/gquant/internal/text"
	"github.com/gquant/gquant/recipes"
)

// ErrBadPlacement is wrapped by every placement error.
var ErrBadPlacement = errors.New("planner: bad placement")

// SourcePlace is PlaceRule.Source for rules given with --place.
const SourcePlace = "--place"

// placeTimeout bounds one regex search on a tensor name.
const placeTimeout = 2 * time.Second

// PlaceRule is one regex=DEVICE placement, in the form llama.cpp's
// -ot/--override-tensor takes: the regex is searched anywhere in the tensor
// name (std::regex_search, ECMAScript grammar) and the first rule that
// matches decides the device.
type PlaceRule struct {
	Index   int    // position in the Placement, from 0
	Pattern string // the regex as given
	Device  string // the device (llama.cpp buffer type: CPU, CUDA0, ...)
	Source  string // SourcePlace or the placement file's path
	Line    int    // line in the file, or item number (from 1) over all --place values
	re      *regexp2.Regexp
}

// Where says where the rule was written: "place.txt:3" or "--place item 2".
func (r *PlaceRule) Where() string {
	if r.Source == SourcePlace {
		return fmt.Sprintf("%s item %d", SourcePlace, r.Line)
	}
	return fmt.Sprintf("%s:%d", r.Source, r.Line)
}

// String is the rule as written, with where it came from.
func (r *PlaceRule) String() string {
	return fmt.Sprintf("%s %s=%s", r.Where(), r.Pattern, r.Device)
}

// MatchName reports whether the rule's regex occurs anywhere in name. A
// search that times out is a *recipes.MatchError naming the rule and the
// tensor, never "no match".
func (r *PlaceRule) MatchName(name string) (bool, error) {
	return r.match(nil, name)
}

// Match is MatchName without the error.
//
// Deprecated: a search that times out reads as no match; use MatchName.
func (r *PlaceRule) Match(name string) bool {
	ok, err := r.MatchName(name)
	return ok && err == nil
}

func (r *PlaceRule) match(b *recipes.Budget, name string) (bool, error) {
	m, err := b.Search(r.re, "placement "+r.String(), name)
	return m != nil, err
}

// PlaceError is a placement rule that cannot be used.
type PlaceError struct {
	Rule string // where the rule was written ("place.txt:3", "--place item 2")
	Text string // the rule as written
	Err  error
}

func (e *PlaceError) Error() string {
	// Cut: a binary file given as a placement file has lines of kilobytes.
	return fmt.Sprintf("%s: %s: %v", e.Rule, text.Quote(e.Text, text.QuoteMax), e.Err)
}

func (e *PlaceError) Unwrap() error { return e.Err }

// regexProblem is what is wrong with a regex, without the regex, which
// regexp2's message repeats in full and the caller quotes already (cut).
func regexProblem(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	if len(se.Args) == 0 {
		return se.Code.String()
	}
	return fmt.Sprintf(se.Code.String(), se.Args...)
}

// Placement is an ordered list of placement rules.
type Placement struct {
	Rules []*PlaceRule
}

// Len is the number of rules (0 for nil).
func (p *Placement) Len() int {
	if p == nil {
		return 0
	}
	return len(p.Rules)
}

// Device is DeviceFor without the error.
//
// Deprecated: a search that times out reads as no match; use DeviceFor.
func (p *Placement) Device(name string) *PlaceRule {
	r, _ := p.DeviceFor(name)
	return r
}

// DeviceFor returns the first rule matching name, or nil; a search that
// times out is a *recipes.MatchError.
func (p *Placement) DeviceFor(name string) (*PlaceRule, error) {
	if p == nil {
		return nil, nil
	}
	for _, r := range p.Rules {
		ok, err := r.MatchName(name)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
	return nil, nil
}

// setMatchTimeout changes the time limit of each search (tests).
func (p *Placement) setMatchTimeout(d time.Duration) {
	for _, r := range p.Rules {
		r.re.MatchTimeout = d
	}
}

// Devices lists the devices the rules name, in order of first mention.
func (p *Placement) Devices() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range p.Rules {
		if !seen[r.Device] {
			seen[r.Device] = true
			out = append(out, r.Device)
		}
	}
	return out
}

// AddFlag adds the rules of one --place value. Like llama.cpp's -ot the
// value may hold several rules separated by commas, so a regex given this
// way cannot contain a comma (use a placement file for that).
func (p *Placement) AddFlag(value string) error {
	for _, item := range strings.Split(value, ",") {
		n := 1
		for _, r := range p.Rules {
			if r.Source == SourcePlace {
				n++
			}
		}
		if err := p.add(item, SourcePlace, n); err != nil {
			return err
		}
	}
	return nil
}

// AddFile adds the rules of a placement file: one regex=DEVICE per line,
// blank lines and lines starting with '#' ignored.
func (p *Placement) AddFile(path string) error {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("placement file: %w", err)
	}
	defer f.Close()
	return p.AddReader(f, path)
}

// AddReader adds the rules read from r, named path in messages.
func (p *Placement) AddReader(r io.Reader, path string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := p.add(text, path, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("placement file %s: %w", path, err)
	}
	return nil
}

func (p *Placement) add(rule, source string, line int) error {
	where := (&PlaceRule{Source: source, Line: line}).Where()
	fail := func(format string, args ...any) error {
		return &PlaceError{Rule: where, Text: rule, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadPlacement}, args...)...)}
	}
	// The device never contains '=', the regex might: split at the last one.
	i := strings.LastIndexByte(rule, '=')
	if i < 0 {
		return fail("want regex=DEVICE, like exps=CPU")
	}
	pattern, device := rule[:i], strings.TrimSpace(rule[i+1:])
	if pattern == "" {
		return fail("empty regex (use .* to match every tensor)")
	}
	if device == "" {
		return fail("no device after '='")
	}
	re, err := stdregex.Compile(pattern)
	if err != nil {
		return fail("invalid regex %s: %v", text.Quote(pattern, text.QuoteMax), regexProblem(err))
	}
	re.MatchTimeout = placeTimeout
	for _, prev := range p.Rules {
		if prev.Pattern != pattern {
			continue
		}
		if prev.Device != device {
			return fail("contradicts %s: the same regex puts these tensors on %s there; the first rule wins, so this one would do nothing", prev, prev.Device)
		}
		return fail("repeats %s: it would do nothing", prev)
	}
	p.Rules = append(p.Rules, &PlaceRule{Index: len(p.Rules), Pattern: pattern, Device: device, Source: source, Line: line, re: re})
	return nil
}

// PlaceUse is what one placement rule does to a model.
type PlaceUse struct {
	Rule     *PlaceRule `json:"-"`
	Where    string     `json:"where"`
	Pattern  string     `json:"pattern"`
	Device   string     `json:"device"`
	Tensors  int        `json:"tensors"` // tensors it places
	Bytes    int64      `json:"bytes"`
	Shadowed int        `json:"shadowed"` // tensors it matches that an earlier rule places
}

// assign places every tensor. It fails on a rule that matches tensors but
// places none of them (every one is taken by an earlier rule): the usual
// mistake of `.*=GPU` before `exps=CPU`.
func (p *Placement) assign(names []string, bytes []int64, budget *recipes.Budget) (device []string, by []int, uses []PlaceUse, err error) {
	device = make([]string, len(names))
	by = make([]int, len(names))
	uses = make([]PlaceUse, len(p.Rules))
	for i, r := range p.Rules {
		uses[i] = PlaceUse{Rule: r, Where: r.Where(), Pattern: r.Pattern, Device: r.Device}
	}
	firstShadow := make([]string, len(p.Rules))
	shadowedBy := make([]*PlaceRule, len(p.Rules))
	for t, name := range names {
		by[t] = -1
		for i, r := range p.Rules {
			ok, err := r.match(budget, name)
			if err != nil {
				return nil, nil, nil, err
			}
			if !ok {
				continue
			}
			if by[t] < 0 {
				by[t], device[t] = i, r.Device
				uses[i].Tensors++
				uses[i].Bytes += bytes[t]
				continue
			}
			if uses[i].Shadowed == 0 {
				firstShadow[i], shadowedBy[i] = name, p.Rules[by[t]]
			}
			uses[i].Shadowed++
		}
	}
	for i, u := range uses {
		if u.Tensors == 0 && u.Shadowed > 0 {
			r := p.Rules[i]
			return nil, nil, nil, &PlaceError{Rule: r.Where(), Text: r.Pattern + "=" + r.Device,
				Err: fmt.Errorf("%w: every tensor it matches (%d, e.g. %s) is already placed by %s; the first matching rule wins, so move it before the broader rule",
					ErrBadPlacement, u.Shadowed, firstShadow[i], shadowedBy[i])}
		}
	}
	return device, by, uses, nil
}
