// Package ggufhash hashes the tensor data of GGUF models the way llama.cpp's
// llama-gguf-hash does, so that manifests written by either tool check
// against the other: the same digests of each tensor's bytes and of all of a
// file's tensor bytes in order, printed in the same text, and the same
// verdicts and exit status when checking a manifest.
//
// A digest covers tensor data only (exactly each tensor's size, no
// padding), never metadata, so editing a key leaves every hash unchanged.
//
// TensorHasher hashes one tensor written in pieces of any size, in order; it
// serves both HashModel and the quantize pipeline, which hashes tensors as
// they stream through. HashModel reads a model (a single file or a shard set)
// and computes every digest of every tensor and file at once, reading ahead
// and running the digests in parallel. Manifest and Checker check digests
// against a manifest.
//
// Where llama-gguf-hash does something odd, this package does the same and
// says so (sha1 and the uuid cover only the first size mod 2^32 bytes of a
// tensor), except for one plain slip (the uuid check, see Checker).
package ggufhash

import (
	"strconv"
	"strings"
)

// Kind is a digest llama-gguf-hash prints; its String is the name in the
// manifest.
type Kind uint8

const (
	// XXH64 is xxHash's 64-bit hash, seed 0: llama-gguf-hash's default.
	XXH64 Kind = iota
	// XXH3 is XXH3-64, seed 0 (mainline llama.cpp's --xxh3).
	XXH3
	// SHA1 is SHA-1 of the first size mod 2^32 bytes of each tensor.
	SHA1
	// SHA256 is SHA-256.
	SHA256
	// UUID is a UUIDv5 in llama.cpp's namespace over the same bytes as
	// SHA1: whole files only.
	UUID
	numKinds
)

var kindNames = [numKinds]string{"xxh64", "xxh3", "sha1", "sha256", "uuid"}

// sumSizes is each kind's digest size in bytes.
var sumSizes = [numKinds]int{8, 8, 20, 32, 16}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind named name, as in a manifest (case matters:
// llama-gguf-hash compares names exactly).
func ParseKind(name string) (Kind, bool) {
	for k, n := range kindNames {
		if n == name {
			return Kind(k), true
		}
	}
	return 0, false
}

// Kinds is a set of Kind.
type Kinds uint8

// KindsOf returns the set of ks.
func KindsOf(ks ...Kind) Kinds {
	var s Kinds
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// AllHashes is what --all selects: every hash but the uuid (an ID, not a
// hash, in llama-gguf-hash's words).
const AllHashes Kinds = 1<<XXH64 | 1<<XXH3 | 1<<SHA1 | 1<<SHA256

// Has reports whether k is in s.
func (s Kinds) Has(k Kind) bool { return s&(1<<k) != 0 }

// List returns the kinds of s in the order llama-gguf-hash prints digests:
// xxh64, xxh3, sha1, sha256, uuid.
func (s Kinds) List() []Kind {
	var ks []Kind
	for k := range numKinds {
		if s.Has(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// ByStrength returns the kinds of s strongest first (sha256, sha1, xxh64,
// xxh3, uuid): the order of a check's manifest line and of the choice of a
// hash when none is asked for.
func (s Kinds) ByStrength() []Kind {
	var ks []Kind
	for _, k := range [...]Kind{SHA256, SHA1, XXH64, XXH3, UUID} {
		if s.Has(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

func (s Kinds) String() string {
	var names []string
	for _, k := range s.List() {
		names = append(names, k.String())
	}
	return strings.Join(names, ",")
}
