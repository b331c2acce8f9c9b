package formats

import "fmt"

// A rowGroupDequantizer turns one row group of t (Interleave() rows, ne0
// weights each) into float32, row after row, in dst.
type rowGroupDequantizer func(dst []float32, src []byte, ne0 int)

var dequantizers = map[Type]rowGroupDequantizer{}

// registerDequantizer is called from init functions of the per-family files.
func registerDequantizer(t Type, f rowGroupDequantizer) {
	if _, dup := dequantizers[t]; dup {
		panic("formats: dequantizer registered twice for " + t.String())
	}
	dequantizers[t] = f
}

// CanDequantize reports whether DequantizeRows supports t.
func CanDequantize(t Type) bool {
	if dequantizers[t] != nil {
		return true
	}
	return t.Known() && t.IsInterleaved() && interleavers[t].deinterleave != nil && dequantizers[t.Base()] != nil
}

// DequantizeRows converts whole rows of t (ne0 weights each) in src into
// float32 in dst. src must hold a whole number of row groups (Interleave()
// rows); dst must have room for every weight. Interleaved types without a
// dedicated dequantizer are un-interleaved, then dequantized as their base type.
func DequantizeRows(t Type, ne0 int, src []byte, dst []float32) error {
	info, ok := t.Info()
	if !ok {
		return fmt.Errorf("%w id %d", ErrUnknownType, uint32(t))
	}
	rowSize, err := t.RowSize(int64(ne0))
	if err != nil {
		return err
	}
	groupBytes := int(rowSize) * info.Interleave
	if groupBytes == 0 || len(src)%groupBytes != 0 {
		return fmt.Errorf("formats: %s: %d bytes is not a whole number of %d-row groups of %d weights", t, len(src), info.Interleave, ne0)
	}
	groups := len(src) / groupBytes
	if len(dst) < groups*info.Interleave*ne0 {
		return fmt.Errorf("formats: %s: destination holds %d weights, need %d", t, len(dst), groups*info.Interleave*ne0)
	}
	f := dequantizers[t]
	if f == nil && info.Interleave > 1 && interleavers[t].deinterleave != nil && dequantizers[info.Base] != nil {
		// Un-interleave one group into base rows, then use the base dequantizer.
		if err := interleavers[t].checkRow(t, ne0); err != nil {
			return err
		}
		baseRow, err := info.Base.RowSize(int64(ne0))
		if err != nil {
			return err
		}
		tmp := make([]byte, int(baseRow)*info.Interleave)
		base, de := dequantizers[info.Base], interleavers[t].deinterleave
		f = func(dst []float32, src []byte, ne0 int) {
			de(tmp, src, ne0)
			// The base dequantizer handles one row (its group size).
			for r := range info.Interleave {
				base(dst[r*ne0:(r+1)*ne0], tmp[r*int(baseRow):(r+1)*int(baseRow)], ne0)
			}
		}
	}
	if f == nil {
		return fmt.Errorf("formats: no dequantizer for %s", t)
	}
	for g := 0; g < groups; g++ {
		f(dst[g*info.Interleave*ne0:(g+1)*info.Interleave*ne0], src[g*groupBytes:(g+1)*groupBytes], ne0)
	}
	return nil
}
