package formats_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestIQ2BNR4RoundTrip interleaves random iq2_bn rows and back.
func TestIQ2BNR4RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ne0 := range []int{64, 256, 1024} {
		rs, err := formats.IQ2_BN.RowSize(int64(ne0))
		if err != nil {
			t.Fatal(err)
		}
		base := make([]byte, 8*int(rs))
		for i := range base {
			base[i] = byte(rng.Uint32())
		}
		group := make([]byte, len(base))
		if err := formats.Interleave(formats.IQ2_BN_R4, ne0, group, base); err != nil {
			t.Fatal(err)
		}
		back := make([]byte, len(base))
		if err := formats.Deinterleave(formats.IQ2_BN_R4, ne0, back, group); err != nil {
			t.Fatal(err)
		}
		if string(back) != string(base) {
			t.Errorf("ne0=%d: round trip changed the bytes", ne0)
		}
	}
}

// TestIQ2BNR4Dequantize checks the iq2_bn_r4 dequantizer against a direct
// decoding of the iq2_bn rows it was interleaved from: row scale times
// (trit - 1), where byte j of a block holds weights j, j+16, j+32, j+48.
func TestIQ2BNR4Dequantize(t *testing.T) {
	const ne0 = 256
	rng := rand.New(rand.NewPCG(3, 4))
	rs, _ := formats.IQ2_BN.RowSize(ne0)
	base := make([]byte, 4*int(rs))
	want := make([]float32, 4*ne0)
	for r := 0; r < 4; r++ {
		row := base[r*int(rs) : (r+1)*int(rs)]
		d := float32(rng.NormFloat64())
		binary.LittleEndian.PutUint32(row, math.Float32bits(d))
		for ib := 0; ib < ne0/64; ib++ {
			for j := 0; j < 16; j++ {
				q := byte(rng.Uint32())
				row[4+16*ib+j] = q
				for m := 0; m < 4; m++ {
					want[r*ne0+64*ib+16*m+j] = d * float32(int(q>>(2*m)&3)-1)
				}
			}
		}
	}
	group := make([]byte, len(base))
	if err := formats.Interleave(formats.IQ2_BN_R4, ne0, group, base); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4*ne0)
	if err := formats.DequantizeRows(formats.IQ2_BN_R4, ne0, group, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("row %d column %d: %v, want %v", i/ne0, i%ne0, got[i], want[i])
		}
	}
}

// TestIQ2BNR4Layout checks the word-wise interleaver against the layout's
// definition, one byte at a time: byte 4*k+i+16*l of a block packs, from low
// to high bits, 2-bit field l of bytes i, i+4, i+8, i+12 of row k's block.
func TestIQ2BNR4Layout(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const ne0 = 512
	rs, _ := formats.IQ2_BN.RowSize(ne0)
	rowBytes := int(rs)
	base := make([]byte, 4*rowBytes)
	for i := range base {
		base[i] = byte(rng.Uint32())
	}
	want := make([]byte, len(base))
	for k := 0; k < 4; k++ {
		copy(want[4*k:4*k+4], base[k*rowBytes:])
	}
	for ib := 0; ib < ne0/64; ib++ {
		for k := 0; k < 4; k++ {
			x := base[k*rowBytes+4+16*ib:]
			for l := 0; l < 4; l++ {
				for i := 0; i < 4; i++ {
					sh := uint(2 * l)
					want[16+64*ib+4*k+i+16*l] = (x[i]>>sh)&3 | ((x[i+4]>>sh)&3)<<2 | ((x[i+8]>>sh)&3)<<4 | ((x[i+12]>>sh)&3)<<6
				}
			}
		}
	}
	got := make([]byte, len(base))
	if err := formats.Interleave(formats.IQ2_BN_R4, ne0, got, base); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("byte %d: %#02x, want %#02x", i, got[i], want[i])
		}
	}
}
