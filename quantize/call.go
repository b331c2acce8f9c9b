package quantize

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kquant"
)

// CallScoped reports whether t's bytes for a row depend on the other rows of
// the same kernel call: only q2_K without an importance matrix, where the
// reference looks for ternary weights across the whole call. Callers that
// split such a call into pieces scan it first (NewCallState) and quantize
// each piece with QuantizeRowsInCall. iq1_m and iq1_m_r4 carry state from
// row to row too, but only as far back as it was last set: callers may
// split their calls when each piece is quantized after the rows before it
// that Lead asks for. For every other type a call over rows A then B equals
// a call over A followed by a call over B, so callers may split and merge
// calls freely (in whole row groups).
func CallScoped(t formats.Type, hasImatrix bool) bool {
	return t == formats.Q2_K && !hasImatrix
}

// CallState is what the bytes of the rows of a call-scoped type's call
// (CallScoped) depend on beyond the rows themselves: for q2_K without
// importance data, the largest magnitude of the whole call and whether its
// weights look ternary. A caller that quantizes such a call in pieces
// scans the whole call, ScanMax over all of its rows and then ScanSums over
// all of them in order, and then quantizes each piece with
// QuantizeRowsInCall. The pieces' bytes are then those of one call over
// all the rows.
type CallState struct{ check kquant.TernaryCheck }

// NewCallState returns an empty CallState for t, or nil when t's calls may
// be split freely (CallScoped is false).
func NewCallState(t formats.Type, hasImatrix bool) *CallState {
	if !CallScoped(t, hasImatrix) {
		return nil
	}
	return &CallState{}
}

// ScanMax takes the next rows of the call (any order) in the first pass.
func (c *CallState) ScanMax(rows []float32) { c.check.AddMax(rows) }

// ScanSums takes the next rows of the call in the second pass, which sees
// the rows in their order, after ScanMax has seen all of them.
func (c *CallState) ScanSums(rows []float32) { c.check.AddSums(rows) }

// Matters reports whether the scanned state gives any row other bytes than
// an empty CallState does (for q2_K: the call's weights look ternary, which
// is rare). A caller may quantize pieces with an empty CallState before the
// scan ends, and redo them only when the scan's result Matters.
func (c *CallState) Matters() bool { return c.check.Ternary() }

// QuantizeRowsInCall is QuantizeRowsReport for rows that are part of a
// larger call of a call-scoped type, scanned into c (see CallState). With
// c nil, or a type whose calls split freely, it is QuantizeRowsReport.
func (o Options) QuantizeRowsInCall(dst []byte, t formats.Type, nrows, ne0 int, src, imatrix []float32, c *CallState) (Report, error) {
	if c == nil || !CallScoped(t, imatrix != nil) {
		return o.QuantizeRowsReport(dst, t, nrows, ne0, src, imatrix)
	}
	f := kquant.Q2KInCall(o.kernelOptions(), &c.check)
	return Report{}, quantizeRowsInto(f, dst, t, nrows, ne0, src, imatrix)
}
