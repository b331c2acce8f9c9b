package ggufhash

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/ggufhash/internal/xxh3"
)

// ErrSize is returned when a tensor gets more or fewer bytes than its size.
var ErrSize = errors.New("ggufhash: bytes written differ from the tensor's size")

// uuidNamespace is llama.cpp's UUIDv5 namespace,
// uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp") =
// ef001206-dadc-5f6d-a15f-3359e577d4e5.
var uuidNamespace = [16]byte{0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5}

// Sums holds the digests of one tensor or one file.
type Sums struct {
	kinds Kinds
	sums  [numKinds][32]byte
}

// Kinds returns the kinds of digest s holds.
func (s *Sums) Kinds() Kinds { return s.kinds }

// Bytes returns the digest of kind k (big-endian for the xxHash kinds, as
// printed), or nil if s has none.
func (s *Sums) Bytes(k Kind) []byte {
	if !s.kinds.Has(k) {
		return nil
	}
	return s.sums[k][:sumSizes[k]]
}

// XXH64 returns the xxh64 digest, 0 if s has none.
func (s *Sums) XXH64() uint64 {
	if !s.kinds.Has(XXH64) {
		return 0
	}
	return binary.BigEndian.Uint64(s.sums[XXH64][:8])
}

// Text returns the digest of kind k as llama-gguf-hash prints it: lower-case
// hex (16 digits for xxh64 and xxh3), the uuid as 8-4-4-4-12 hex digits; ""
// if s has none.
func (s *Sums) Text(k Kind) string {
	b := s.Bytes(k)
	if b == nil {
		return ""
	}
	if k != UUID {
		return hex.EncodeToString(b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (s *Sums) set(k Kind, b []byte) {
	s.kinds |= 1 << k
	copy(s.sums[k][:], b)
}

// sha1Span is how much of a tensor of size bytes llama-gguf-hash's sha1 and
// uuid see: its SHA-1 code (clibs/sha1) takes the length as a uint32_t, so
// each tensor's length is cut to 32 bits and a tensor of 4 GiB or more
// counts only its first size mod 2^32 bytes. Doing the same keeps our
// manifests and uuids equal to the reference's for the large expert tensors
// of today's models (sha256 and the xxHash kinds see every byte).
func sha1Span(size int64) int64 { return size & (1<<32 - 1) }

// lane is one running digest over a stream of tensors.
type lane struct {
	kind Kind
	h    hash.Hash
	// take is how many more bytes of the current tensor the digest sees.
	take int64
}

func newLane(k Kind) *lane {
	l := &lane{kind: k}
	switch k {
	case XXH64:
		l.h = xxhash.New()
	case XXH3:
		l.h = xxh3.New()
	case SHA1, UUID:
		l.h = sha1.New()
	case SHA256:
		l.h = sha256.New()
	default:
		panic(fmt.Sprintf("ggufhash: no digest %v", k))
	}
	l.reset()
	return l
}

// reset starts the digest over.
func (l *lane) reset() {
	l.h.Reset()
	if l.kind == UUID {
		l.h.Write(uuidNamespace[:])
	}
}

// begin starts a tensor of size bytes.
func (l *lane) begin(size int64) {
	l.take = size
	if l.kind == SHA1 || l.kind == UUID {
		l.take = sha1Span(size)
	}
}

// write adds the next bytes of the current tensor.
func (l *lane) write(p []byte) {
	if int64(len(p)) > l.take {
		p = p[:l.take]
	}
	l.h.Write(p)
	l.take -= int64(len(p))
}

// sum stores the digest in s.
func (l *lane) sum(s *Sums) {
	var buf [32]byte
	b := l.h.Sum(buf[:0])
	if l.kind == UUID {
		// UUIDv5 (RFC 9562 5.5): the first 16 bytes of the SHA-1 of the
		// namespace and the name, with the version and variant bits set.
		b = b[:16]
		b[6] = b[6]&0x0f | 0x50
		b[8] = b[8]&0x3f | 0x80
	}
	s.set(l.kind, b)
}

// TensorHasher computes the per-tensor digests of one tensor, written to it
// in order in pieces of any size: what llama-gguf-hash prints for
// FILE:TENSOR. The quantize pipeline can wrap the bytes it streams in one
// (io.TeeReader, io.MultiWriter) to record a tensor's xxh64 for free.
type TensorHasher struct {
	lanes   []*lane
	kinds   Kinds
	size    int64
	written int64
}

// NewTensorHasher returns a hasher of a tensor of size bytes for kinds, which
// must not include UUID (a whole-file digest).
func NewTensorHasher(kinds Kinds, size int64) *TensorHasher {
	if kinds.Has(UUID) {
		panic("ggufhash: UUID is a digest of whole files, not of tensors")
	}
	h := &TensorHasher{kinds: kinds}
	for _, k := range kinds.List() {
		h.lanes = append(h.lanes, newLane(k))
	}
	h.Reset(size)
	return h
}

// Reset starts over with a tensor of size bytes.
func (h *TensorHasher) Reset(size int64) {
	h.size, h.written = size, 0
	for _, l := range h.lanes {
		l.reset()
		l.begin(size)
	}
}

// Write adds the tensor's next bytes. Writing past its size is an error
// wrapping ErrSize, and nothing of p is taken.
func (h *TensorHasher) Write(p []byte) (int, error) {
	if int64(len(p)) > h.size-h.written {
		return 0, fmt.Errorf("%w: %d bytes past the tensor's %d", ErrSize, h.written+int64(len(p))-h.size, h.size)
	}
	for _, l := range h.lanes {
		l.write(p)
	}
	h.written += int64(len(p))
	return len(p), nil
}

// Sum returns the tensor's digests; it is an error wrapping ErrSize if fewer
// bytes than its size were written.
func (h *TensorHasher) Sum() (Sums, error) {
	var s Sums
	if h.written != h.size {
		return s, fmt.Errorf("%w: %d of %d bytes written", ErrSize, h.written, h.size)
	}
	for _, l := range h.lanes {
		l.sum(&s)
	}
	return s, nil
}
