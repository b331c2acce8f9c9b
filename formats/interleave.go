package formats

import "fmt"

// An interleaver converts between Interleave() consecutive rows of the base
// type (base, concatenated row after row) and one row group of the
// interleaved type (group). Both funcs see exactly one group.
type interleaver struct {
	interleave   func(group, base []byte, ne0 int)
	deinterleave func(base, group []byte, ne0 int)
	// rowMultiple, when set, is what ne0 must be a multiple of beyond the
	// block size (bf16_r16 interleaves pairs of weights).
	rowMultiple int
}

// checkRow reports a row length the layout of t cannot hold.
func (iv interleaver) checkRow(t Type, ne0 int) error {
	if iv.rowMultiple > 1 && ne0%iv.rowMultiple != 0 {
		return fmt.Errorf("formats: %s: row of %d weights is not a multiple of %d", t, ne0, iv.rowMultiple)
	}
	return nil
}

var interleavers = map[Type]interleaver{}

// registerInterleaver is called from init functions of the per-family files.
func registerInterleaver(t Type, iv interleaver) {
	if _, dup := interleavers[t]; dup {
		panic("formats: interleaver registered twice for " + t.String())
	}
	interleavers[t] = iv
}

// CanInterleave reports whether Interleave and Deinterleave support t.
func CanInterleave(t Type) bool { return interleavers[t].interleave != nil }

func groupSizes(t Type, ne0 int) (baseBytes, groupBytes int, err error) {
	info, ok := t.Info()
	if !ok || info.Interleave < 2 {
		return 0, 0, fmt.Errorf("formats: %s is not a row-interleaved type", t)
	}
	if err := interleavers[t].checkRow(t, ne0); err != nil {
		return 0, 0, err
	}
	br, err := info.Base.RowSize(int64(ne0))
	if err != nil {
		return 0, 0, err
	}
	gr, err := t.RowSize(int64(ne0))
	if err != nil {
		return 0, 0, err
	}
	return int(br) * info.Interleave, int(gr) * info.Interleave, nil
}

// Interleave converts rows of t.Base() in base (a whole number of groups of
// t.Interleave() rows, ne0 weights each) into t's layout in group.
func Interleave(t Type, ne0 int, group, base []byte) error {
	iv := interleavers[t]
	if iv.interleave == nil {
		return fmt.Errorf("formats: no interleaver for %s", t)
	}
	bb, gb, err := groupSizes(t, ne0)
	if err != nil {
		return err
	}
	if len(base)%bb != 0 || len(group) != len(base)/bb*gb {
		return fmt.Errorf("formats: %s: %d base bytes / %d group bytes are not whole %d-row groups of %d weights", t, len(base), len(group), t.Interleave(), ne0)
	}
	for i := 0; i < len(base)/bb; i++ {
		iv.interleave(group[i*gb:(i+1)*gb], base[i*bb:(i+1)*bb], ne0)
	}
	return nil
}

// Deinterleave is the inverse of Interleave.
func Deinterleave(t Type, ne0 int, base, group []byte) error {
	iv := interleavers[t]
	if iv.deinterleave == nil {
		return fmt.Errorf("formats: no de-interleaver for %s", t)
	}
	bb, gb, err := groupSizes(t, ne0)
	if err != nil {
		return err
	}
	if len(group)%gb != 0 || len(base) != len(group)/gb*bb {
		return fmt.Errorf("formats: %s: %d group bytes / %d base bytes are not whole %d-row groups of %d weights", t, len(group), len(base), t.Interleave(), ne0)
	}
	for i := 0; i < len(group)/gb; i++ {
		iv.deinterleave(base[i*bb:(i+1)*bb], group[i*gb:(i+1)*gb], ne0)
	}
	return nil
}
