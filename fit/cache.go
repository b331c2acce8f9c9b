package fit

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/gguf"
)

// The cache file: the magic, a little-endian uint64 record count, the
// records sorted by key (key uint64, then the six float64 of Stats), and the
// xxhash of everything before it.
const cacheMagic = "GQFITC1\n"

const cacheRecord = 8 + 6*8

// ErrBadCache is wrapped by errors reading a cache file.
var ErrBadCache = errors.New("fit: bad cache file")

// Cache holds error measurements by key: the xxhash of the sampled rows,
// the importance data given to the kernel, the type and KernelVersion. It
// is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[uint64]Stats
	added   int
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[uint64]Stats{}} }

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Added is the number of entries put since the cache was made or read.
func (c *Cache) Added() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.added
}

// Get returns the entry for key.
func (c *Cache) Get(key uint64) (Stats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.entries[key]
	return s, ok
}

// Put stores an entry. One that ReadCache would refuse (see checkCached)
// is not stored: the cache written holds only entries it reads back, and
// such a measurement is made afresh each time.
func (c *Cache) Put(key uint64, s Stats) {
	if checkCached(s) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		c.added++
	}
	c.entries[key] = s
}

// Merge adds other's entries that c lacks, as read rather than added
// (they do not count in Added): what another run saved since c was read.
func (c *Cache) Merge(other *Cache) {
	if other == nil || other == c {
		return
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range other.entries {
		if _, ok := c.entries[k]; !ok {
			c.entries[k] = s
		}
	}
}

// maxCachedValue bounds every sum a cache entry holds: far above what
// real weights and importance give (rows of f16 weights at full range
// with large importance and call counts stay below 1e60 even in the
// squared sums), far enough below the float64 range that entries summed
// over chunks, and the standard error's products of them, stay finite.
const maxCachedValue = 1e100

// maxCachedErr bounds an entry's relative error Num/Den: a quantization
// whose error is a million times the weights' own energy is no
// measurement, and the losses made of it must stay finite through the
// optimizer's sums and slopes.
const maxCachedErr = 1e6

// checkCached says why s cannot be a cache entry: a broken measurement
// (N = -1 and the rest 0) or sums from 0 to maxCachedValue, a whole
// number of rows, a relative error up to maxCachedErr and a finite
// standard error.
func checkCached(s Stats) error {
	if s == broken {
		return nil
	}
	for j, v := range [6]float64{s.N, s.Num, s.Den, s.Num2, s.Den2, s.NumDen} {
		if !(v >= 0 && v <= maxCachedValue) {
			return fmt.Errorf("%s is %v, not from 0 to %g", [6]string{"N", "Num", "Den", "Num2", "Den2", "NumDen"}[j], v, maxCachedValue)
		}
	}
	if s.N != math.Trunc(s.N) {
		return fmt.Errorf("the row count N is %v, not a whole number", s.N)
	}
	if e := s.Err(); !(e <= maxCachedErr) {
		return fmt.Errorf("relative error Num/Den = %v/%v = %v, more than %g", s.Num, s.Den, e, float64(maxCachedErr))
	}
	if se := s.SE(); math.IsNaN(se) || math.IsInf(se, 0) {
		return fmt.Errorf("standard error %v", se)
	}
	return nil
}

// ReadCache reads a cache file's contents. Every record must pass
// checkCached: a damaged or crafted file is refused with ErrBadCache
// naming the record, never read into losses the optimizer cannot use.
func ReadCache(r io.Reader) (*Cache, error) {
	br := bufio.NewReader(r)
	h := xxhash.New()
	head := make([]byte, len(cacheMagic)+8)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadCache, err)
	}
	if string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, fmt.Errorf("%w: not a gquant fit cache (magic %q)", ErrBadCache, head[:len(cacheMagic)])
	}
	_, _ = h.Write(head)
	n := binary.LittleEndian.Uint64(head[len(cacheMagic):])
	if n > 1<<32 {
		return nil, fmt.Errorf("%w: %d records", ErrBadCache, n)
	}
	c := &Cache{entries: make(map[uint64]Stats, min(n, 1<<12))}
	rec := make([]byte, cacheRecord)
	prev := uint64(0)
	for i := uint64(0); i < n; i++ {
		if _, err := io.ReadFull(br, rec); err != nil {
			return nil, fmt.Errorf("%w: record %d of %d: %v", ErrBadCache, i+1, n, err)
		}
		_, _ = h.Write(rec)
		key := binary.LittleEndian.Uint64(rec)
		if i > 0 && key <= prev {
			return nil, fmt.Errorf("%w: record %d: keys out of order", ErrBadCache, i+1)
		}
		prev = key
		var f [6]float64
		for j := range f {
			f[j] = math.Float64frombits(binary.LittleEndian.Uint64(rec[8+8*j:]))
		}
		st := Stats{N: f[0], Num: f[1], Den: f[2], Num2: f[3], Den2: f[4], NumDen: f[5]}
		if err := checkCached(st); err != nil {
			return nil, fmt.Errorf("%w: record %d: %v", ErrBadCache, i+1, err)
		}
		c.entries[key] = st
	}
	var sum [8]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum: %v", ErrBadCache, err)
	}
	if binary.LittleEndian.Uint64(sum[:]) != h.Sum64() {
		return nil, fmt.Errorf("%w: checksum mismatch (truncated or damaged)", ErrBadCache)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the checksum", ErrBadCache)
	}
	return c, nil
}

// WriteTo writes the cache in the file format.
func (c *Cache) WriteTo(w io.Writer) (int64, error) {
	c.mu.Lock()
	keys := make([]uint64, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	bw := bufio.NewWriter(w)
	h := xxhash.New()
	out := io.MultiWriter(bw, h)
	head := make([]byte, len(cacheMagic)+8)
	copy(head, cacheMagic)
	binary.LittleEndian.PutUint64(head[len(cacheMagic):], uint64(len(keys)))
	_, _ = out.Write(head)
	rec := make([]byte, cacheRecord)
	for _, k := range keys {
		s := c.entries[k]
		binary.LittleEndian.PutUint64(rec, k)
		for j, f := range [6]float64{s.N, s.Num, s.Den, s.Num2, s.Den2, s.NumDen} {
			binary.LittleEndian.PutUint64(rec[8+8*j:], math.Float64bits(f))
		}
		_, _ = out.Write(rec)
	}
	c.mu.Unlock()
	var sum [8]byte
	binary.LittleEndian.PutUint64(sum[:], h.Sum64())
	_, _ = bw.Write(sum[:])
	n := int64(len(head) + len(keys)*cacheRecord + 8)
	return n, bw.Flush()
}

// LoadCache reads a cache file; a file that does not exist gives an empty
// cache. It must be a regular file: a named pipe or a device is an error,
// never a read that blocks (see gguf.OpenRegular).
func LoadCache(path string) (*Cache, error) {
	f, _, err := gguf.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return NewCache(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("fit: cache: %w", err)
	}
	defer f.Close()
	c, err := ReadCache(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
