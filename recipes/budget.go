package recipes

import (
	"errors"
	"fmt"
	"time"

	"github.com/dlclark/regexp2"
)

// DefaultRuleBudget is how long the regex searches of one plan may take
// together: a few milliseconds is usual, so a plan that spends seconds is
// stuck on a pathological regex.
const DefaultRuleBudget = 10 * time.Second

// Errors of rule evaluation, wrapped by *MatchError.
var (
	// ErrMatchTimeout: one regex search ran past matchTimeout (catastrophic
	// backtracking). It is never taken as "no match".
	ErrMatchTimeout = errors.New("recipes: regex search timed out")
	// ErrRuleBudget: the searches of one plan together ran past the budget.
	ErrRuleBudget = errors.New("recipes: rule evaluation ran past its time budget")
)

// MatchError is a search that could not decide whether a rule matches a
// tensor: it names the rule and the tensor.
type MatchError struct {
	Rule   string // the rule as written, with where it came from
	Tensor string
	Err    error // wraps ErrMatchTimeout or ErrRuleBudget
}

func (e *MatchError) Error() string {
	return fmt.Sprintf("%s on tensor %s: %v", e.Rule, e.Tensor, e.Err)
}

func (e *MatchError) Unwrap() error { return e.Err }

// Budget is the time the regex searches of one plan may take together
// (each search is also bounded by itself). A nil *Budget only bounds each
// search. A Budget is not safe for concurrent use.
type Budget struct {
	total time.Duration
	spent time.Duration
	now   func() time.Time // time.Now, replaced by tests
}

// NewBudget returns a budget of total (DefaultRuleBudget when 0).
func NewBudget(total time.Duration) *Budget {
	if total <= 0 {
		total = DefaultRuleBudget
	}
	return &Budget{total: total, now: time.Now}
}

// Search finds the leftmost match of re in name. rule describes re for
// errors. A search that times out, or one that finds the budget spent, is
// a *MatchError, never "no match".
func (b *Budget) Search(re *regexp2.Regexp, rule, name string) (*regexp2.Match, error) {
	if b != nil && b.spent > b.total {
		return nil, &MatchError{Rule: rule, Tensor: name, Err: fmt.Errorf("%w: the searches of this plan took over %v", ErrRuleBudget, b.total)}
	}
	var start time.Time
	if b != nil {
		start = b.now()
	}
	m, err := re.FindStringMatch(name)
	if b != nil {
		b.spent += b.now().Sub(start)
	}
	if err != nil {
		// regexp2 fails only on a timeout; its message repeats the name.
		return nil, &MatchError{Rule: rule, Tensor: name, Err: fmt.Errorf("%w after %v", ErrMatchTimeout, re.MatchTimeout)}
	}
	if b != nil && b.spent > b.total {
		return nil, &MatchError{Rule: rule, Tensor: name, Err: fmt.Errorf("%w: the searches of this plan took over %v", ErrRuleBudget, b.total)}
	}
	return m, nil
}

// Find returns the byte offsets of the leftmost match of r in name (the
// match std::regex_search reports).
func (b *Budget) Find(r *Rule, name string) (start, end int, ok bool, err error) {
	m, err := b.Search(r.re, r.String(), name)
	if err != nil || m == nil {
		return 0, 0, false, err
	}
	// regexp2 reports rune offsets; convert to bytes.
	start = runeOffsetToByte(name, m.Index)
	end = runeOffsetToByte(name, m.Index+m.Length)
	return start, end, true, nil
}

// Match returns the first rule of rs whose regex occurs in name, or nil.
func (b *Budget) Match(rs *RuleSet, name string) (*Rule, error) {
	if rs == nil {
		return nil, nil
	}
	for _, r := range rs.Rules {
		_, _, ok, err := b.Find(r, name)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
	return nil, nil
}
