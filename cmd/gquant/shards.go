package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/pipeline"
)

// One model, many machines (issue 22): --only-shards writes some of the
// output shards, the ones another run with the same arguments leaves;
// gquant plan --shards shows each shard's tensors, input and estimated
// work, and the parts of --only-shards K/N for --parts N.

// shardFlags are quantize's and plan's options for splitting one run over
// several.
type shardFlags struct {
	only  string // --only-shards
	list  bool   // --shards
	parts int    // --parts
	onlySet,
	partsSet bool
}

func (s *shardFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.only, "only-shards", "", "write only these output shards: `LIST` of numbers and ranges (3,4 or 3-5, from 1), or K/N, the K-th of N parts of about equal work (for job arrays); the shards of all parts are one run's, byte for byte")
	fs.BoolVar(&s.list, "shards", false, "with --dry-run (gquant plan): list each output shard with its tensors, the input bytes it reads, its estimated work and, with --parts, its part")
	fs.IntVar(&s.parts, "parts", 0, "with --shards: show the parts of --only-shards K/`N` for this N")
}

// selection parses --only-shards (nil when not given).
func (s *shardFlags) selection(fs *pflag.FlagSet) (*pipeline.ShardSelection, error) {
	s.onlySet = fs.Changed("only-shards")
	s.partsSet = fs.Changed("parts")
	if s.partsSet && !s.list {
		return nil, errors.New("--parts N shows the parts of K/N in the shard list: it needs --shards")
	}
	if s.partsSet && s.parts < 1 {
		return nil, fmt.Errorf("--parts %d: the number of parts is 1 or more", s.parts)
	}
	if !s.onlySet {
		return nil, nil
	}
	sel, err := pipeline.ParseShardSelection(s.only)
	if err != nil {
		return nil, fmt.Errorf("--only-shards: %w", err)
	}
	switch _, n := sel.Part(); {
	case n > 0 && s.partsSet && s.parts != n:
		return nil, fmt.Errorf("--parts %d and --only-shards %s: the part column would show parts of another N than the run's", s.parts, s.only)
	case n > 0:
		s.parts = n
	}
	return &sel, nil
}

// shardJSON is one output shard in gquant plan --shards --json (the plan's
// document gets a "shards" array and, with --parts, "parts").
type shardJSON struct {
	Index      int               `json:"index"` // from 1
	Path       string            `json:"path"`
	Bytes      int64             `json:"bytes"`
	Part       int               `json:"part,omitempty"` // from 1, with --parts
	Written    bool              `json:"written"`        // by this run (not another part's, not kept)
	InputBytes int64             `json:"input_bytes"`
	Work       float64           `json:"work_seconds"` // estimated, one thread
	Converted  int               `json:"converted"`
	Tensors    []shardTensorJSON `json:"tensors"`
}

type shardTensorJSON struct {
	Index      int     `json:"index"` // the plan's, from 1
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Converted  bool    `json:"converted"`
	Bytes      int64   `json:"bytes"`
	InputBytes int64   `json:"input_bytes"`
	Work       float64 `json:"work_seconds"`
}

// shardList is what gquant plan --shards shows.
type shardList struct {
	Parts   int         `json:"parts,omitempty"`
	Machine string      `json:"work_machine"` // whose thread the work is in
	Threads int         `json:"threads,omitempty"`
	Shards  []shardJSON `json:"shards"`
}

func newShardList(in *gguf.Model, plan *pipeline.Plan, parts, threads int) shardList {
	work := plan.Work(in)
	l := shardList{Parts: parts, Machine: pipeline.WorkCostMachine(), Threads: threads, Shards: []shardJSON{}}
	var byShard []time.Duration
	for _, w := range work {
		byShard = append(byShard, w.Work)
	}
	var part []int
	if parts > 0 {
		part = pipeline.AssignParts(byShard, parts)
	}
	next := make([]int, len(plan.Outputs)) // the next tensor of each output
	index := make([][]int, len(plan.Outputs))
	for i, t := range plan.Tensors {
		index[t.Output] = append(index[t.Output], i)
	}
	for s, o := range plan.Outputs {
		sh := shardJSON{Index: s + 1, Path: o.Path, Bytes: plan.Sizes[s], Written: !o.Skip, InputBytes: work[s].InputBytes,
			Work: work[s].Work.Seconds(), Converted: work[s].Converted, Tensors: []shardTensorJSON{}}
		if part != nil {
			sh.Part = part[s]
		}
		for j, t := range o.Tensors {
			k := index[s][next[s]]
			next[s]++
			sh.Tensors = append(sh.Tensors, shardTensorJSON{Index: k + 1, Name: t.Name, Type: t.Type.String(), Converted: t.Convert,
				Bytes: plan.Tensors[k].Bytes, InputBytes: in.Tensors[t.Source].Size, Work: work[s].Tensor[j].Seconds()})
		}
		l.Shards = append(l.Shards, sh)
	}
	return l
}

// writeText prints the shard list: a line per shard (and its tensors unless
// summary), then the parts.
func (l shardList) writeText(w io.Writer, summary bool) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "shards (work: estimated time of one thread of %s, from our kernels' speed per type):\n", l.Machine)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  shard\t")
	if l.Parts > 0 {
		fmt.Fprintf(tw, "part\t")
	}
	fmt.Fprintf(tw, "tensors\tbytes\tinput read\twork\t\n")
	var total time.Duration
	for _, s := range l.Shards {
		fmt.Fprintf(tw, "  %d\t", s.Index)
		if l.Parts > 0 {
			fmt.Fprintf(tw, "%d/%d\t", s.Part, l.Parts)
		}
		note := ""
		if !s.Written {
			note = " (not written by this run)"
		}
		fmt.Fprintf(tw, "%d (%d quantized)\t%s\t%s\t%s\t%s%s\n", len(s.Tensors), s.Converted, humanBytes(s.Bytes), humanBytes(s.InputBytes),
			workString(seconds(s.Work)), s.Path, note)
		total += seconds(s.Work)
		if summary {
			continue
		}
		for _, t := range s.Tensors {
			typ := t.Type
			if !t.Converted {
				typ = "copied"
			}
			fmt.Fprintf(tw, "    \t")
			if l.Parts > 0 {
				fmt.Fprintf(tw, "\t")
			}
			fmt.Fprintf(tw, "%d %s (%s)\t%s\t%s\t%s\t\n", t.Index, t.Name, typ, humanBytes(t.Bytes), humanBytes(t.InputBytes), workString(seconds(t.Work)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(b, "total: %d shard(s), work %s of one thread", len(l.Shards), workString(total))
	if l.Threads > 0 {
		fmt.Fprintf(b, ", %s on %d threads", workString(total/time.Duration(l.Threads)), l.Threads)
	}
	fmt.Fprintln(b)
	if l.Parts > 0 {
		fmt.Fprintf(b, "\nparts of --only-shards K/%d (consecutive shards, the largest part as small as it can be):\n", l.Parts)
		tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		// Parts past the shard count are empty (one shard each before
		// them): one line says so, however many were asked for.
		for k := 1; k <= min(l.Parts, len(l.Shards)); k++ {
			var first, last, n int
			var work time.Duration
			var in int64
			for _, s := range l.Shards {
				if s.Part == k {
					if n == 0 {
						first = s.Index
					}
					last, n = s.Index, n+1
					work += seconds(s.Work)
					in += s.InputBytes
				}
			}
			fmt.Fprintf(tw, "  %d/%d\t", k, l.Parts)
			switch {
			case n == 0:
				fmt.Fprintf(tw, "no shards (more parts than shards)\t\t\t\n")
				continue
			case n == 1:
				fmt.Fprintf(tw, "shard %d\t", first)
			default:
				fmt.Fprintf(tw, "shards %d-%d\t", first, last)
			}
			share := 0.0
			if total > 0 {
				share = 100 * float64(work) / float64(total)
			}
			fmt.Fprintf(tw, "input %s\twork %s (%.1f %%)", humanBytes(in), workString(work), share)
			if l.Threads > 0 {
				fmt.Fprintf(tw, ", %s on %d threads", workString(work/time.Duration(l.Threads)), l.Threads)
			}
			fmt.Fprintf(tw, "\t\n")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if first := len(l.Shards) + 1; l.Parts >= first {
			fmt.Fprintf(b, "  %d/%d to %d/%d: no shards (more parts than shards)\n", first, l.Parts, l.Parts, l.Parts)
		}
	}
	// The tabwriter pads a row's last cell too: no line ends in spaces.
	lines := strings.Split(b.String(), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// workString prints an estimated time: milliseconds below a second,
// tenths of a second below a minute, whole seconds below an hour, minutes
// above.
func workString(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return d.Round(time.Second).String()
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

// onlyShardsSummary says, after a run of some shards, how many it wrote
// and that the others are other runs'.
func onlyShardsSummary(w io.Writer, sel *pipeline.ShardSelection, plan *pipeline.Plan) {
	if sel == nil {
		return
	}
	mine := 0
	for _, o := range plan.Outputs {
		if !o.Elsewhere {
			mine++
		}
	}
	switch {
	case mine == 0:
		fmt.Fprintf(w, "gquant quantize: --only-shards %s: no shard to write (the plan has %d shard(s), fewer than the parts)\n", sel, len(plan.Outputs))
	default:
		fmt.Fprintf(w, "gquant quantize: --only-shards %s: %d of %d shard(s); the others are other runs' (check the whole set with gquant verify)\n", sel, mine, len(plan.Outputs))
	}
}
