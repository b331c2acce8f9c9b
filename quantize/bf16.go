package quantize

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/legacy"
)

// Q8KVFromBF16 quantizes rows of ne0 little-endian bfloat16 values (src) to
// t, q8_KV or q8_KV_r8, in dst: the bytes QuantizeRowsInto writes for their
// float32 widening, without float32 rows, which is how a q8_KV file is made
// from a bf16 model in one pass. It quantizes while every value's magnitude
// bit pattern (v & 0x7fff) stays below limit, at most infinity's 0x7f80,
// and otherwise returns false, having written part of dst: the caller then
// takes the usual way, whose checks name the value. It returns false too
// for another type, or sizes that do not fit (src not whole rows, or row
// groups, dst not their rows of t).
func Q8KVFromBF16(t formats.Type, dst, src []byte, ne0 int, limit uint16) bool {
	if (t != formats.Q8_KV && t != formats.Q8_KV_R8) || ne0 <= 0 || ne0%32 != 0 {
		return false
	}
	rowSize, err := t.RowSize(int64(ne0))
	nrows := len(src) / (2 * ne0)
	if err != nil || len(src) != 2*ne0*nrows || nrows%t.Interleave() != 0 || int64(len(dst)) != int64(nrows)*rowSize {
		return false
	}
	if t == formats.Q8_KV_R8 {
		return legacy.QuantizeQ8KVR8BF16(dst, src, ne0, limit)
	}
	return legacy.QuantizeQ8KVBF16(dst, src, ne0, limit)
}
