package recipes

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/gquant/gquant/gguf"
)

// SourceTensorType is Rule.Source for rules of mainline llama.cpp's
// --tensor-type option; Rule.Line counts those options from 1.
const SourceTensorType = "--tensor-type"

// isFlagSource reports whether a rule came from a command-line option
// (its Line is then an item number) rather than from a file.
func isFlagSource(source string) bool {
	return source == SourceCustomQ || source == SourceTensorType
}

// ParseTensorType reads one --tensor-type PATTERN=TYPE of mainline
// llama.cpp's llama-quantize (item n, from 1). Its semantics are
// mainline's, which differ from --custom-q's in three ways: one rule per
// option (the string is not split at commas, so x{1,3} works), the pattern
// is lower-cased before it is compiled (mainline does so, which also turns
// the escapes \D \S \W \B into \d \s \w \b), and the rule applies with
// --pure as well. Like --custom-q it is an ECMAScript regex searched
// anywhere in the tensor name, the first matching rule wins, and TYPE is a
// ggml type name in any case.
func ParseTensorType(arg string, n int) (*RuleSet, error) {
	return parseTensorType(arg, SourceTensorType, n)
}

func parseTensorType(arg, source string, line int) (*RuleSet, error) {
	pos := strings.IndexByte(arg, '=')
	e := &RuleError{Source: source, Line: line, Text: arg, Offset: -1, Err: ErrBadRule}
	switch {
	case pos < 0:
		e.Hint = "want PATTERN=TYPE"
		return nil, e
	case pos == 0:
		e.Hint = "missing tensor name pattern before '='"
		return nil, e
	case pos == len(arg)-1:
		e.Hint = "missing type after '='"
		return nil, e
	}
	r, err := newRule(strings.ToLower(arg[:pos]), arg[pos+1:], source, line, arg)
	if err != nil {
		return nil, err
	}
	return &RuleSet{Rules: []*Rule{r}}, nil
}

// LoadTensorTypeFile reads mainline llama.cpp's --tensor-type-file: rules
// as --tensor-type takes them, separated by white space (spaces or
// newlines). Rule.Line is the line the rule is on.
func LoadTensorTypeFile(path string) (*RuleSet, error) {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("recipes: %w", err)
	}
	defer f.Close()
	rs := &RuleSet{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		for _, item := range strings.Fields(sc.Text()) {
			one, err := parseTensorType(item, path, line)
			if err != nil {
				return nil, err
			}
			rs.Append(one)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("recipes: reading %s: %w", path, err)
	}
	return rs, nil
}
