package quantize

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestQ8KVFromBF16 checks that Q8KVFromBF16 writes QuantizeRowsInto's
// bytes for the widened rows, q8_KV and q8_KV_r8, and declines other
// types, sizes that do not fit and rows reaching the limit.
func TestQ8KVFromBF16(t *testing.T) {
	const ne0, nrows = 64, 16
	src := make([]byte, 2*ne0*nrows)
	x := make([]float32, ne0*nrows)
	for i := range x {
		h := formats.FP32ToBF16(float32(math.Sin(float64(i))) * 0.02)
		binary.LittleEndian.PutUint16(src[2*i:], h)
		x[i] = formats.BF16ToFP32(h)
	}
	for _, typ := range []formats.Type{formats.Q8_KV, formats.Q8_KV_R8} {
		rs, _ := typ.RowSize(ne0)
		got := make([]byte, nrows*int(rs))
		if !Q8KVFromBF16(typ, got, src, ne0, 0x7f80) {
			t.Fatalf("%s: declined", typ)
		}
		want := make([]byte, len(got))
		if err := QuantizeRowsInto(want, typ, nrows, ne0, x, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: other bytes than QuantizeRowsInto", typ)
		}
		if Q8KVFromBF16(typ, got, src, ne0, 0x3c00) {
			t.Errorf("%s: took a value past the limit", typ)
		}
		for _, c := range []struct {
			dst, src []byte
			ne0      int
		}{{got[1:], src, ne0}, {got, src[2:], ne0}, {got, src, 48}, {got[:4*int(rs)], src[:2*ne0*4], ne0}} {
			if typ == formats.Q8_KV && len(c.dst) == 4*int(rs) {
				continue // four rows are whole q8_KV rows
			}
			if Q8KVFromBF16(typ, c.dst, c.src, c.ne0, 0x7f80) {
				t.Errorf("%s: took %d bytes into %d, rows of %d", typ, len(c.src), len(c.dst), c.ne0)
			}
		}
	}
	if Q8KVFromBF16(formats.Q8_0, make([]byte, 2*34*nrows), src, ne0, 0x7f80) {
		t.Error("took q8_0")
	}
}
