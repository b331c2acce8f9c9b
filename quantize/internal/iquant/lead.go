package iquant

import "github.com/gquant/gquant/formats"

// iq1_m and iq1_m_r4 carry state from row to row within a call: the shift
// of the last search at each sub-block position (iq1_m), or of the last
// search of a low and of a high half block (iq1_m_r4). A sub-block skipped
// as near zero, in a block that is not skipped whole, stores that shift.
// A caller that quantizes a reference call in pieces must therefore let
// the kernel see, before a piece, the rows back to where every such state
// was last set: then the kernel sets it itself as the reference's call
// did. Lead walks back over those rows.

// Lead tracks, for a type with such state, which of it the rows walked so
// far (backwards from a piece) set. Its zero value tracks nothing.
type Lead struct {
	t    formats.Type
	open uint32 // bits of the state not yet set by a row walked
}

// NewLead returns a Lead for t, or false if t carries no state between
// rows.
func NewLead(t formats.Type) (Lead, bool) {
	switch t {
	case formats.IQ1_M:
		return Lead{t: t, open: 1<<16 - 1}, true
	case formats.IQ1_M_R4:
		return Lead{t: t, open: 3}, true
	}
	return Lead{}, false
}

// Walk takes the row group before those walked so far (t.Interleave() rows
// of ne0 values, with the importance data the kernel gets) and reports
// whether it sets state that no nearer row sets (sets: the kernel must see
// it; a group that does not leaves the state as the nearer rows find it,
// since a search's result does not depend on the state before it) and
// whether the rows walked now set all the state (done).
func (l *Lead) Walk(rows []float32, ne0 int, imatrix []float32) (sets, done bool) {
	before := l.open
	switch l.t {
	case formats.IQ1_M:
		for ibl := 0; ibl < ne0/qkK; ibl++ {
			for ib := 0; ib < 16; ib++ {
				if iq1mSearched(rows[qkK*ibl+16*ib : qkK*ibl+16*ib+16]) {
					l.open &^= 1 << ib
				}
			}
		}
	case formats.IQ1_M_R4:
		const bs = 32
		for k := 0; k < 4; k++ {
			for ibl := 0; ibl < ne0/bs; ibl++ {
				// iq1mR4Kernel's tests, with its sums.
				lo, hi := iq1mR4HalfSquares(rows[k*ne0+bs*ibl : k*ne0+bs*ibl+bs])
				if lo+hi < 1e-14 {
					continue
				}
				if lo > 1e-14 {
					l.open &^= 1
				}
				if hi > 1e-14 {
					l.open &^= 2
				}
			}
		}
	}
	return l.open != before, l.open == 0
}
