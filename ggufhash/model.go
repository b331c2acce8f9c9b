package ggufhash

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gquant/gquant/gguf"
)

// Read-ahead: HashModel keeps up to readDepth chunks of ChunkSize bytes in
// flight, so the next reads run while the digests work on the current one.
const (
	DefaultChunkSize = 4 << 20
	readDepth        = 4
	// parallelMin is the smallest chunk worth spreading over goroutines.
	parallelMin = 64 << 10
)

// Options selects what HashModel computes.
type Options struct {
	// Kinds are the digests. Zero means XXH64, llama-gguf-hash's default.
	// UUID is computed for whole files only.
	Kinds Kinds
	// NoTensors leaves out the per-tensor digests (llama-gguf-hash
	// --no-layer): only those of whole files.
	NoTensors bool
	// ChunkSize is how many bytes are read at a time; 0 means
	// DefaultChunkSize.
	ChunkSize int
}

// Result holds the digests of one tensor, or of a whole file when Tensor is
// empty.
type Result struct {
	// File is the path of the file (the shard) holding the data, as the
	// model was opened: the name llama-gguf-hash prints when run on it.
	File   string
	Tensor string
	Sums   Sums
}

// Name is the name of the entry in a manifest: FILE:TENSOR, or FILE.
func (r *Result) Name() string {
	if r.Tensor == "" {
		return r.File
	}
	return r.File + ":" + r.Tensor
}

// Line returns the manifest line of the digest of kind k, without newline,
// byte for byte as llama-gguf-hash prints it ("%-8s  %s  %s").
func (r *Result) Line(k Kind) string {
	return fmt.Sprintf("%-8s  %s  %s", k, r.Sums.Text(k), r.Name())
}

// chunk is a piece of one tensor's data on its way from the reader to the
// digests. A tensor with nothing to read is one chunk without data.
type chunk struct {
	tensor      int
	data        []byte
	buf         []byte // what goes back to the pool
	first, last bool
	err         error
}

// HashModel computes the digests of every tensor of m, and of each of its
// files, and calls emit with each in the order llama-gguf-hash prints them
// when run on each file in turn: every tensor of a file in header order, then
// the file. The digests of a file cover all its tensors' data, in header
// order, without padding. A shard set thus gives the manifests of its shards
// one after the other. An error from emit stops the work and is returned.
//
// The Result passed to emit is only valid during the call.
func HashModel(m *gguf.Model, opts Options, emit func(*Result) error) error {
	kinds := opts.Kinds
	if kinds == 0 {
		kinds = KindsOf(XXH64)
	}
	var tensorLanes, fileLanes []*lane
	for _, k := range kinds.List() {
		if k != UUID && !opts.NoTensors {
			tensorLanes = append(tensorLanes, newLane(k))
		}
		fileLanes = append(fileLanes, newLane(k))
	}
	lanes := append(append([]*lane(nil), tensorLanes...), fileLanes...)
	// Where only sha1 and the uuid are asked for, the bytes of a big tensor
	// past what they see (sha1Span) are not even read.
	full := kinds&^KindsOf(SHA1, UUID) != 0
	need := func(size int64) int64 {
		if full {
			return size
		}
		return sha1Span(size)
	}

	chunkSize := opts.ChunkSize
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	chunks := make(chan chunk, readDepth)
	free := make(chan []byte, readDepth)
	for range readDepth {
		free <- make([]byte, chunkSize)
	}
	done := make(chan struct{})
	var reader sync.WaitGroup
	defer func() {
		close(done)
		reader.Wait()
	}()
	reader.Go(func() {
		defer close(chunks)
		send := func(c chunk) bool {
			select {
			case chunks <- c:
				return true
			case <-done:
				return false
			}
		}
		for i := range m.Tensors {
			n := need(m.Tensors[i].Size)
			if n == 0 {
				if !send(chunk{tensor: i, first: true, last: true}) {
					return
				}
				continue
			}
			r := m.TensorReader(i)
			for off := int64(0); off < n; {
				var buf []byte
				select {
				case buf = <-free:
				case <-done:
					return
				}
				k := int(min(int64(len(buf)), n-off))
				_, err := r.ReadAt(buf[:k], off)
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("%w (did the file shrink?)", io.ErrUnexpectedEOF)
				}
				if !send(chunk{tensor: i, data: buf[:k], buf: buf, first: off == 0, last: off+int64(k) == n, err: err}) || err != nil {
					return
				}
				off += int64(k)
			}
		}
	})

	var res Result
	flushed := 0 // files whose digests have been emitted
	flushTo := func(shard int) error {
		for ; flushed < shard; flushed++ {
			res = Result{File: m.Shards[flushed].Path}
			for _, l := range fileLanes {
				l.sum(&res.Sums)
				l.reset()
			}
			if err := emit(&res); err != nil {
				return err
			}
		}
		return nil
	}
	for c := range chunks {
		t := &m.Tensors[c.tensor]
		file := m.Shards[t.Shard].Path
		if c.err != nil {
			return fmt.Errorf("ggufhash: %s: tensor %q: %w", file, t.Name, c.err)
		}
		if c.first {
			if err := flushTo(t.Shard); err != nil {
				return err
			}
			for _, l := range tensorLanes {
				l.reset()
			}
			for _, l := range lanes {
				l.begin(t.Size)
			}
		}
		writeAll(lanes, c.data)
		if c.buf != nil {
			free <- c.buf
		}
		if c.last && len(tensorLanes) > 0 {
			res = Result{File: file, Tensor: t.Name}
			for _, l := range tensorLanes {
				l.sum(&res.Sums)
			}
			if err := emit(&res); err != nil {
				return err
			}
		}
	}
	return flushTo(len(m.Shards))
}

// writeAll feeds p to every lane, in parallel when it is worth it: the
// digests are independent, and each runs at its own speed (xxh64 several
// GB/s, sha256 under one).
func writeAll(lanes []*lane, p []byte) {
	if len(p) < parallelMin || len(lanes) == 1 {
		for _, l := range lanes {
			l.write(p)
		}
		return
	}
	var wg sync.WaitGroup
	for _, l := range lanes[1:] {
		wg.Go(func() { l.write(p) })
	}
	lanes[0].write(p)
	wg.Wait()
}
