package pipeline

import (
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkSidecarHash is the hashing a run adds for its sidecar: xxhash64
// over every input byte as it streams in and every output byte as it is
// written, in pieces of a run's size (8 MiB). Bytes per second here, times
// the bytes of a run, is the CPU time it costs (the README's numbers).
// Run with: go test ./pipeline -run XXX -bench SidecarHash -count 5
func BenchmarkSidecarHash(b *testing.B) {
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i * 131)
	}
	d := xxhash.New()
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		d.Write(buf)
	}
	_ = d.Sum64()
}
