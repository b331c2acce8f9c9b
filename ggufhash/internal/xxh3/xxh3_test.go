package xxh3

import (
	"bufio"
	"encoding/binary"
	"hash"
	"os"
	"strconv"
	"strings"
	"testing"
)

var _ hash.Hash64 = (*Digest)(nil)

// stream returns the first n bytes of the test input: the xorshift64
// sequence from 0x9E3779B97F4A7C15, each state written little-endian. The C
// program that made testdata/vectors.tsv filled its buffer the same way.
func stream(n int) []byte {
	p := make([]byte, (n+7)&^7)
	s := uint64(0x9E3779B97F4A7C15)
	for i := 0; i < len(p); i += 8 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		binary.LittleEndian.PutUint64(p[i:], s)
	}
	return p[:n]
}

type vector struct {
	n    int
	want uint64
}

// vectors reads testdata/vectors.tsv: LEN, tab, XXH3_64bits as 16 hex digits.
func vectors(t testing.TB) []vector {
	f, err := os.Open("testdata/vectors.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		a, b, ok := strings.Cut(line, "\t")
		n, err1 := strconv.Atoi(a)
		h, err2 := strconv.ParseUint(b, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", line)
		}
		vs = append(vs, vector{n, h})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 1000 {
		t.Fatalf("only %d vectors", len(vs))
	}
	return vs
}

func TestSum64(t *testing.T) {
	vs := vectors(t)
	in := stream(vs[len(vs)-1].n)
	for _, v := range vs {
		if got := Sum64(in[:v.n]); got != v.want {
			t.Errorf("Sum64 of %d bytes = %016x, want %016x", v.n, got, v.want)
		}
	}
}

// TestDigestPieces writes each vector's input in pieces of several sizes,
// including ones that end exactly on stripe, buffer and block boundaries.
func TestDigestPieces(t *testing.T) {
	vs := vectors(t)
	in := stream(vs[len(vs)-1].n)
	d := New()
	for _, piece := range []int{1, 7, 63, 64, 65, 255, 256, 257, 1024, 4096, 1 << 30} {
		for _, v := range vs {
			if piece == 1 && v.n > 20000 {
				continue
			}
			d.Reset()
			p := in[:v.n]
			for len(p) > 0 {
				k := min(piece, len(p))
				d.Write(p[:k])
				p = p[k:]
			}
			if got := d.Sum64(); got != v.want {
				t.Errorf("%d bytes in pieces of %d: %016x, want %016x", v.n, piece, got, v.want)
			}
		}
	}
	// Sum64 leaves the state as it was: writing on gives the longer input's hash.
	d.Reset()
	d.Write(in[:300])
	d.Sum64()
	d.Write(in[300:2049])
	if got, want := d.Sum64(), Sum64(in[:2049]); got != want {
		t.Errorf("Sum64 in the middle changed the state: %016x, want %016x", got, want)
	}
	if got := d.Sum(nil); binary.BigEndian.Uint64(got) != Sum64(in[:2049]) {
		t.Errorf("Sum = %x", got)
	}
}

func BenchmarkSum64(b *testing.B) {
	p := stream(4 << 20)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		Sum64(p)
	}
}

func BenchmarkDigest(b *testing.B) {
	p := stream(4 << 20)
	d := New()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		d.Reset()
		for i := 0; i < len(p); i += 1 << 20 {
			d.Write(p[i : i+1<<20])
		}
		d.Sum64()
	}
}
