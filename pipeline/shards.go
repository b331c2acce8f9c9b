package pipeline

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gquant/gquant/gguf"
)

// One model, many machines (issue 22): the plan fixes every output shard's
// tensors, metadata and bytes before any work, so a run may write some of
// the shards only (Config.OnlyShards) and the shards of several such runs
// together are, byte for byte, the files one run writes. For job arrays the
// shards are cut into N parts of about equal quantization work, estimated
// from a fixed cost per type (workcost.tsv), so that every host computes
// the same parts whatever its speed.

// ErrShardSelection is wrapped by the errors of a shard selection that does
// not parse or names shards the plan does not have.
var ErrShardSelection = errors.New("pipeline: bad shard selection")

// ShardSelection says which output shards a run writes: a list of shard
// numbers and ranges ("3,4", "3-5", "1,4-6"), or part K of N ("2/3", see
// AssignParts). Shards are numbered from 1, as in NAME-00003-of-00008.gguf.
// The zero value selects nothing; use a nil *ShardSelection for all.
type ShardSelection struct {
	text        string
	shards      []int // the list forms: shard numbers, sorted, unique
	part, parts int   // the K/N form
}

// maxShards is the most files a shard set can have: split.count is a
// uint16.
const maxShards = math.MaxUint16

// ParseShardSelection reads a shard selection: numbers and ranges A-B
// separated by commas, or K/N with 1 <= K <= N.
func ParseShardSelection(s string) (ShardSelection, error) {
	sel := ShardSelection{text: s}
	bad := func(format string, args ...any) (ShardSelection, error) {
		return ShardSelection{}, fmt.Errorf("%w %q: %s", ErrShardSelection, s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return bad("empty (want shard numbers such as 3,4 or 3-5, or a part K/N)")
	}
	if k, n, ok := strings.Cut(s, "/"); ok {
		part, err1 := strconv.Atoi(k)
		parts, err2 := strconv.Atoi(n)
		switch {
		case errors.Is(err1, strconv.ErrRange) || errors.Is(err2, strconv.ErrRange):
			return bad("a number is too large")
		case err1 != nil || err2 != nil:
			return bad("a part is K/N with two whole numbers")
		case parts < 1:
			return bad("the number of parts N must be 1 or more")
		case part < 1 || part > parts:
			return bad("the part K must be from 1 to N (%d)", parts)
		}
		sel.part, sel.parts = part, parts
		return sel, nil
	}
	for _, item := range strings.Split(s, ",") {
		from, to, isRange := strings.Cut(item, "-")
		a, err := strconv.Atoi(from)
		if errors.Is(err, strconv.ErrRange) || err == nil && a > maxShards {
			return bad("shard %s: a shard set has at most %d files (split.count is a 16-bit number)", from, maxShards)
		}
		if err != nil || a < 1 {
			return bad("%q is not a shard number (from 1) or a range A-B", item)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(to); errors.Is(err, strconv.ErrRange) {
				b, err = math.MaxInt, nil // too large, said below
			}
			if err != nil || b < a {
				return bad("%q is not a range A-B with A <= B", item)
			}
		}
		if b > maxShards {
			return bad("shard %d: a shard set has at most %d files (split.count is a 16-bit number)", b, maxShards)
		}
		for i := a; i <= b; i++ {
			sel.shards = append(sel.shards, i)
		}
	}
	slices.Sort(sel.shards)
	sel.shards = slices.Compact(sel.shards)
	return sel, nil
}

// String returns the selection as it was given.
func (s ShardSelection) String() string { return s.text }

// Part returns K and N of the K/N form, and 0, 0 for a list.
func (s ShardSelection) Part() (k, n int) { return s.part, s.parts }

// Resolve returns, in order, the indexes (from 0) of the shards selected
// among count of them; work is each shard's estimated work, used by the
// K/N form (AssignParts). Only the K/N form may select nothing (a part of
// more parts than shards).
func (s ShardSelection) Resolve(work []time.Duration) ([]int, error) {
	count := len(work)
	var out []int
	if s.parts > 0 {
		for i, p := range AssignParts(work, s.parts) {
			if p == s.part {
				out = append(out, i)
			}
		}
		return out, nil
	}
	for _, n := range s.shards {
		if n > count {
			return nil, fmt.Errorf("%w %q: shard %d selected, the plan has %d output file(s)", ErrShardSelection, s.text, n, count)
		}
		out = append(out, n-1)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %q: no shard selected", ErrShardSelection, s.text)
	}
	return out, nil
}

// selectShards applies Config.OnlyShards to a laid-out plan: the outputs
// not selected are left to other runs (Skip and Elsewhere).
func selectShards(plan *Plan, in *gguf.Model, sel ShardSelection) error {
	work := make([]time.Duration, len(plan.Outputs))
	for i, w := range plan.Work(in) {
		work[i] = w.Work
	}
	chosen, err := sel.Resolve(work)
	if err != nil {
		return err
	}
	for i := range plan.Outputs {
		if !slices.Contains(chosen, i) {
			plan.Outputs[i].Skip, plan.Outputs[i].Elsewhere = true, true
		}
	}
	return nil
}

// ShardWork is what writing one output of a plan takes.
type ShardWork struct {
	// Tensors counts the output's tensors, Converted those quantized or
	// converted (the others are copied).
	Tensors, Converted int
	// InputBytes is the input tensor data read for it (a tensor written
	// twice, as --extra-output-tensor's copy, is read twice).
	InputBytes int64
	// Work is the estimated time of one thread (workcost.tsv), Tensor
	// that of each of the output's tensors.
	Work   time.Duration
	Tensor []time.Duration
}

// Work estimates, per output of the plan, the input it reads and the
// quantization work it takes, from the fixed per-type costs of
// workcost.tsv: the same on every machine, so that every host of a job
// array computes the same parts.
func (p *Plan) Work(in *gguf.Model) []ShardWork {
	out := make([]ShardWork, len(p.Outputs))
	for i, o := range p.Outputs {
		w := &out[i]
		w.Tensors = len(o.Tensors)
		w.Tensor = make([]time.Duration, len(o.Tensors))
		for j, t := range o.Tensors {
			src := in.Tensors[t.Source]
			w.InputBytes += src.Size
			if t.Convert {
				w.Converted++
			}
			w.Tensor[j] = TensorWork(t, src.Size)
			w.Work += w.Tensor[j]
		}
	}
	return out
}

// AssignParts cuts the shards, of the given estimated work each, into n
// parts and returns each shard's part, from 1. Parts are runs of
// consecutive shards: part 1 takes the first shards, part n the last. The
// cut points first make the largest part's work as small as it can be (the
// exact minimum over all cuts into n runs), then, from the left, bring each
// part as close as that allows to the average of the work still to assign.
// A part is empty only when there are fewer shards than parts (the last
// parts). The arithmetic is on integers, so every machine computes the same
// parts from the same work.
func AssignParts(work []time.Duration, n int) []int {
	s := len(work)
	part := make([]int, s)
	if s == 0 {
		return part
	}
	if n <= 1 {
		for i := range part {
			part[i] = 1
		}
		return part
	}
	pre := make([]uint64, s+1)
	var largest uint64
	for i, w := range work {
		pre[i+1] = pre[i] + uint64(max(w, 0))
		largest = max(largest, uint64(max(w, 0)))
	}
	// The smallest cap on a part's work that n runs can keep: the
	// greedy packing from the left uses the fewest runs under a cap.
	runs := func(limit uint64) int {
		count, start := 0, 0
		for start < s {
			e := start + 1
			for e < s && pre[e+1]-pre[start] <= limit {
				e++
			}
			count++
			start = e
		}
		return count
	}
	lo, hi := largest, pre[s]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if runs(mid) <= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	limit := lo
	// fewest[j]: the fewest runs under the cap that hold shards j..s-1.
	fewest := make([]int, s+1)
	for j := s - 1; j >= 0; j-- {
		e := j + 1
		for e < s && pre[e+1]-pre[j] <= limit {
			e++
		}
		fewest[j] = 1 + fewest[e]
	}
	start := 0
	for k := 1; k <= n && start < s; k++ {
		left := uint64(n - k + 1) // parts still to fill, this one included
		rest := pre[s] - pre[start]
		best := -1
		for e := start + 1; e <= s && pre[e]-pre[start] <= limit; e++ {
			switch {
			case uint64(fewest[e]) > left-1:
				continue // the shards after e would need more parts than are left
			case uint64(s-start) > left && uint64(s-e) < left-1:
				continue // a later part would be empty
			case uint64(s-start) <= left && e > start+1:
				continue // as many parts as shards, or more: one each
			}
			if best < 0 || nearer(pre[e]-pre[start], pre[best]-pre[start], left, rest) {
				best = e
			}
		}
		for i := start; i < best; i++ {
			part[i] = k
		}
		start = best
	}
	return part
}

// nearer reports whether a part of work a is strictly nearer than one of
// work b to the average rest/left, comparing |a*left - rest| with
// |b*left - rest| exactly (128-bit products).
func nearer(a, b, left, rest uint64) bool {
	ah, al := absDiff(a, left, rest)
	bh, bl := absDiff(b, left, rest)
	return ah < bh || ah == bh && al < bl
}

// absDiff returns |x*y - z| as a 128-bit number (high, low).
func absDiff(x, y, z uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(x, y)
	if hi > 0 || lo >= z {
		var borrow uint64
		lo, borrow = bits.Sub64(lo, z, 0)
		hi -= borrow
		return hi, lo
	}
	return 0, z - lo
}
