package recipes

import (
	"fmt"
	"strings"
)

// Shadow is a tensor a rule matches but an earlier rule decides.
type Shadow struct {
	Name   string
	Winner *Rule
}

// Unintended is a match that does not line up with the name's components,
// like `output\.weight` inside blk.0.attn_output.weight.
type Unintended struct {
	Name       string
	Start, End int  // byte offsets of the match in Name
	Won        bool // the rule decided this tensor (otherwise an earlier rule did)
}

// RuleReport is what one rule does to a model.
type RuleReport struct {
	Rule       *Rule
	Won        []string // tensors this rule decides (it is the first that matches)
	Shadowed   []Shadow // tensors it matches that an earlier rule decides
	Unintended []Unintended
	Suggestion string // an anchored regex that avoids the unintended matches
}

// Analysis is a rule set checked against a model's tensor names.
type Analysis struct {
	Rules     []RuleReport
	Unused    []*Rule  // rules that match no tensor at all
	Unmatched []string // tensors no rule matches (the built-in choice decides them)
}

// Analyze checks rules against the tensor names they will be tried on (see
// Plan.ConsultedNames): which tensors each rule decides, which it would have
// matched but loses to an earlier rule, rules that match nothing, and
// matches that are probably unintended.
//
// A match is probably unintended when it starts inside a name component
// (after a letter or digit rather than at the start or after a '.') or ends
// inside a run of letters and digits, while the same rule matches other
// tensors cleanly: `output\.weight` matches output.weight cleanly and
// attn_output.weight only from the middle of "attn_output".
//
// Every rule is searched in every name, within budget (nil: each search
// bounded by itself only); a search that times out or runs past the budget
// is a *MatchError.
func Analyze(rs *RuleSet, names []string, budget *Budget) (*Analysis, error) {
	a := &Analysis{}
	if rs == nil {
		a.Unmatched = append(a.Unmatched, names...)
		return a, nil
	}
	a.Rules = make([]RuleReport, len(rs.Rules))
	type span struct {
		name       string
		start, end int
		won        bool
	}
	aligned := make([][]span, len(rs.Rules))
	misaligned := make([][]span, len(rs.Rules))
	for i, r := range rs.Rules {
		a.Rules[i].Rule = r
	}
	for _, name := range names {
		var winner *Rule
		for i, r := range rs.Rules {
			start, end, ok, err := budget.Find(r, name)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			rep := &a.Rules[i]
			won := winner == nil
			if won {
				winner = r
				rep.Won = append(rep.Won, name)
			} else {
				rep.Shadowed = append(rep.Shadowed, Shadow{Name: name, Winner: winner})
			}
			s := span{name, start, end, won}
			if matchAligned(name, start, end) {
				aligned[i] = append(aligned[i], s)
			} else {
				misaligned[i] = append(misaligned[i], s)
			}
		}
		if winner == nil {
			a.Unmatched = append(a.Unmatched, name)
		}
	}
	for i := range a.Rules {
		rep := &a.Rules[i]
		if len(rep.Won) == 0 && len(rep.Shadowed) == 0 {
			a.Unused = append(a.Unused, rep.Rule)
		}
		if len(aligned[i]) == 0 || len(misaligned[i]) == 0 {
			continue
		}
		badStart, badEnd := false, false
		for _, s := range misaligned[i] {
			rep.Unintended = append(rep.Unintended, Unintended{Name: s.name, Start: s.start, End: s.end, Won: s.won})
			badStart = badStart || !startAligned(s.name, s.start)
			badEnd = badEnd || !endAligned(s.name, s.end)
		}
		whole := true
		for _, s := range aligned[i] {
			whole = whole && s.start == 0 && s.end == len(s.name)
		}
		rep.Suggestion = anchored(rep.Rule.Pattern, whole, badStart, badEnd)
	}
	return a, nil
}

// isSeparator reports the bytes that split a tensor name into components.
func isSeparator(b byte) bool { return b == '.' || b == '_' }

// startAligned: the match begins the name, follows a '.', or itself begins
// with a separator ("_exps" is meant to start mid-component, "output" after
// "attn_" is not).
func startAligned(name string, start int) bool {
	return start == 0 || name[start-1] == '.' || isSeparator(name[start])
}

// endAligned: the match ends the name, or ends at or just before a
// separator ("blk\.1" must not stop inside "blk.10").
func endAligned(name string, end int) bool {
	return end == len(name) || isSeparator(name[end]) || isSeparator(name[end-1])
}

func matchAligned(name string, start, end int) bool {
	if start == end { // an empty match says nothing about intent
		return true
	}
	return startAligned(name, start) && endAligned(name, end)
}

// anchored suggests a stricter form of pattern.
func anchored(pattern string, whole, badStart, badEnd bool) string {
	p := pattern
	if hasTopLevelAlternation(p) {
		p = "(?:" + p + ")"
	}
	if whole {
		return "^" + strings.TrimSuffix(strings.TrimPrefix(p, "^"), "$") + "$"
	}
	if badStart && !strings.HasPrefix(p, "^") {
		p = `(?:^|\.)` + p
	}
	if badEnd && !strings.HasSuffix(p, "$") {
		p += `(?=[._]|$)`
	}
	return p
}

// hasTopLevelAlternation reports a '|' outside groups and classes.
func hasTopLevelAlternation(p string) bool {
	depth, inClass := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

// String renders the analysis for a dry-run planner.
func (a *Analysis) String() string {
	var b strings.Builder
	for _, rep := range a.Rules {
		fmt.Fprintf(&b, "%s: decides %d tensor(s)", rep.Rule, len(rep.Won))
		if len(rep.Shadowed) > 0 {
			fmt.Fprintf(&b, ", loses %d to earlier rules", len(rep.Shadowed))
		}
		b.WriteByte('\n')
		for _, s := range rep.Shadowed {
			fmt.Fprintf(&b, "    shadowed: %s (decided by rule %d %s)\n", s.Name, s.Winner.Index+1, s.Winner.Pattern)
		}
		if len(rep.Unintended) > 0 {
			fmt.Fprintf(&b, "    probably unintended: the regex matches inside a longer name component in:\n")
			for _, u := range rep.Unintended {
				state := "decided by this rule"
				if !u.Won {
					state = "decided by an earlier rule"
				}
				fmt.Fprintf(&b, "      %s (matched %q, %s)\n", u.Name, u.Name[u.Start:u.End], state)
			}
			fmt.Fprintf(&b, "    suggestion: anchor it: %s\n", rep.Suggestion)
		}
	}
	for _, r := range a.Unused {
		fmt.Fprintf(&b, "%s matches no tensor\n", r)
	}
	return b.String()
}
