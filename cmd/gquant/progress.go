package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
)

// progress shows a quantize run: a bar on a terminal, otherwise one plain
// line per finished tensor.
type progress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int64
	done  int64 // bytes of finished tensors
	last  int64
	start time.Time
}

func newProgress(w io.Writer, plan *pipeline.Plan) *progress {
	p := &progress{w: w, start: time.Now()}
	for _, t := range plan.Tensors {
		p.total += inputBytes(t)
	}
	// The bar moves the cursor, so it writes to the terminal itself; the
	// tensor names it shows are escaped (cli.Escape).
	if raw := cli.Raw(w); isTerminal(raw) {
		p.bar = progressbar.NewOptions64(p.total,
			progressbar.OptionSetWriter(raw),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
		)
	}
	return p
}

func inputBytes(t pipeline.TensorPlan) int64 {
	// The input size is what the bar counts; the plan holds output sizes,
	// so take the input's from the source type.
	size, err := t.Source.TensorSize(t.Shape)
	if err != nil {
		return 0
	}
	return size
}

func (p *progress) update(ev pipeline.Event) {
	cur := p.done + ev.Done
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("[%d/%d] %s", ev.Index+1, ev.Count, cli.Escape(ev.Name)))
		p.bar.Add64(cur - p.last)
	}
	p.last = cur
	if ev.Finished {
		p.done += ev.Bytes
		p.last = p.done
		if p.bar == nil {
			el := time.Since(p.start).Seconds()
			rate := float64(p.done) / max(el, 1e-9) / (1 << 20)
			fmt.Fprintf(p.w, "[%4d/%4d] %-40s %10s  %6.1f MiB/s\n", ev.Index+1, ev.Count, ev.Name, humanBytes(ev.Bytes), rate)
		}
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
