package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/bytesize"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "inspect",
		Summary: "show a GGUF file's metadata, tensors and size per type",
		JSON:    true,
		Run:     runInspect,
	})
}

// How much of long values the report shows.
const (
	inspectArrayHead = 8   // first elements of an array
	inspectTextMax   = 120 // characters of a string value in text output
)

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("inspect", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON document instead of text (schema gquant.inspect/1)")
	full := fs.Bool("full", false, "with --json: every element of array values (the text and plain --json show the first "+strconv.Itoa(inspectArrayHead)+")")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: gquant inspect FILE [--json [--full]]")
		fmt.Fprintln(w, "\nShows a GGUF file's metadata, one line per tensor, a count per type, the total")
		fmt.Fprintln(w, "size and bits per weight. Give any shard of a split model to see the whole set.")
		fmt.Fprintln(w, "\noptions:")
		fs.PrintDefaults()
		cli.PrintExamples(w,
			cli.Example{About: "metadata, tensors, and size per type of a quantized model",
				Line: "gquant inspect model-Q4_K_M.gguf"},
			cli.Example{About: "the types of a shard set's tensors, for a script",
				Line: "gquant inspect --json model-00001-of-00003.gguf | jq -r '.tensors[] | .name + \" \" + .type'"},
		)
	}
	const program = "gquant inspect"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() != 1 {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("want one FILE, got %d argument(s)", fs.NArg()))
	}
	if *full && !*asJSON {
		return cli.UsageError(program, fs, stderr, fmt.Errorf("--full lists whole arrays in the JSON document: it needs --json"))
	}
	m, err := gguf.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "gquant inspect: %v\n", err)
		return 1
	}
	defer m.Close()
	rep := newInspectReport(m, *full)
	if *asJSON {
		return jsonStatus(program, stdout, stderr, rep)
	}
	rep.writeText(stdout)
	return 0
}

// inspectReport is what inspect shows, in text or as JSON.
type inspectReport struct {
	Schema        string             `json:"schema"`
	Path          string             `json:"path"`
	Version       uint32             `json:"version"`
	Alignment     int64              `json:"alignment"`
	FileBytes     int64              `json:"file_bytes"`
	Shards        []inspectShard     `json:"shards"`
	Metadata      []inspectKV        `json:"metadata"`
	Tensors       []inspectTensor    `json:"tensors"`
	Types         []inspectTypeCount `json:"types"`
	TensorBytes   int64              `json:"tensor_bytes"`
	Weights       int64              `json:"weights"`
	BitsPerWeight float64            `json:"bits_per_weight"`
	Warnings      []cli.Warning      `json:"warnings"`
}

type inspectShard struct {
	Index      int    `json:"index"` // from 1, as in the file names
	Path       string `json:"path"`
	Tensors    int    `json:"tensors"`
	Bytes      int64  `json:"bytes"`
	DataOffset int64  `json:"data_offset"`
}

// inspectKV is one metadata key and its value.
type inspectKV struct {
	Key string `json:"key"`
	inspectValue
}

// inspectValue is a metadata value. Scalars have Value; arrays have
// ElemType, Len and their first few elements in Head, or all of them in
// Values (--full). An element of an array of arrays is itself an
// inspectValue (an object), so that --full gives every element at every
// depth and a script reads nested arrays as JSON, not as text.
type inspectValue struct {
	Type     string `json:"type"`
	Value    any    `json:"value,omitempty"`
	ElemType string `json:"elem_type,omitempty"`
	Len      *int   `json:"len,omitempty"`
	Head     []any  `json:"head,omitempty"`
	Values   []any  `json:"values,omitempty"`
}

type inspectTensor struct {
	Index int     `json:"index"` // from 1, the text's # column
	Name  string  `json:"name"`
	Type  string  `json:"type"`
	Shape []int64 `json:"shape"`
	Bytes int64   `json:"bytes"`
	// Offset is the absolute byte offset of the data in its file.
	Offset int64 `json:"offset"`
	// Shard is the 1-based shard number, as in the file names.
	Shard int `json:"shard"`
}

type inspectTypeCount struct {
	Type          string  `json:"type"`
	Tensors       int     `json:"tensors"`
	Bytes         int64   `json:"bytes"`
	Weights       int64   `json:"weights"`
	BitsPerWeight float64 `json:"bits_per_weight"`
}

func newInspectReport(m *gguf.Model, full bool) *inspectReport {
	first := m.Shards[0]
	rep := &inspectReport{
		Schema:    cli.Schema(1, "inspect"),
		Warnings:  []cli.Warning{},
		Path:      m.Path,
		Version:   first.Version,
		Alignment: first.Alignment,
		FileBytes: m.Size(),
		Metadata:  []inspectKV{},
		Tensors:   make([]inspectTensor, 0, len(m.Tensors)),
	}
	for i, s := range m.Shards {
		rep.Shards = append(rep.Shards, inspectShard{Index: i + 1, Path: s.Path, Tensors: len(s.Tensors), Bytes: s.Size, DataOffset: s.DataOffset})
	}
	for _, kv := range m.Metadata {
		rep.Metadata = append(rep.Metadata, newInspectKV(kv, full))
	}
	byType := map[formats.Type]*inspectTypeCount{}
	for i, t := range m.Tensors {
		rep.Tensors = append(rep.Tensors, inspectTensor{
			Index: i + 1, Name: t.Name, Type: t.Type.String(), Shape: t.Shape, Bytes: t.Size,
			Offset: m.Shards[t.Shard].DataOffset + t.Offset, Shard: t.Shard + 1,
		})
		c := byType[t.Type]
		if c == nil {
			c = &inspectTypeCount{Type: t.Type.String()}
			byType[t.Type] = c
		}
		c.Tensors++
		c.Bytes += t.Size
		c.Weights += t.Elements()
		rep.TensorBytes += t.Size
		rep.Weights += t.Elements()
	}
	types := make([]formats.Type, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	rep.Types = []inspectTypeCount{}
	for _, t := range types {
		c := byType[t]
		c.BitsPerWeight = bitsPerWeight(c.Bytes, c.Weights)
		rep.Types = append(rep.Types, *c)
	}
	rep.BitsPerWeight = bitsPerWeight(rep.TensorBytes, rep.Weights)
	return rep
}

func bitsPerWeight(bytes, weights int64) float64 {
	if weights == 0 {
		return 0
	}
	return math.Round(float64(bytes)*8/float64(weights)*1e4) / 1e4
}

func newInspectKV(kv gguf.KV, full bool) inspectKV {
	return inspectKV{Key: kv.Key, inspectValue: newInspectValue(kv.Value, full)}
}

// newInspectValue describes v; the reader bounds how deep arrays nest.
func newInspectValue(v gguf.Value, full bool) inspectValue {
	out := inspectValue{Type: v.Type().String()}
	if v.Type() != gguf.TypeArray {
		out.Value = jsonScalar(v)
		return out
	}
	n := v.Len()
	out.ElemType = v.ElemType().String()
	out.Len = &n
	elems, limit := &out.Head, inspectArrayHead
	if full {
		elems, limit = &out.Values, n
	}
	*elems = []any{}
	for i := 0; i < n && i < limit; i++ {
		e := v.Elem(i)
		if e.Type() == gguf.TypeArray {
			inner := newInspectValue(e, full)
			*elems = append(*elems, &inner)
		} else {
			*elems = append(*elems, jsonScalar(e))
		}
	}
	return out
}

// jsonScalar converts a scalar value to what encoding/json prints
// faithfully; non-finite floats, which JSON cannot hold, become strings.
func jsonScalar(v gguf.Value) any {
	if f, ok := v.Float(); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return v.String()
		}
		// Shortest text that reads back as the same float32/float64
		// (1e-06, not 9.999999974752427e-07).
		return json.Number(v.String())
	}
	if b, ok := v.Bool(); ok {
		return b
	}
	if s, ok := v.Text(); ok {
		return s
	}
	if i, ok := v.Int(); ok {
		return i
	}
	u, _ := v.Uint()
	return u
}

// writeText prints the report as text. Names, keys and paths come from the
// file and may hold any bytes: they are escaped (cli.EscapeInline), a
// newline or tab in them too, so that each stays on its row and in its
// column.
func (rep *inspectReport) writeText(w io.Writer) {
	esc := cli.EscapeInline
	fmt.Fprintf(w, "%s: GGUF v%d, %d tensors, %d metadata keys, alignment %d, %d bytes\n",
		esc(rep.Path), rep.Version, len(rep.Tensors), len(rep.Metadata), rep.Alignment, rep.FileBytes)
	sharded := len(rep.Shards) > 1
	if sharded {
		fmt.Fprintf(w, "\nshards: %d\n", len(rep.Shards))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for i, s := range rep.Shards {
			fmt.Fprintf(tw, "%d\t%s\t%d tensors\t%d bytes\t\n", i+1, esc(s.Path), s.Tensors, s.Bytes)
		}
		tw.Flush()
	}

	fmt.Fprintf(w, "\nmetadata: %d keys\n", len(rep.Metadata))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range rep.Metadata {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", esc(kv.Key), kv.Type, esc(kv.text()))
	}
	tw.Flush()

	fmt.Fprintf(w, "\ntensors: %d\n", len(rep.Tensors))
	// Names, types and shapes read best left-aligned, numbers right-aligned.
	wNum, wName, wType, wShape, wBytes, wOff := len("#"), len("name"), len("type"), len("shape"), len("bytes"), len("offset")
	names, types := make([]string, len(rep.Tensors)), make([]string, len(rep.Tensors))
	for i, t := range rep.Tensors {
		names[i], types[i] = esc(t.Name), esc(t.Type)
		wNum = max(wNum, len(strconv.Itoa(i+1)))
		wName = max(wName, len(names[i]))
		wType = max(wType, len(types[i]))
		wShape = max(wShape, len(shapeText(t.Shape)))
		wBytes = max(wBytes, len(strconv.FormatInt(t.Bytes, 10)))
		wOff = max(wOff, len(strconv.FormatInt(t.Offset, 10)))
	}
	row := func(num, name, typ, shape, bytes, off, shard string) {
		line := fmt.Sprintf("  %*s  %-*s  %-*s  %-*s  %*s  %*s", wNum, num, wName, name, wType, typ, wShape, shape, wBytes, bytes, wOff, off)
		if sharded {
			line += "  " + shard
		}
		fmt.Fprintln(w, line)
	}
	row("#", "name", "type", "shape", "bytes", "offset", "shard")
	for i, t := range rep.Tensors {
		row(strconv.Itoa(i+1), names[i], types[i], shapeText(t.Shape), strconv.FormatInt(t.Bytes, 10), strconv.FormatInt(t.Offset, 10), strconv.Itoa(t.Shard))
	}

	fmt.Fprintf(w, "\ntypes:\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, c := range rep.Types {
		fmt.Fprintf(tw, "%s\t%d tensors\t%d bytes\t%d weights\t%.4f bits per weight\t\n", esc(c.Type), c.Tensors, c.Bytes, c.Weights, c.BitsPerWeight)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal: %d tensors, %d bytes of tensor data (%s), %d weights, %.4f bits per weight\n",
		len(rep.Tensors), rep.TensorBytes, humanBytes(rep.TensorBytes), rep.Weights, rep.BitsPerWeight)
}

// text renders a metadata value on one line: long strings cut, arrays as
// type, length and first elements.
func (kv inspectKV) text() string {
	if kv.Len == nil {
		if s, ok := kv.Value.(string); ok {
			if len(s) > inspectTextMax {
				return strconv.Quote(cutText(s, inspectTextMax)) + fmt.Sprintf("... (%d bytes)", len(s))
			}
			return strconv.Quote(s)
		}
		return fmt.Sprint(kv.Value)
	}
	return fmt.Sprintf("[%s x %d] [%s]", kv.ElemType, *kv.Len, kv.elemsText())
}

// elemsText lists an array's first elements, comma-separated, with "..."
// when there are more; an inner array reads [TYPE x LEN: ELEMENTS].
func (v *inspectValue) elemsText() string {
	parts := make([]string, 0, len(v.Head)+1)
	for _, e := range v.Head {
		switch e := e.(type) {
		case *inspectValue:
			parts = append(parts, fmt.Sprintf("[%s x %d: %s]", e.ElemType, *e.Len, e.elemsText()))
		case string:
			if v.ElemType == "str" {
				if len(e) > 32 {
					e = cutText(e, 32) + "..."
				}
				e = strconv.Quote(e)
			}
			parts = append(parts, e)
		default:
			parts = append(parts, fmt.Sprint(e))
		}
	}
	if *v.Len > len(v.Head) {
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}

// cutText returns s cut to at most n bytes, not inside a UTF-8 sequence
// (cut in one, the rest of the character showed as \x escapes).
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut > n-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 || !utf8.RuneStart(s[cut]) {
		return s[:n] // not UTF-8 here: cut where asked
	}
	return s[:cut]
}

func shapeText(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, " x ")
}

func humanBytes(n int64) string { return bytesize.Format(n) }
