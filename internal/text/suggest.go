// Package text holds small helpers for the messages the commands and libraries
// print.
package text

import (
	"sort"
	"strings"
)

// Suggest returns up to n candidates closest to name by edit distance
// (case-insensitive), for "did you mean" messages. Candidates further than
// half the name's length are not suggested.
func Suggest(name string, candidates []string, n int) []string {
	name = strings.ToLower(name)
	type scored struct {
		s string
		d int
	}
	var all []scored
	for _, c := range candidates {
		d := editDistance(name, strings.ToLower(c))
		if d <= len(name)/2+1 {
			all = append(all, scored{c, d})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].s)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
