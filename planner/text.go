package planner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// TextOptions adjusts WriteText.
type TextOptions struct {
	// Tensors prints the per-tensor table (one line per tensor).
	Tensors bool
	// SkipWarnings leaves out the first SkipWarnings entries of
	// Report.Warnings (the caller has printed the pipeline's own already).
	SkipWarnings int
}

// listMax is how many tensor names a text line lists before "and N more".
const listMax = 4

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer, opts TextOptions) error {
	b := &errWriter{w: w}
	if opts.Tensors {
		b.printf("tensors:\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		device := len(r.Devices) > 0
		fmt.Fprintf(tw, "  #\tname\tshape\tsource\ttype\tbytes\t")
		if device {
			fmt.Fprintf(tw, "device\t")
		}
		fmt.Fprintf(tw, "decided by\n")
		for i, t := range r.Tensors {
			typ := t.Type
			if !t.Quantized {
				typ = "(copied)"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%d\t", i+1, t.Name, shapeString(t.Shape), t.Source, typ, t.Bytes)
			if device {
				dev := t.Device
				if dev == "" {
					dev = "-"
				}
				fmt.Fprintf(tw, "%s\t", dev)
			}
			why := t.Why
			for _, f := range t.Fallbacks {
				why += "; fallback: " + f
			}
			fmt.Fprintf(tw, "%s\n", why)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.printf("\n")
	}

	b.printf("files (exact sizes, header, metadata and padding included):\n")
	r.writeFiles(b, r.Files)

	if len(r.Rules) > 0 {
		b.printf("\nrules (first match wins; searched anywhere in the name):\n")
		for _, u := range r.Rules {
			b.printf("  rule %d (%s) %s=%s: ", u.Rule, u.Where, u.Pattern, u.Type)
			switch {
			case u.Unused:
				b.printf("matches no tensor\n")
				continue
			case u.Tensors == 0:
				b.printf("decides no tensor\n")
			default:
				b.printf("%d tensor(s), %s\n", u.Tensors, sizeString(u.Bytes))
			}
			if len(u.Overridden) > 0 {
				b.printf("      matched first but decided by an option: %s\n", nameList(u.Overridden))
			}
			if len(u.Shadowed) > 0 {
				var diff, same []string
				for _, s := range u.Shadowed {
					if s.SameType {
						same = append(same, s.Name)
					} else {
						diff = append(diff, fmt.Sprintf("%s (%s from rule %d)", s.Name, s.Type, s.By))
					}
				}
				if len(diff) > 0 {
					b.printf("      warning: loses %d tensor(s) to earlier rules with another type: %s\n", len(diff), nameList(diff))
				}
				if len(same) > 0 {
					b.printf("      also matches %d tensor(s) an earlier rule gives the same type: %s\n", len(same), nameList(same))
				}
			}
			if len(u.Unintended) > 0 {
				var list []string
				for _, x := range u.Unintended {
					s := fmt.Sprintf("%s (%q)", x.Name, x.Match)
					if !x.Won {
						s += " [an earlier rule decides it]"
					}
					list = append(list, s)
				}
				b.printf("      warning: probably unintended, matches inside a name component: %s\n", nameList(list))
				b.printf("      suggestion: anchor it: %s=%s\n", u.Suggestion, u.Type)
			}
		}
		if r.Unmatched > 0 {
			b.printf("  %d tensor(s) match no rule: the built-in choice decides them\n", r.Unmatched)
		}
	}

	if len(r.Placement) > 0 {
		b.printf("\nplacement (llama.cpp -ot form, first match wins):\n")
		for _, u := range r.Placement {
			b.printf("  %s %s=%s: %d tensor(s), %s", u.Where, u.Pattern, u.Device, u.Tensors, sizeString(u.Bytes))
			if u.Shadowed > 0 {
				b.printf("; %d more it matches are placed by earlier rules", u.Shadowed)
			}
			b.printf("\n")
		}
		b.printf("\ndevices (weights only; KV cache and compute buffers come on top):\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, d := range r.Devices {
			name := d.Device
			if name == "" {
				name = "(no rule)"
			}
			fmt.Fprintf(tw, "  %s\t%d tensor(s)\t%s\t", name, d.Tensors, sizeString(d.Bytes))
			if c := d.Budget; c != nil {
				if c.Fits {
					fmt.Fprintf(tw, "budget %s: fits, %s to spare", c.Text, humanSize(c.Margin))
				} else {
					fmt.Fprintf(tw, "budget %s: DOES NOT FIT, %s over", c.Text, humanSize(-c.Margin))
				}
			}
			fmt.Fprintf(tw, "\n")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	b.printf("\ntypes:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, u := range r.Types {
		fmt.Fprintf(tw, "  %s\t%d tensor(s)\t%s weights\t%s\t%.2f bpw\n", u.Type, u.Tensors, countString(u.Weights), sizeString(u.Bytes), u.BPW)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	t := r.Total
	b.printf("\ntotal: %s in %d file(s); tensor data %s for %s weights, %.2f bits per weight (input %s)\n",
		sizeString(t.Bytes), t.Files, sizeString(t.TensorBytes), countString(t.Weights), t.BPW, humanSize(t.InputBytes))
	if len(r.Devices) > 0 && hasBudget(r.Devices) {
		if r.Fits() {
			b.printf("budget: every device fits\n")
		} else {
			b.printf("budget: DOES NOT FIT on %s\n", strings.Join(overBudget(r.Devices), ", "))
		}
	}
	if ws := r.Warnings[min(opts.SkipWarnings, len(r.Warnings)):]; len(ws) > 0 {
		b.printf("\nwarnings:\n")
		for _, w := range ws {
			b.printf("  %s\n", w)
		}
	}
	return b.err
}

func (r *Report) writeFiles(b *errWriter, files []File) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, f := range files {
		skipped := ""
		if f.Skipped {
			skipped = " (exists: skipped, --partial-requant)"
		}
		if f.OtherPart {
			skipped = " (another part's: not written, --only-shards)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d tensor(s)\t%d bytes of tensor data + %d of header, metadata and padding%s\n",
			f.Path, sizeString(f.Bytes), f.Tensors, f.TensorBytes, f.Overhead, skipped)
	}
	_ = tw.Flush() // errors are kept by b
}

func hasBudget(ds []Device) bool {
	for _, d := range ds {
		if d.Budget != nil {
			return true
		}
	}
	return false
}

func overBudget(ds []Device) []string {
	var out []string
	for _, d := range ds {
		if d.Budget != nil && !d.Budget.Fits {
			out = append(out, d.Device)
		}
	}
	return out
}

// nameList joins names, listing at most listMax.
func nameList(names []string) string {
	if len(names) <= listMax {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:listMax], ", "), len(names)-listMax)
}

func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// sizeString is an exact byte count with a readable size beside it.
func sizeString(n int64) string {
	return fmt.Sprintf("%d bytes (%s)", n, humanSize(n))
}

// humanSize prints n in binary units with two decimals.
func humanSize(n int64) string {
	if n < 0 {
		return "-" + humanSize(-n)
	}
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// countString prints a weight count: 671.03B, 1.23M.
func countString(n int64) string {
	switch {
	case n >= 1e12:
		return fmt.Sprintf("%.2fT", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// errWriter keeps the first write error so printing code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
