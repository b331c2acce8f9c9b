package formats

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/internal/tables"
)

// Dequantizers of the IQK non-linear types (ik_llama.cpp dequantize_row_iq*_k*).
// The *_ks, iq2_kl and iq4_kss rows start with a row scale (fp16 or f32,
// RowMeta bytes) shared by every block of the row.

func init() {
	registerDequantizer(IQ2_K, iqkPerRow(IQ2_K, dequantIQ2K))
	registerDequantizer(IQ3_K, iqkPerRow(IQ3_K, dequantIQ3K))
	registerDequantizer(IQ4_K, iqkPerRow(IQ4_K, dequantIQ4K))
	registerDequantizer(IQ5_K, iqkPerRow(IQ5_K, dequantIQ5K))
	registerDequantizer(IQ6_K, iqkPerRow(IQ6_K, dequantIQ6K))
	registerDequantizer(IQ2_KS, iqkPerRow(IQ2_KS, dequantIQ2KS))
	registerDequantizer(IQ2_KL, iqkPerRow(IQ2_KL, dequantIQ2KL))
	registerDequantizer(IQ3_KS, iqkPerRow(IQ3_KS, dequantIQ3KS))
	registerDequantizer(IQ4_KS, iqkPerRow(IQ4_KS, dequantIQ4KS))
	registerDequantizer(IQ4_KSS, iqkPerRow(IQ4_KSS, dequantIQ4KSS))
	registerDequantizer(IQ5_KS, iqkPerRow(IQ5_KS, dequantIQ5KS))
}

// perRow adapts a one-row dequantizer to the row-group signature (all the
// base IQK types have one row per group).
func iqkPerRow(t Type, row func(dst []float32, src []byte, ne0 int)) rowGroupDequantizer {
	return func(dst []float32, src []byte, ne0 int) {
		row(dst[:ne0], src, ne0)
	}
}

func iqkLE16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

func iqkLEF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func dequantIQ2K(y []float32, src []byte, ne0 int) {
	const bs = 76
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		d := FP16ToFP32(iqkLE16(b[0:]))
		extra := iqkLE16(b[2:])
		scales, qs := b[4:12], b[12:76]
		out := y[i*256:]
		shift := 0
		for ib32 := 0; ib32 < 8; ib32++ {
			dl1 := d * float32(int(scales[ib32]&0xf)-8)
			dl2 := d * float32(int(scales[ib32]>>4)-8)
			v1, v2 := tables.IQ2NLValues[4*(extra&1):], tables.IQ2NLValues[2*(extra&2):]
			extra >>= 2
			for j := 0; j < 16; j++ {
				out[j] = dl1 * float32(v1[(qs[j]>>shift)&3])
				out[j+16] = dl2 * float32(v2[(qs[j+16]>>shift)&3])
			}
			out = out[32:]
			shift += 2
			if shift == 8 {
				qs, shift = qs[32:], 0
			}
		}
	}
}

func dequantIQ3K(y []float32, src []byte, ne0 int) {
	const bs = 110
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		d := FP16ToFP32(iqkLE16(b[0:]))
		extra := iqkLE16(b[2:])
		sh := iqkLE16(b[4:])
		scalesL, qs, qh := b[6:14], b[14:78], b[78:110]
		out := y[i*256:]
		for ib32 := 0; ib32 < 8; ib32++ {
			s1, s2 := 2*int(scalesL[ib32]&0xf)+1, 2*int(scalesL[ib32]>>4)+1
			if sh&1 != 0 {
				s1 = -s1
			}
			if sh&2 != 0 {
				s2 = -s2
			}
			sh >>= 2
			dl1, dl2 := d*float32(s1), d*float32(s2)
			v1, v2 := tables.IQ3NLValues[8*(extra&1):], tables.IQ3NLValues[4*(extra&2):]
			extra >>= 2
			shiftL, shiftH := uint(2*(ib32%4)), uint(ib32%8)
			for j := 0; j < 16; j++ {
				out[j] = dl1 * float32(v1[(qs[j]>>shiftL)&3|((qh[j]>>shiftH)&1)<<2])
				out[j+16] = dl2 * float32(v2[(qs[j+16]>>shiftL)&3|((qh[j+16]>>shiftH)&1)<<2])
			}
			out = out[32:]
			if shiftL == 6 {
				qs = qs[32:]
			}
		}
	}
}

func dequantIQ4K(y []float32, src []byte, ne0 int) {
	const bs = 144
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		d := FP16ToFP32(iqkLE16(b[0:]))
		extra := iqkLE16(b[2:])
		scalesH, scalesL, qs := b[4:8], b[8:16], b[16:144]
		out := y[i*256:]
		for ib := 0; ib < 8; ib++ {
			sh := scalesH[ib/2] >> (4 * (ib % 2))
			dl1 := d * float32(int(scalesL[ib]&0xf|(sh<<4)&0x30)-32)
			dl2 := d * float32(int(scalesL[ib]>>4|(sh<<2)&0x30)-32)
			v1, v2 := tables.IQ4KValues[16*(extra&1):], tables.IQ4KValues[8*(extra&2):]
			extra >>= 2
			for j := 0; j < 16; j++ {
				out[j] = dl1 * float32(v1[qs[j]&0xf])
				out[j+16] = dl2 * float32(v2[qs[j]>>4])
			}
			out, qs = out[32:], qs[16:]
		}
	}
}

func dequantIQ5K(y []float32, src []byte, ne0 int) {
	const bs = 176
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		d := FP16ToFP32(iqkLE16(b[0:]))
		extra := iqkLE16(b[2:])
		sh, sl, qs, qh := b[4:8], b[8:16], b[16:144], b[144:176]
		out := y[i*256:]
		shift := 0
		for ib64 := 0; ib64 < 4; ib64++ {
			dl1 := d * float32(int(sl[2*ib64]&0xf|(sh[ib64]<<4)&0x30)-32)
			dl2 := d * float32(int(sl[2*ib64]>>4|(sh[ib64]<<2)&0x30)-32)
			dl3 := d * float32(int(sl[2*ib64+1]&0xf|sh[ib64]&0x30)-32)
			dl4 := d * float32(int(sl[2*ib64+1]>>4|(sh[ib64]>>2)&0x30)-32)
			v1, v2 := tables.IQ5NLValues[32*(extra&1):], tables.IQ5NLValues[16*(extra&2):]
			v3, v4 := tables.IQ5NLValues[8*(extra&4):], tables.IQ5NLValues[4*(extra&8):]
			for j := 0; j < 16; j++ {
				out[j] = dl1 * float32(v1[qs[j]&0xf|((qh[j]>>shift)&1)<<4])
				out[j+16] = dl2 * float32(v2[qs[j+16]&0xf|((qh[j+16]>>shift)&1)<<4])
				out[j+32] = dl3 * float32(v3[qs[j]>>4|((qh[j]>>shift)&2)<<3])
				out[j+48] = dl4 * float32(v4[qs[j+16]>>4|((qh[j+16]>>shift)&2)<<3])
			}
			out, qs = out[64:], qs[32:]
			extra >>= 4
			shift += 2
			if shift == 8 {
				qh, shift = qh[32:], 0
			}
		}
	}
}

// Coefficients of the iq6_k cubic: value(q) = A + q*(B + q*(-C + q*D)) (+1 when shifted).
const (
	iq6kA float32 = -127
	iq6kB float32 = 6.2568
	iq6kC float32 = 0.11218
	iq6kD float32 = 0.0011972
)

// IQ6KValue evaluates the iq6_k cubic for a 6-bit index q, the way the
// reference dequantizer does (GCC contracts the Horner steps into FMAs).
func IQ6KValue(q int, shifted bool) float32 {
	var m float32
	if shifted {
		m = 1
	}
	fq := float32(q)
	return iqkFMA32(fq, iqkFMA32(fq, iqkFMA32(fq, iq6kD, -iq6kC), iq6kB), iq6kA) + m
}

func dequantIQ6K(y []float32, src []byte, ne0 int) {
	const bs = 212
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		d := FP16ToFP32(iqkLE16(b[0:]))
		extra := iqkLE16(b[2:])
		sl, qs, qh := b[4:20], b[20:148], b[148:212]
		out := y[i*256:]
		shift := 0
		for ib64 := 0; ib64 < 4; ib64++ {
			var dl [4]float32
			for k := range dl {
				dl[k] = d * float32(int8(sl[4*ib64+k]))
			}
			for j := 0; j < 16; j++ {
				q1 := int(qs[j]&0xf | ((qh[j]>>shift)&0x03)<<4)
				q2 := int(qs[j+16]&0xf | ((qh[j+16]>>shift)&0x03)<<4)
				q3 := int(qs[j]>>4 | ((qh[j]>>shift)&0x0c)<<2)
				q4 := int(qs[j+16]>>4 | ((qh[j+16]>>shift)&0x0c)<<2)
				out[j] = dl[0] * IQ6KValue(q1, extra&1 != 0)
				out[j+16] = dl[1] * IQ6KValue(q2, extra&2 != 0)
				out[j+32] = dl[2] * IQ6KValue(q3, extra&4 != 0)
				out[j+48] = dl[3] * IQ6KValue(q4, extra&8 != 0)
			}
			out, qs = out[64:], qs[32:]
			extra >>= 4
			shift += 4
			if shift == 8 {
				qh, shift = qh[32:], 0
			}
		}
	}
}

func dequantIQ2KS(y []float32, src []byte, ne0 int) {
	const bs = 70
	d := FP16ToFP32(iqkLE16(src))
	src = src[2:]
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		extra := iqkLE16(b[0:])
		scales, qs := b[2:6], b[6:70]
		out := y[i*256:]
		shift := 0
		for ib64 := 0; ib64 < 4; ib64++ {
			dl1 := d * float32(int(uint16(scales[ib64]&0xf)|(extra>>4)&0x10)-16)
			dl2 := d * float32(int(uint16(scales[ib64]>>4)|(extra>>5)&0x10)-16)
			v1, v2 := tables.IQ2NLValues[4*(extra&1):], tables.IQ2NLValues[2*(extra&2):]
			extra >>= 2
			for j := 0; j < 32; j++ {
				out[j] = dl1 * float32(v1[(qs[j]>>shift)&3])
				out[j+32] = dl2 * float32(v2[(qs[j]>>(shift+2))&3])
			}
			out = out[64:]
			shift += 4
			if shift == 8 {
				qs, shift = qs[32:], 0
			}
		}
	}
}

func dequantIQ2KL(y []float32, src []byte, ne0 int) {
	const bs = 86
	d := FP16ToFP32(iqkLE16(src))
	src = src[2:]
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		scalesH := iqkLE16(b[0:])
		scalesL, qs, qh := b[2:6], b[6:70], b[70:86]
		out := y[i*256:]
		for ib64 := 0; ib64 < 4; ib64++ {
			ls1 := int((scalesL[(2*ib64)%4]>>(4*(ib64/2)))&0xf) | int((scalesH>>(4*ib64))&3)<<4
			ls2 := int((scalesL[(2*ib64+1)%4]>>(4*(ib64/2)))&0xf) | int((scalesH>>(4*ib64+2))&3)<<4
			dl1, dl2 := d*float32(ls1-32), d*float32(ls2-32)
			for j := 0; j < 16; j++ {
				p1 := tables.IQ2KLValues[int(qs[j]&0xf)|int((qh[j]>>(2*ib64))&1)<<4]
				p2 := tables.IQ2KLValues[int(qs[j]>>4)|int((qh[j]>>(2*ib64+1))&1)<<4]
				out[2*j] = dl1 * float32(int8(p1))
				out[2*j+1] = dl1 * float32(int8(p1>>8))
				out[2*j+32] = dl2 * float32(int8(p2))
				out[2*j+33] = dl2 * float32(int8(p2>>8))
			}
			out, qs = out[64:], qs[16:]
		}
	}
}

func dequantIQ3KS(y []float32, src []byte, ne0 int) {
	const bs = 102
	d := FP16ToFP32(iqkLE16(src))
	src = src[2:]
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		extra := iqkLE16(b[0:])
		scales, qs, qh := b[2:6], b[6:70], b[70:102]
		var dl [8]float32
		for j := 0; j < 4; j++ {
			ls1 := int(scales[j]&0xf) | int((extra>>j)&1)<<4
			ls2 := int(scales[j]>>4) | int((extra>>(j+4))&1)<<4
			dl[j], dl[j+4] = d*float32(ls1-16), d*float32(ls2-16)
		}
		out := y[i*256:]
		for i128 := 0; i128 < 2; i128++ {
			for ib := 0; ib < 4; ib++ {
				v := tables.IQ3NLValues[8*((extra>>(8+4*i128+ib))&1):]
				for j := 0; j < 32; j++ {
					out[j] = dl[4*i128+ib] * float32(v[(qs[j]>>(2*ib))&3|((qh[j]>>(4*i128+ib))&1)<<2])
				}
				out = out[32:]
			}
			qs = qs[32:]
		}
	}
}

func dequantIQ4KS(y []float32, src []byte, ne0 int) {
	const bs = 136
	d := iqkLEF32(src)
	src = src[4:]
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		scales, qs := b[0:8], b[8:136]
		out := y[i*256:]
		for ib := 0; ib < 8; ib++ {
			dl := d * float32(int(scales[ib]&254)-127)
			v := tables.IQ4KValues[16*(scales[ib]&1):]
			for j := 0; j < 16; j++ {
				out[j] = dl * float32(v[qs[j]&0xf])
				out[j+16] = dl * float32(v[qs[j]>>4])
			}
			out, qs = out[32:], qs[16:]
		}
	}
}

func dequantIQ4KSS(y []float32, src []byte, ne0 int) {
	const bs = 128
	d := iqkLEF32(src)
	src = src[4:]
	var aux [16]byte
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		out := y[i*256:]
		for ib := 0; ib < 8; ib++ {
			q := b[16*ib:]
			ls := 0
			for k := 0; k < 8; k++ {
				w := iqkLE16(q[2*k:])
				a := w & 0xfffe
				a ^= a >> 1
				binary.LittleEndian.PutUint16(aux[2*k:], a)
				ls |= int(w&1) << k
			}
			v := tables.IQ4KValues[16*(ls&1):]
			dl := d * float32((ls&254)-127)
			for j := 0; j < 16; j++ {
				out[j] = dl * float32(v[aux[j]&0xf])
				out[j+16] = dl * float32(v[aux[j]>>4])
			}
			out = out[32:]
		}
	}
}

func dequantIQ5KS(y []float32, src []byte, ne0 int) {
	const bs = 168
	d := iqkLEF32(src)
	src = src[4:]
	for i := 0; i < ne0/256; i++ {
		b := src[i*bs : (i+1)*bs]
		scales, qs, qh := b[0:8], b[8:136], b[136:168]
		out := y[i*256:]
		for ib64 := 0; ib64 < 4; ib64++ {
			dl1 := d * float32(int(scales[2*ib64]&254)-127)
			dl2 := d * float32(int(scales[2*ib64+1]&254)-127)
			v1 := tables.IQ5NLValues[32*(scales[2*ib64]&1):]
			v2 := tables.IQ5NLValues[32*(scales[2*ib64+1]&1):]
			for j := 0; j < 32; j++ {
				out[j] = dl1 * float32(v1[qs[j]&0xf|((qh[j]>>(2*ib64))&1)<<4])
				out[j+32] = dl2 * float32(v2[qs[j]>>4|((qh[j]>>(2*ib64+1))&1)<<4])
			}
			out, qs = out[64:], qs[32:]
		}
	}
}

// iqkFMA32 returns a*b+c rounded once to float32 (see kernel.FMA32; formats
// cannot import that package).
func iqkFMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bp := s - p
	e := (p - (s - bp)) + (float64(c) - bp)
	if e == 0 {
		return float32(s)
	}
	bits := math.Float64bits(s)
	if bits&(1<<29-1) == 1<<28 {
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
