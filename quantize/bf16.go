package quantize

import "github.com/gquant/gquant/quantize/internal/legacy"

// Q8KVFromBF16 quantizes rows of ne0 little-endian bfloat16 values (src) to
// q8_KV in dst, the bytes QuantizeRowsInto writes for their float32
// widening, without float32 rows: how a q8_KV file is made from a bf16
// model in one pass. It quantizes while every value's magnitude bit pattern
// (v & 0x7fff) stays below limit, at most infinity's 0x7f80, and otherwise
// returns false, having written part of dst: the caller then takes the
// usual way, whose checks name the value. It returns false too where the
// sizes do not fit (src not whole rows, dst not their q8_KV rows).
func Q8KVFromBF16(dst, src []byte, ne0 int, limit uint16) bool {
	if ne0 <= 0 || ne0%32 != 0 || len(src)%(2*ne0) != 0 || len(dst) != len(src)/(2*ne0)*(8+ne0) {
		return false
	}
	return legacy.QuantizeQ8KVBF16(dst, src, ne0, limit)
}
