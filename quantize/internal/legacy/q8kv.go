package legacy

import (
	"encoding/binary"
	"math"
)

// quantizeQ8KVRows is quantizeQ8KV with the q8_KV assembly kernel: the
// maximum pass over a row brings it into L1, and the quantizing pass
// prefetches part of the next row while it works. Rows with a zero or
// subnormal scale go through quantizeQ8KVRow. It returns false, having done
// nothing, where the kernel does not apply (no AVX2, rows not a multiple of
// 32 values).
func quantizeQ8KVRows(dst []byte, src []float32, nrows, ne0 int) (bool, error) {
	if !useAVX2 || nrows <= 0 || ne0 <= 0 || ne0%32 != 0 {
		return false, nil
	}
	rowSize := 8 + ne0
	for r := 0; r < nrows; r++ {
		x := src[r*ne0 : (r+1)*ne0]
		// The last row prefetches itself (already in L1).
		next := x
		if r+1 < nrows {
			next = src[(r+1)*ne0 : (r+2)*ne0]
		}
		y := dst[r*rowSize : (r+1)*rowSize]
		amax, _ := absMaxSIMD(x)
		if !finite(amax) {
			return true, ErrNotFinite
		}
		d := amax / 127
		if amax == 0 || d < math.SmallestNonzeroFloat32*(1<<23) {
			// Zero rows and subnormal scales (whose products may leave
			// the int8 range) take the row-at-a-time path.
			quantizeQ8KVRow(y, x)
			continue
		}
		isum, ok := quantizeQ8KVRowSIMD(y[8:], x, next, 1/d)
		if !ok {
			panic("legacy: q8_KV kernel refused a checked row")
		}
		binary.LittleEndian.PutUint32(y, math.Float32bits(d))
		binary.LittleEndian.PutUint32(y[4:], uint32(isum))
	}
	return true, nil
}
