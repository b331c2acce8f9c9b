// Package xxh3 computes XXH3-64 with seed 0 and the default secret, the
// "xxh3" of llama.cpp's llama-gguf-hash (XXH3_64bits in xxHash 0.8), in
// portable Go. The module's dependencies have xxh64 (cespare/xxhash) but not
// XXH3, and the hash must match xxHash bit for bit, so it is written out here
// from the algorithm's definition; the tests check it against values that
// xxHash 0.8.3 (the copy llama.cpp ships) computed.
package xxh3

import (
	"encoding/binary"
	"math/bits"
)

// Size is the size of the checksum in bytes.
const Size = 8

// BlockSize is the size of a stripe, the unit of the long-input loop.
const BlockSize = stripeLen

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
	primeMx1  = 0x165667919E3779F9
	primeMx2  = 0x9FB21C651E98DF25

	stripeLen       = 64
	secretConsume   = 8  // secret bytes each stripe moves on
	stripesPerBlock = 16 // (len(secret)-stripeLen)/secretConsume
	blockLen        = stripeLen * stripesPerBlock
	midSizeMax      = 240 // inputs up to this length take the short paths
	midStartOffset  = 3
	midLastOffset   = 17
	secretSizeMin   = 136
	lastAccStart    = 7
	mergeAccsStart  = 11
	bufSize         = 256 // bytes held back by the streaming Digest
)

// secret is xxHash's default secret (XXH3_kSecret).
var secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func u32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func sec64(off int) uint64 {
	return binary.LittleEndian.Uint64(secret[off : off+8])
}

// mulFold64 is the 128-bit product of a and b, its halves xor-ed.
func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// avalanche64 is XXH64's final mix.
func avalanche64(h uint64) uint64 {
	h ^= h >> 33
	h *= prime64_2
	h ^= h >> 29
	h *= prime64_3
	h ^= h >> 32
	return h
}

func avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= primeMx1
	h ^= h >> 32
	return h
}

func rrmxmx(h uint64, n uint64) uint64 {
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= primeMx2
	h ^= (h >> 35) + n
	h *= primeMx2
	return h ^ (h >> 28)
}

func mix16(p []byte, off int) uint64 {
	return mulFold64(u64(p[0:8])^sec64(off), u64(p[8:16])^sec64(off+8))
}

// Sum64 returns the XXH3-64 hash of p (seed 0, default secret).
func Sum64(p []byte) uint64 {
	n := len(p)
	switch {
	case n <= 16:
		return hashUpTo16(p)
	case n <= 128:
		return hashUpTo128(p)
	case n <= midSizeMax:
		return hashUpTo240(p)
	}
	acc := initAcc()
	// Every stripe with at least one byte after it goes through the loop,
	// a scramble after each block; the last 64 bytes are then taken once
	// more, as the last stripe.
	loop := p[:(n-1)/stripeLen*stripeLen]
	for len(loop) >= blockLen {
		accumulateStripes(&acc, loop[:blockLen], 0)
		scramble(&acc)
		loop = loop[blockLen:]
	}
	accumulateStripes(&acc, loop, 0)
	return finish(&acc, p[n-stripeLen:], uint64(n))
}

func hashUpTo16(p []byte) uint64 {
	n := len(p)
	switch {
	case n > 8:
		lo := u64(p) ^ (sec64(24) ^ sec64(32))
		hi := u64(p[n-8:]) ^ (sec64(40) ^ sec64(48))
		acc := uint64(n) + bits.ReverseBytes64(lo) + hi + mulFold64(lo, hi)
		return avalanche(acc)
	case n >= 4:
		in1 := u32(p)
		in2 := u32(p[n-4:])
		flip := sec64(8) ^ sec64(16)
		in64 := uint64(in2) + uint64(in1)<<32
		return rrmxmx(in64^flip, uint64(n))
	case n > 0:
		c1, c2, c3 := uint32(p[0]), uint32(p[n>>1]), uint32(p[n-1])
		combined := c1<<16 | c2<<24 | c3 | uint32(n)<<8
		flip := uint64(u32(secret[0:]) ^ u32(secret[4:]))
		return avalanche64(uint64(combined) ^ flip)
	}
	return avalanche64(sec64(56) ^ sec64(64))
}

func hashUpTo128(p []byte) uint64 {
	n := len(p)
	acc := uint64(n) * prime64_1
	if n > 32 {
		if n > 64 {
			if n > 96 {
				acc += mix16(p[48:], 96)
				acc += mix16(p[n-64:], 112)
			}
			acc += mix16(p[32:], 64)
			acc += mix16(p[n-48:], 80)
		}
		acc += mix16(p[16:], 32)
		acc += mix16(p[n-32:], 48)
	}
	acc += mix16(p, 0)
	acc += mix16(p[n-16:], 16)
	return avalanche(acc)
}

func hashUpTo240(p []byte) uint64 {
	n := len(p)
	acc := uint64(n) * prime64_1
	rounds := n / 16
	for i := range 8 {
		acc += mix16(p[16*i:], 16*i)
	}
	acc = avalanche(acc)
	for i := 8; i < rounds; i++ {
		acc += mix16(p[16*i:], 16*(i-8)+midStartOffset)
	}
	acc += mix16(p[n-16:], secretSizeMin-midLastOffset)
	return avalanche(acc)
}

func initAcc() [8]uint64 {
	return [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}
}

// accumulate mixes one 64-byte stripe into the accumulators, with the
// secret taken from byte off.
func accumulate(acc *[8]uint64, stripe []byte, off int) {
	s := secret[off : off+stripeLen]
	stripe = stripe[:stripeLen]
	for i := 0; i < 8; i += 2 {
		v0 := u64(stripe[8*i:])
		v1 := u64(stripe[8*i+8:])
		k0 := v0 ^ u64(s[8*i:])
		k1 := v1 ^ u64(s[8*i+8:])
		acc[i+1] += v0
		acc[i] += v1
		acc[i] += uint64(uint32(k0)) * (k0 >> 32)
		acc[i+1] += uint64(uint32(k1)) * (k1 >> 32)
	}
}

// secretWords holds the secret as little-endian words: stripe j of a block
// uses words j..j+7.
var secretWords = func() (w [len(secret) / 8]uint64) {
	for i := range w {
		w[i] = sec64(8 * i)
	}
	return w
}()

// accumulateStripes is accumulate for the stripes of p (a multiple of 64
// bytes), the first of them stripe first of its block, none past the block's
// end: the hot loop, with the accumulators in registers.
func accumulateStripes(acc *[8]uint64, p []byte, first int) {
	a0, a1, a2, a3, a4, a5, a6, a7 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	for j := first; len(p) >= stripeLen; j++ {
		in := (*[stripeLen]byte)(p)
		k := (*[8]uint64)(secretWords[j : j+8])
		v0, v1 := u64(in[0:]), u64(in[8:])
		v2, v3 := u64(in[16:]), u64(in[24:])
		v4, v5 := u64(in[32:]), u64(in[40:])
		v6, v7 := u64(in[48:]), u64(in[56:])
		k0, k1, k2, k3 := v0^k[0], v1^k[1], v2^k[2], v3^k[3]
		k4, k5, k6, k7 := v4^k[4], v5^k[5], v6^k[6], v7^k[7]
		a0 += v1 + uint64(uint32(k0))*(k0>>32)
		a1 += v0 + uint64(uint32(k1))*(k1>>32)
		a2 += v3 + uint64(uint32(k2))*(k2>>32)
		a3 += v2 + uint64(uint32(k3))*(k3>>32)
		a4 += v5 + uint64(uint32(k4))*(k4>>32)
		a5 += v4 + uint64(uint32(k5))*(k5>>32)
		a6 += v7 + uint64(uint32(k6))*(k6>>32)
		a7 += v6 + uint64(uint32(k7))*(k7>>32)
		p = p[stripeLen:]
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7] = a0, a1, a2, a3, a4, a5, a6, a7
}

func scramble(acc *[8]uint64) {
	s := secret[len(secret)-stripeLen:]
	for i := range acc {
		a := acc[i]
		a ^= a >> 47
		a ^= u64(s[8*i:])
		acc[i] = a * prime32_1
	}
}

// finish takes the last stripe and merges the accumulators of an input of
// n > 240 bytes.
func finish(acc *[8]uint64, last []byte, n uint64) uint64 {
	accumulate(acc, last, len(secret)-stripeLen-lastAccStart)
	r := n * prime64_1
	for i := range 4 {
		off := mergeAccsStart + 16*i
		r += mulFold64(acc[2*i]^sec64(off), acc[2*i+1]^sec64(off+8))
	}
	return avalanche(r)
}

// Digest computes XXH3-64 of the bytes written to it, in pieces of any size;
// its sum equals Sum64 of their concatenation. The zero Digest is not ready:
// use New or Reset.
type Digest struct {
	acc     [8]uint64
	stripes int    // stripes of the current block already accumulated
	total   uint64 // bytes written
	buf     [bufSize]byte
	n       int // bytes in buf, not yet accumulated
	// last holds the last stripe accumulated, for inputs whose last 64
	// bytes straddle it and buf.
	last [stripeLen]byte
}

// New returns a Digest ready for writing.
func New() *Digest {
	d := new(Digest)
	d.Reset()
	return d
}

// Reset forgets the bytes written.
func (d *Digest) Reset() {
	d.acc = initAcc()
	d.stripes = 0
	d.total = 0
	d.n = 0
}

// Size returns Size, for hash.Hash.
func (d *Digest) Size() int { return Size }

// BlockSize returns BlockSize, for hash.Hash.
func (d *Digest) BlockSize() int { return BlockSize }

// stripesOf accumulates whole stripes of p (a multiple of 64 bytes long).
func (d *Digest) stripesOf(p []byte) {
	for len(p) > 0 {
		// The rest of the current block in one go, then one scramble.
		k := min(stripesPerBlock-d.stripes, len(p)/stripeLen)
		accumulateStripes(&d.acc, p[:k*stripeLen], d.stripes)
		p = p[k*stripeLen:]
		if d.stripes += k; d.stripes == stripesPerBlock {
			scramble(&d.acc)
			d.stripes = 0
		}
	}
}

// Write adds p to the hash; it never fails.
func (d *Digest) Write(p []byte) (int, error) {
	written := len(p)
	d.total += uint64(len(p))
	if d.n+len(p) <= bufSize {
		d.n += copy(d.buf[d.n:], p)
		return written, nil
	}
	// More bytes follow buf's, so each of its stripes has a byte after it.
	if d.n > 0 {
		k := copy(d.buf[d.n:], p)
		p = p[k:]
		d.stripesOf(d.buf[:])
		copy(d.last[:], d.buf[bufSize-stripeLen:])
		d.n = 0
	}
	if len(p) > bufSize {
		// Keep 1 to 64 bytes back: the last stripe is not for the loop.
		m := (len(p) - 1) / stripeLen * stripeLen
		d.stripesOf(p[:m])
		copy(d.last[:], p[m-stripeLen:m])
		p = p[m:]
	}
	d.n = copy(d.buf[:], p)
	return written, nil
}

// Sum64 returns the hash of the bytes written so far; more may follow.
func (d *Digest) Sum64() uint64 {
	if d.total <= midSizeMax {
		return Sum64(d.buf[:d.n])
	}
	acc := d.acc
	stripes := d.stripes
	// As in Write, buf's stripes that have a byte after them are
	// accumulated; the last 64 bytes of the input are the last stripe.
	tail := d.buf[:d.n]
	for ; len(tail) > stripeLen; tail = tail[stripeLen:] {
		accumulate(&acc, tail, stripes*secretConsume)
		if stripes++; stripes == stripesPerBlock {
			scramble(&acc)
			stripes = 0
		}
	}
	var last [stripeLen]byte
	if d.n >= stripeLen {
		copy(last[:], d.buf[d.n-stripeLen:d.n])
	} else {
		k := copy(last[:], d.last[d.n:])
		copy(last[k:], d.buf[:d.n])
	}
	return finish(&acc, last[:], d.total)
}

// Sum appends the hash, big-endian (as xxHash's canonical form), to b.
func (d *Digest) Sum(b []byte) []byte {
	return binary.BigEndian.AppendUint64(b, d.Sum64())
}
