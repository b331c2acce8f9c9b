// Package quantize turns float32 rows into the bytes of any ggml type the
// project implements. QuantizeRows is the one entry point every caller uses
// (Options.QuantizeRows with llama-quantize's switches); the algorithms live
// in one internal package per family.
package quantize

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/iqk"
	"github.com/gquant/gquant/quantize/internal/iquant"
	"github.com/gquant/gquant/quantize/internal/kernel"
	"github.com/gquant/gquant/quantize/internal/kquant"
	"github.com/gquant/gquant/quantize/internal/legacy"
	"github.com/gquant/gquant/quantize/internal/ternary"
	"github.com/gquant/gquant/quantize/internal/trellis"
)

// families are the kernel families, each giving its kernels for options.
var families = []func(kernel.Options) kernel.Set{legacy.Kernels, kquant.Kernels, iquant.Kernels, iqk.Kernels, trellis.Kernels, ternary.Kernels}

// kernels are the kernels of the zero Options, llama-quantize's default.
var kernels = makeKernels(kernel.Options{})

// kernelSets holds the kernels of other Options (kernel.Options ->
// kernel.Set), made on first use.
var kernelSets sync.Map

func makeKernels(o kernel.Options) kernel.Set {
	set := kernel.Set{}
	for _, family := range families {
		for t, f := range family(o) {
			if _, dup := set[t]; dup {
				panic("quantize: two kernels for " + t.String())
			}
			set[t] = f
		}
	}
	return set
}

// Options are the reference's quantize_user_data: switches llama-quantize
// passes to some kernels (Switches says whose bytes they change). The zero
// value is llama-quantize's default, which the package's functions
// (QuantizeRows ...) use; Options' methods of the same names quantize with
// other switches. Options travel with each call, so callers with different
// options may quantize at the same time.
type Options struct {
	SymmetricQ40 bool // --symmetric-q40: q4_0 in the [-7, 7] range, importance ignored
	SlowIQ2KS    bool // --slow-iq2ks: the original exhaustive iq2_ks search
}

// kernelOptions is o as the kernel families take it.
func (o Options) kernelOptions() kernel.Options {
	return kernel.Options{SymmetricQ40: o.SymmetricQ40, SlowIQ2KS: o.SlowIQ2KS}
}

// kernels returns the kernel set of o.
func (o Options) kernels() kernel.Set {
	if o == (Options{}) {
		return kernels
	}
	ko := o.kernelOptions()
	if set, ok := kernelSets.Load(ko); ok {
		return set.(kernel.Set)
	}
	set, _ := kernelSets.LoadOrStore(ko, makeKernels(ko))
	return set.(kernel.Set)
}

// ErrNeedsImatrix is wrapped by every refusal for want of importance data:
// QuantizeRows' for a type whose reference kernel does not run without an
// importance matrix (formats.TypeInfo.NeedsImatrix), and the pipeline's for
// a file type or tensor llama-quantize refuses without one.
var ErrNeedsImatrix = errors.New("quantize: importance matrix needed")

// ErrKernelNeedsImatrix is the refusal of a type whose kernel has no form
// without importance data (formats.TypeInfo.NeedsImatrix), which no rule
// lifts: llama-quantize asserts there. It wraps ErrNeedsImatrix.
var ErrKernelNeedsImatrix = fmt.Errorf("%w by the kernel", ErrNeedsImatrix)

// ErrImatrixRefused is wrapped by every refusal of importance data for a
// type whose reference kernel stops on it (formats.TypeInfo.ImatrixFails:
// the ARM repacks of q4_0): QuantizeRows' and the pipeline's, for a tensor
// that the importance matrix has data for.
var ErrImatrixRefused = errors.New("quantize: type takes no importance matrix")

// ErrUnsupported is returned for types without a quantizer.
var ErrUnsupported = errors.New("quantize: no quantizer for type")

// Supported reports whether QuantizeRows can produce t.
func Supported(t formats.Type) bool { return kernels[t] != nil }

// SupportedTypes lists the types QuantizeRows can produce, in id order.
func SupportedTypes() []formats.Type {
	var out []formats.Type
	for t := range kernels {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FailsOnZeroImportance reports whether the reference's kernel for t fails on
// an all-zero importance slice (an expert that never saw calibration data):
// the descriptor's ZeroImportanceFails. Callers replace such a slice by
// uniform importance, as mainline llama.cpp does; every other type handles
// it deterministically and gets it as is.
func FailsOnZeroImportance(t formats.Type) bool {
	info, _ := t.Info()
	return info.ZeroImportanceFails
}

// TinyImportanceNaN reports whether t's kernel writes NaN scales for a
// block whose importance weights are all zero or tiny (the descriptor's
// TinyImportanceNaN; TestTinyImportanceNaN holds it to the kernels).
func TinyImportanceNaN(t formats.Type) bool {
	info, _ := t.Info()
	return info.TinyImportanceNaN
}

// UniformWhereNotFinite quantizes again, with uniform importance, every
// group of rows of dst (nrows rows of t quantized from src) whose encoding
// is not finite, and returns the first rows of the groups it redid and
// whether every row is finite now. llama-quantize stops the whole run on
// such rows ("quantized data validation failed"); this is what gquant
// writes there, the same for every caller (a run, fit's measurements).
// deq is scratch for one group of dequantized rows (Interleave x ne0).
func (o Options) UniformWhereNotFinite(dst []byte, t formats.Type, nrows, ne0 int, src, deq []float32) (redone []int, finite bool, err error) {
	rs, err := t.RowSize(int64(ne0))
	if err != nil {
		return nil, false, err
	}
	g := t.Interleave()
	deq = deq[:g*ne0]
	var uniform []float32
	finite = true
	for r := 0; r+g <= nrows; r += g {
		rows := dst[r*int(rs) : (r+g)*int(rs)]
		if err := formats.DequantizeRows(t, ne0, rows, deq); err != nil {
			return nil, false, err
		}
		if formats.FirstNonFinite(deq) < 0 {
			continue
		}
		if uniform == nil {
			uniform = make([]float32, ne0)
			for i := range uniform {
				uniform[i] = 1
			}
		}
		if _, err := o.QuantizeRowsReport(rows, t, g, ne0, src[r*ne0:(r+g)*ne0], uniform); err != nil {
			return nil, false, err
		}
		if err := formats.DequantizeRows(t, ne0, rows, deq); err != nil {
			return nil, false, err
		}
		if formats.FirstNonFinite(deq) >= 0 {
			finite = false
			continue
		}
		redone = append(redone, r)
	}
	return redone, finite, nil
}

// RowError reports a row that cannot be quantized.
type RowError struct {
	Row    int // row index within the call
	Column int
	Value  float32
}

func (e *RowError) Error() string {
	return fmt.Sprintf("row %d column %d: value %v is not finite", e.Row, e.Column, e.Value)
}

// QuantizeRows quantizes nrows rows of ne0 weights as one reference
// ggml_quantize_chunk call and returns the bytes. Interleaved types need
// nrows to be a multiple of their row count. imatrix is nil or holds ne0
// importance weights. It uses llama-quantize's default switches;
// Options.QuantizeRows takes others.
func QuantizeRows(t formats.Type, nrows, ne0 int, src, imatrix []float32) ([]byte, error) {
	return Options{}.QuantizeRows(t, nrows, ne0, src, imatrix)
}

// QuantizeRowsInto is QuantizeRows writing into dst, which must hold exactly
// nrows rows of t. When it returns an error, dst may hold part of the
// output. It drops the Report; callers that quantize models use
// QuantizeRowsReport and warn about its Fallback.
func QuantizeRowsInto(dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32) error {
	return Options{}.QuantizeRowsInto(dst, t, nrows, ne0, src, imatrix)
}

// QuantizeRows is the package's QuantizeRows with the switches of o.
func (o Options) QuantizeRows(t formats.Type, nrows, ne0 int, src, imatrix []float32) ([]byte, error) {
	rs, err := t.RowSize(int64(ne0))
	if err != nil {
		return nil, err
	}
	dst := make([]byte, int(rs)*nrows)
	if err := o.QuantizeRowsInto(dst, t, nrows, ne0, src, imatrix); err != nil {
		return nil, err
	}
	return dst, nil
}

// QuantizeRowsInto is the package's QuantizeRowsInto with the switches of o.
func (o Options) QuantizeRowsInto(dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32) error {
	_, err := o.QuantizeRowsReport(dst, t, nrows, ne0, src, imatrix)
	return err
}

// Report is what a call says besides its bytes and its error.
type Report struct {
	// Fallback is nil, or the rows that the reference cannot quantize and
	// that got a substitute encoding instead.
	Fallback *Fallback
}

// A Fallback is a warning about rows the reference cannot quantize: its
// kernel stops the whole process on them (an assertion). We write a valid,
// deterministic substitute for the parts it cannot encode, described in
// Reason; every other row, and the rest of these rows, is the reference's.
type Fallback struct {
	Type formats.Type
	// Rows, ascending: of the call (QuantizeRowsReport), or of the tensor
	// where pipeline reports them.
	Rows   []int64
	Reason string // what the reference does there and what was written
}

// String names the rows (the first ten, then a count) and the reason.
func (f *Fallback) String() string {
	var b strings.Builder
	for i, r := range f.Rows {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(f.Rows)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, r)
	}
	row := "rows"
	if len(f.Rows) == 1 {
		row = "row"
	}
	return fmt.Sprintf("%s %s %s: %s", f.Type, row, b.String(), f.Reason)
}

// QuantizeRowsReport is QuantizeRowsInto that also reports rows written by a
// fallback where the reference would stop (Report.Fallback): the call still
// succeeds, and a caller quantizing a model warns once per tensor.
func QuantizeRowsReport(dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32) (Report, error) {
	return Options{}.QuantizeRowsReport(dst, t, nrows, ne0, src, imatrix)
}

// QuantizeRowsReport is the package's QuantizeRowsReport with the switches
// of o.
func (o Options) QuantizeRowsReport(dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32) (Report, error) {
	err := quantizeRowsInto(o.kernels()[t], dst, t, nrows, ne0, src, imatrix)
	var fb *iquant.FallbackError
	if errors.As(err, &fb) {
		rows := make([]int64, len(fb.Rows))
		for i, r := range fb.Rows {
			rows[i] = int64(r)
		}
		return Report{Fallback: &Fallback{Type: t, Rows: rows, Reason: fb.Reason}}, nil
	}
	return Report{}, err
}

// quantizeRowsInto checks a call and runs f, t's kernel (nil for none).
func quantizeRowsInto(f kernel.Func, dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32) error {
	if f == nil {
		return fmt.Errorf("%w %s", ErrUnsupported, t)
	}
	rs, err := t.RowSize(int64(ne0))
	if err != nil {
		return err
	}
	if nrows < 0 || nrows%t.Interleave() != 0 {
		return fmt.Errorf("quantize: %s stores rows in groups of %d; %d rows is not a multiple", t, t.Interleave(), nrows)
	}
	if len(src) != nrows*ne0 {
		return fmt.Errorf("quantize: %d source values for %d rows of %d", len(src), nrows, ne0)
	}
	if len(dst) != int(rs)*nrows {
		return fmt.Errorf("quantize: destination of %d bytes for %d rows of %d bytes", len(dst), nrows, rs)
	}
	if imatrix != nil && len(imatrix) != ne0 {
		return fmt.Errorf("quantize: importance matrix has %d values for rows of %d", len(imatrix), ne0)
	}
	if imatrix == nil && mustInfo(t).NeedsImatrix {
		return fmt.Errorf("%w: the %s kernel does not run without one", ErrKernelNeedsImatrix, t)
	}
	if imatrix != nil && mustInfo(t).ImatrixFails {
		return fmt.Errorf("%w: the %s kernel stops on one", ErrImatrixRefused, t)
	}
	if nrows == 0 {
		// The reference's loops run zero times; some of our kernels divide
		// by the row count.
		return nil
	}
	// Kernels that see every value's exponent anyway check the input as
	// they go; the others get it checked here first. Either way a
	// non-finite value is reported before a bad importance weight.
	selfChecked := legacy.ChecksFinite(t)
	if !selfChecked {
		if err := checkFinite(src, ne0); err != nil {
			return err
		}
	}
	if i := firstBadWeight(imatrix); i >= 0 {
		if err := checkFinite(src, ne0); err != nil {
			return err
		}
		return fmt.Errorf("quantize: importance weight %d is %v", i, imatrix[i])
	}
	err = runKernel(f, t, dst, src, nrows, ne0, imatrix)
	if selfChecked && errors.Is(err, legacy.ErrNotFinite) {
		if err := checkFinite(src, ne0); err != nil {
			return err
		}
		return fmt.Errorf("quantize: %s kernel reported a non-finite value in finite input", t)
	}
	return err
}

// firstBadWeight returns the index of the first importance weight that is
// negative, infinite or NaN, or -1. As it runs on every call, it first
// takes the largest bit pattern with SIMD: below that of +Inf every weight
// is +0 or positive and finite, and only otherwise (a bad weight, or a -0,
// which is fine) are the weights tested one by one.
func firstBadWeight(w []float32) int {
	if formats.MaxBits(w) < 0x7f800000 {
		return -1
	}
	for i, v := range w {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
			return i
		}
	}
	return -1
}

// OverflowError reports a call the kernel could not finish: the searches work
// in float32 as the reference does, and for values so large that the
// weighted squared errors overflow (from about 1e16 on) every candidate is
// at an infinite distance, where the reference stops on an assertion. Row
// and Column locate the largest magnitude within the call.
type OverflowError struct {
	Type   formats.Type
	Row    int
	Column int
	Value  float32
	Cause  string // the search that found nothing, as the kernel says
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("row %d column %d: value %v is too large for %s (its float32 search overflows): %s",
		e.Row, e.Column, e.Value, e.Type, e.Cause)
}

// runKernel calls a kernel and turns the *kernel.OverflowError it returns
// where its float32 searches overflow into an *OverflowError, so that a
// caller gets an error naming the value. Every other result goes back as
// it is.
func runKernel(f kernel.Func, t formats.Type, dst []byte, src []float32, nrows, ne0 int, imatrix []float32) error {
	err := f(dst, src, nrows, ne0, imatrix)
	var o *kernel.OverflowError
	if !errors.As(err, &o) {
		return err
	}
	big := 0
	for i, v := range src {
		if math.Abs(float64(v)) > math.Abs(float64(src[big])) {
			big = i
		}
	}
	return &OverflowError{Type: t, Row: big / ne0, Column: big % ne0, Value: src[big], Cause: o.Cause}
}

// checkFinite returns a *RowError for the first infinity or NaN in src, rows
// of ne0 values, or nil.
func checkFinite(src []float32, ne0 int) error {
	if i := formats.FirstNonFinite(src); i >= 0 {
		return &RowError{Row: i / ne0, Column: i % ne0, Value: src[i]}
	}
	return nil
}

func mustInfo(t formats.Type) formats.TypeInfo {
	info, _ := t.Info()
	return info
}

// Lead is for callers that quantize one reference call in pieces (see
// CallScoped): iq1_m and iq1_m_r4 carry state from row to row within a
// call, which a sub-block of near-zeros stores, so a piece that starts
// inside a call must be quantized after the rows back to where that state
// was last set, whose bytes are then dropped. Lead walks back over those
// rows, a row group at a time.
type Lead struct{ l iquant.Lead }

// NewLead returns a Lead for t, or nil if t's rows carry no state.
func NewLead(t formats.Type) *Lead {
	l, ok := iquant.NewLead(t)
	if !ok {
		return nil
	}
	return &Lead{l}
}

// Walk takes the row group before those walked so far (t.Interleave() rows
// of ne0 values, and the importance data the piece is quantized with) and
// reports whether the kernel must see the group (sets: it sets state no
// nearer row sets; the others can be left out, whatever they hold) and
// whether the rows walked now suffice (done).
func (l *Lead) Walk(rows []float32, ne0 int, imatrix []float32) (sets, done bool) {
	return l.l.Walk(rows, ne0, imatrix)
}
