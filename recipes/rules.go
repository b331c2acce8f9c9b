package recipes

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/dlclark/regexp2/syntax"

	"github.com/gquant/gquant/internal/stdregex"
	"github.com/gquant/gquant/internal/text"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// Sentinel errors of rule parsing; a *RuleError wraps one of them.
var (
	ErrBadRule  = errors.New("recipes: rule is not regex=type")
	ErrBadRegex = errors.New("recipes: invalid regular expression")
	ErrBadType  = errors.New("recipes: unknown type in rule")
)

// SourceCustomQ is Rule.Source for rules from a --custom-q string.
const SourceCustomQ = "--custom-q"

// matchTimeout bounds one regex search. std::regex has no such limit, but a
// pattern that backtracks for seconds on a short tensor name is a bug worth
// reporting rather than waiting for.
const matchTimeout = 2 * time.Second

// Rule is one regex=type rule. Rules are searched anywhere in a tensor name
// (std::regex_search with the ECMAScript grammar) and the first rule of a set
// that matches decides the tensor's type.
type Rule struct {
	Index    int          // position in its RuleSet, from 0
	Pattern  string       // the regex as given
	Type     formats.Type // the type it assigns
	TypeName string       // the type as written
	Source   string       // SourceCustomQ or the recipe file's path
	Line     int          // line in the recipe file, or item number (from 1) in a --custom-q string
	re       *regexp2.Regexp
}

// String gives the rule as the user wrote it, with where it came from.
func (r *Rule) String() string {
	return fmt.Sprintf("rule %d (%s) %s=%s", r.Index+1, r.Where(), r.Pattern, r.Type)
}

// Where says where the rule was written: "recipe.txt:4" or "--custom-q item 2".
func (r *Rule) Where() string {
	if isFlagSource(r.Source) {
		return fmt.Sprintf("%s item %d", r.Source, r.Line)
	}
	return fmt.Sprintf("%s:%d", r.Source, r.Line)
}

// Match reports whether the rule's regex occurs anywhere in name. A search
// that times out is a *MatchError.
func (r *Rule) Match(name string) (bool, error) {
	_, _, ok, err := r.Find(name)
	return ok, err
}

// Find returns the byte offsets of the leftmost match of the rule's regex in
// name (the match std::regex_search reports), or a *MatchError for a search
// that timed out.
func (r *Rule) Find(name string) (start, end int, ok bool, err error) {
	return (*Budget)(nil).Find(r, name)
}

// SetMatchTimeout sets the time limit of each search of the set's rules
// (matchTimeout by default). Call it before the set is used.
func (rs *RuleSet) SetMatchTimeout(d time.Duration) {
	for _, r := range rs.Rules {
		r.re.MatchTimeout = d
	}
}

func runeOffsetToByte(s string, runes int) int {
	if runes <= 0 {
		return 0
	}
	n := 0
	for i := range s {
		if n == runes {
			return i
		}
		n++
	}
	return len(s)
}

// RuleSet is an ordered list of rules plus the compatibility warnings found
// while parsing them (things llama-quantize would treat differently).
type RuleSet struct {
	Rules    []*Rule
	Warnings []string
}

// Len is the number of rules (0 for a nil set).
func (rs *RuleSet) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.Rules)
}

// Match returns the first rule whose regex occurs in name, or nil; a
// search that times out is a *MatchError naming the rule and the tensor.
func (rs *RuleSet) Match(name string) (*Rule, error) {
	return (*Budget)(nil).Match(rs, name)
}

// Append adds other's rules after rs's own, as repeated --custom-q options
// and recipe files accumulate in the reference.
func (rs *RuleSet) Append(other *RuleSet) {
	if other == nil {
		return
	}
	for _, r := range other.Rules {
		c := *r
		c.Index = len(rs.Rules)
		rs.Rules = append(rs.Rules, &c)
	}
	rs.Warnings = append(rs.Warnings, other.Warnings...)
}

// CustomQ renders the set in llama-quantize's one-line --custom-q form. It
// fails for rules that form cannot carry (a comma in the regex splits it).
func (rs *RuleSet) CustomQ() (string, error) {
	parts := make([]string, 0, rs.Len())
	for _, r := range rs.Rules {
		if strings.Contains(r.Pattern, ",") {
			return "", fmt.Errorf("recipes: %s: regex %q contains a comma, which --custom-q splits on", r.Where(), r.Pattern)
		}
		parts = append(parts, r.Pattern+"="+r.Type.String())
	}
	return strings.Join(parts, ","), nil
}

// RuleError describes a rule that cannot be used.
type RuleError struct {
	Source string // SourceCustomQ or the recipe file's path
	Line   int    // recipe file line, or item number in the --custom-q string
	Text   string // the offending rule text
	Offset int    // byte offset in the regex of an invalid regex, -1 otherwise
	Hint   string // what to do about it, may be empty
	Err    error  // ErrBadRule, ErrBadRegex or ErrBadType, wrapping the detail
}

func (e *RuleError) Error() string {
	var b strings.Builder
	// A rule is one line; a longer one is a binary file given as a recipe
	// (a long rule still shows far past where its regex offset points).
	quoted := text.Quote(e.Text, 4*text.QuoteMax)
	if isFlagSource(e.Source) {
		fmt.Fprintf(&b, "%s item %d %s: ", e.Source, e.Line, quoted)
	} else {
		fmt.Fprintf(&b, "%s:%d: %s: ", e.Source, e.Line, quoted)
	}
	b.WriteString(e.Err.Error())
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " (at regex offset %d)", e.Offset)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *RuleError) Unwrap() error { return e.Err }

// ParseCustomQ parses a --custom-q argument the way llama-quantize does: the
// string is split at every comma (so a regex like `x{1,3}` cannot be written
// there), each item is split at its first '=', nothing is trimmed.
// Differences from the reference: type names are accepted in any case (the
// reference wants the exact ggml spelling, so a warning says it would have
// refused), and regexes are checked here rather than at the first tensor.
func ParseCustomQ(arg string) (*RuleSet, error) {
	rs := &RuleSet{}
	items := strings.Split(arg, ",")
	for i, item := range items {
		itemNo := i + 1
		pos := strings.IndexByte(item, '=')
		if pos < 0 {
			e := &RuleError{Source: SourceCustomQ, Line: itemNo, Text: item, Offset: -1, Err: ErrBadRule}
			switch {
			case item == "" && i == len(items)-1 && i > 0:
				e.Hint = "remove the trailing comma (llama-quantize rejects it too)"
			case item == "":
				e.Hint = "empty item between commas (llama-quantize rejects it too)"
			case i+1 < len(items) && looksLikeSplitRegex(item):
				e.Hint = "the string is split at every comma, so a regex containing a comma (like {1,3}) cannot be given in --custom-q; use a recipe file or rewrite the regex"
			}
			return nil, e
		}
		pattern, typeName := item[:pos], item[pos+1:]
		r, err := newRule(pattern, typeName, SourceCustomQ, itemNo, item)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(pattern) != pattern {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: regex %q has surrounding white space, which is part of the regex (llama-quantize keeps it too)", r.Where(), pattern))
		}
		r.Index = len(rs.Rules)
		rs.Rules = append(rs.Rules, r)
		rs.Warnings = append(rs.Warnings, ruleWarnings(r)...)
	}
	return rs, nil
}

// looksLikeSplitRegex reports whether an item without '=' probably is the
// first half of a regex cut at a comma inside {m,n}.
func looksLikeSplitRegex(item string) bool {
	return strings.Count(item, "{") > strings.Count(item, "}")
}

// LoadRecipe reads a recipe file (see ParseRecipe).
func LoadRecipe(path string) (*RuleSet, error) {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("recipes: %w", err)
	}
	defer f.Close()
	return ParseRecipe(f, path)
}

// ParseRecipe reads rules one per line: `regex=type`, split at the first '='
// (as --custom-q splits each item), surrounding white space of the line and
// of both halves ignored, blank lines and lines starting with '#' skipped.
// path is used in messages only.
func ParseRecipe(r io.Reader, path string) (*RuleSet, error) {
	rs := &RuleSet{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		if lineNo == 1 {
			raw = strings.TrimPrefix(raw, "\uFEFF")
		}
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !utf8.ValidString(line) {
			return nil, &RuleError{Source: path, Line: lineNo, Text: line, Offset: -1, Err: fmt.Errorf("%w: line is not valid UTF-8", ErrBadRule)}
		}
		pos := strings.IndexByte(line, '=')
		if pos < 0 {
			return nil, &RuleError{Source: path, Line: lineNo, Text: line, Offset: -1, Err: ErrBadRule,
				Hint: "each non-comment line must be regex=type"}
		}
		pattern := strings.TrimSpace(line[:pos])
		typeName := strings.TrimSpace(line[pos+1:])
		rule, err := newRule(pattern, typeName, path, lineNo, line)
		if err != nil {
			var re *RuleError
			if errors.As(err, &re) && errors.Is(err, ErrBadType) && strings.Contains(typeName, ",") {
				re.Hint = "a recipe file takes one rule per line; the comma-joined form is for --custom-q"
			}
			return nil, err
		}
		if strings.Contains(pattern, ",") {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: regex %q contains a comma: this rule cannot be passed to llama-quantize --custom-q, which splits at every comma", rule.Where(), pattern))
		}
		rule.Index = len(rs.Rules)
		rs.Rules = append(rs.Rules, rule)
		rs.Warnings = append(rs.Warnings, ruleWarnings(rule)...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("recipes: reading %s: %w", path, err)
	}
	return rs, nil
}

// newRule checks and compiles one rule.
func newRule(pattern, typeName, source string, line int, text string) (*Rule, error) {
	t, err := formats.ParseType(typeName)
	if err != nil {
		e := &RuleError{Source: source, Line: line, Text: text, Offset: -1, Err: fmt.Errorf("%w: %w", ErrBadType, err)}
		if strings.Contains(typeName, "=") {
			e.Hint = "a rule is split at its first '=', so the regex cannot contain '='"
		}
		return nil, e
	}
	re, off, err := compileRegex(pattern)
	if err != nil {
		return nil, &RuleError{Source: source, Line: line, Text: text, Offset: off, Err: fmt.Errorf("%w %q: %w", ErrBadRegex, pattern, err)}
	}
	return &Rule{Pattern: pattern, Type: t, TypeName: typeName, Source: source, Line: line, re: re}, nil
}

// ruleWarnings lists what llama-quantize would do differently with a rule
// this package accepts.
func ruleWarnings(r *Rule) []string {
	var w []string
	if r.TypeName != r.Type.String() {
		w = append(w, fmt.Sprintf("%s: type %q: llama-quantize only accepts the exact spelling %q and would refuse this rule", r.Where(), r.TypeName, r.Type.String()))
	}
	if r.Pattern == "" {
		w = append(w, fmt.Sprintf("%s: empty regex matches every tensor", r.Where()))
	}
	if !r.Type.IsQuantized() && r.Type != formats.F16 && r.Type != formats.BF16 && r.Type != formats.F32 {
		w = append(w, fmt.Sprintf("%s: type %s is not a quantization type", r.Where(), r.Type))
	}
	return w
}

// compileRegex compiles pattern as std::regex reads it (stdregex). On
// failure it also returns the byte offset the error is attributed to (-1
// where the pattern had to be rewritten for regexp2 and offsets no longer
// correspond).
func compileRegex(pattern string) (*regexp2.Regexp, int, error) {
	translated, err := stdregex.Translate(pattern)
	if err != nil {
		return nil, -1, err
	}
	re, err := regexp2.Compile(translated, regexp2.ECMAScript)
	if err == nil {
		re.MatchTimeout = matchTimeout
		return re, -1, nil
	}
	if translated != pattern {
		return nil, -1, err
	}
	return nil, regexErrorOffset(pattern, err), err
}

// maxOffsetSearch is the longest pattern regexErrorOffset searches: it
// compiles each prefix, which for a line of 80,000 characters took 35 s.
// Real rules are short; a longer one gets the message without a caret.
const maxOffsetSearch = 4096

// regexErrorOffset locates a compile error: the parser does not report
// positions, so find where the final run of prefixes failing with the same
// error begins. For an unclosed '(' or '[' that is the bracket itself, for
// errors like a dangling quantifier the character that causes it.
func regexErrorOffset(pattern string, err error) int {
	var pe *syntax.Error
	if !errors.As(err, &pe) || len(pattern) > maxOffsetSearch {
		return -1
	}
	// Byte offsets of rune boundaries, so prefixes stay valid UTF-8.
	var ends []int
	for i := range pattern {
		if i > 0 {
			ends = append(ends, i)
		}
	}
	ends = append(ends, len(pattern))
	start := len(ends) - 1
	for k := len(ends) - 1; k >= 0; k-- {
		_, e := regexp2.Compile(pattern[:ends[k]], regexp2.ECMAScript)
		var pk *syntax.Error
		if e == nil || !errors.As(e, &pk) || pk.Code != pe.Code {
			break
		}
		start = k
	}
	// The offending character is the last one of the shortest failing prefix.
	if start == 0 {
		return 0
	}
	return ends[start-1]
}
