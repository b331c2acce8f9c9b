package pipeline

import (
	"context"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// feeder is Run's reader: it goes through the tensors to write in output
// order and sends the writer, through the workers, the pieces of each:
// rows to quantize or bytes to copy from the input (the workers read
// both), or bytes reused from an earlier output, which it reads and hashes
// itself. Every input tensor is hashed as its bytes stream in (by the
// hasher, after the writer), so the sidecar costs no second read.
type feeder struct {
	ctx          context.Context
	in           *gguf.Model
	outs         []Output
	records      [][]TensorRecord
	reuse        *Reuse
	mem          *memory
	work         chan *piece
	pieceWeights int
	threads      int
	note         func(string, ...any)
	stats        *pipeStats // if set, the reader's CPU time is added to it
	whole        bool       // pieces are converted whole (Options.quantize)

	seq     int
	hash    *xxhash.Digest
	hashBuf []byte    // for hashing a tensor before deciding to reuse it
	im      []float32 // the importance data of the matrix being fed

	converted, reused int // tensors to convert, of them reused
	reusedBytes       int64
}

// run feeds every tensor from first[output] on, then closes work.
func (f *feeder) run(first []int) {
	defer close(f.work)
	if f.stats != nil {
		defer f.stats.measure(&f.stats.reader)()
	}
	f.hash = xxhash.New()
	global := 0
	for oi, o := range f.outs {
		if o.Skip {
			global += len(o.Tensors)
			continue
		}
		for ti, t := range o.Tensors {
			if ti >= first[oi] && !f.tensor(oi, ti, global, t) {
				return
			}
			global++
		}
	}
}

// send hands a piece on in sequence; false when the run is stopping.
func (f *feeder) send(p *piece) bool {
	p.seq = f.seq
	f.seq++
	select {
	case f.work <- p:
		return true
	case <-f.ctx.Done():
		return false
	}
}

// slot borrows working memory for a piece; nil when the run is stopping.
func (f *feeder) slot(n need) *buffers { return f.mem.acquire(f.ctx, n) }

// chunkBytes is the size of the byte pieces of copies: as many bytes as a
// piece's float32 rows, at most a sixteenth of the memory budget, whatever
// the number of workers (copies need none). copyBytes holds one while it
// reads the next, and both always fit.
func (f *feeder) chunkBytes() int64 {
	return min(4*int64(f.pieceWeights), f.mem.limit/16)
}

// tensor feeds one tensor; false when the run is stopping.
func (f *feeder) tensor(oi, ti, global int, t Tensor) bool {
	if !t.Convert {
		// The workers read the bytes (and check them) and the hasher
		// hashes them: the reader would bound a copy if it did both.
		size := f.in.Tensors[t.Source].Size
		unit := formats.CheckUnit(f.in.Tensors[t.Source].Type)
		_, alive, _ := f.copyBytes(oi, ti, global, f.in.TensorReader(t.Source), size, unit, true, func(last *piece) bool {
			last.inBytes = size
			return true
		})
		return alive
	}
	f.converted++
	rec := &f.records[oi][ti]
	if cands := f.reuse.candidates(rec); cands != nil {
		if f.hashBuf == nil {
			f.hashBuf = make([]byte, f.chunkBytes())
		}
		sum, err := hashTensor(f.in, t.Source, f.hashBuf)
		if err != nil {
			return f.send(&piece{out: oi, tensor: ti, global: global, err: fmt.Errorf("%s: reading tensor %s: %w", f.outs[oi].Path, t.Name, err)})
		}
		for _, c := range cands[sum] {
			ok, alive := f.reuseTensor(oi, ti, global, t, c, sum)
			if !alive {
				return false
			}
			if ok {
				return true
			}
		}
	}
	return f.quantize(oi, ti, global, t)
}

// quantize feeds the rows of a tensor to convert.
//
// The workers read the rows (readPiece) and the hasher hashes them in
// order, after the writer: the reader only plans and lends memory, so
// that it never bounds the run however many workers read at once.
//
// A planned tensor's importance data (Tensor.importance) is made here, once
// per matrix, as the pieces reach it; each piece takes a copy in its
// buffers, so what the run holds of it is bounded with the pieces.
func (f *feeder) quantize(oi, ti, global int, t Tensor) bool {
	pw := piecesFit(f.in, t, f.pieceWeights, f.mem.limit, f.threads)
	loaded := int64(-1) // the first stored value f.im is made of
	for _, p := range planPieces(f.in, t, pw, scanAhead(f.threads)) {
		p.out, p.tensor, p.global = oi, ti, global
		if p.kind == pieceScan {
			// Around the writer (no place in the sequence), with the
			// memory to read the call a piece at a time.
			if p.buf = f.slot(pieceNeed(f.in, t, p, f.whole)); p.buf == nil {
				return false
			}
			select {
			case f.work <- p:
			case <-f.ctx.Done():
				return false
			}
			continue
		}
		if is := t.importance; is != nil && is.first(p.matrix) != loaded {
			f.im = grow(f.im, int(is.ne0))
			if _, err := is.matrix(p.matrix, f.im); err != nil {
				p.err = fmt.Errorf("%s: tensor %s: importance data of matrix %d: %w", f.outs[oi].Path, t.Name, p.matrix, err)
				return f.send(p)
			}
			loaded = is.first(p.matrix)
		}
		if p.buf = f.slot(pieceNeed(f.in, t, p, f.whole)); p.buf == nil {
			return false
		}
		if t.importance != nil {
			p.buf.im = grow(p.buf.im, len(f.im))
			copy(p.buf.im, f.im)
			p.im = p.buf.im
		}
		if !f.send(p) {
			return false
		}
	}
	return true
}

// scanAhead is how many calls ahead of its pieces a call's scan is sent
// (callScan). A scan takes about a tenth of the CPU time of the call's
// pieces (two decodes of the call and its in-order sums, for q2_K: 0.66 s
// against 6.3 s on four DeepSeek-R1-shaped experts), all on one worker, so
// with threads workers on the pieces about threads/10 scans must run at
// once for the writer never to wait for one. A quarter of the workers
// leaves a margin; a scan holds memory for 32K weights only while it runs.
func scanAhead(threads int) int { return max(1, threads/4) }

// reuseTensor copies an earlier output's tensor c as tensor ti, hashing
// its bytes as they are read: if they no longer hash to c's record, what
// was sent of it is rewound and ok is false (the caller quantizes).
func (f *feeder) reuseTensor(oi, ti, global int, t Tensor, c reused, inSum uint64) (ok, alive bool) {
	r, size := f.reuse.reader(c)
	if size != f.records[oi][ti].Size {
		return false, true
	}
	f.hash.Reset()
	ok, alive, err := f.copyBytes(oi, ti, global, r, size, 0, false, func(last *piece) bool {
		if f.hash.Sum64() != c.output {
			f.note("--reuse: %s in %s is not the tensor its sidecar recorded (changed since): quantized instead", t.Name, c.file)
			return false
		}
		last.inSum, last.outSum = inSum, c.output
		last.inBytes = f.in.Tensors[t.Source].Size
		last.fallback = c.fallback.fallback(t.Type)
		return true
	})
	if err != nil {
		f.note("--reuse: reading %s in %s: %v: quantized instead", t.Name, c.file, err)
	}
	if ok {
		f.reused++
		f.reusedBytes += size
	}
	return ok, alive
}

// copyBytes sends the size bytes of r as byte pieces of tensor ti,
// reading them and hashing them into f.hash; with a unit (formats.CheckUnit
// of an input tensor) the pieces are whole units, which the workers check
// as the reference's loader does. The last piece is held back until
// finish, called after every byte is read, accepts it (and fills it in);
// if it does not, or reading fails (err), the pieces sent are rewound and
// ok is false. alive is false when the run is stopping.
//
// lazy pieces are read by the workers and hashed by the hasher instead
// (piece.from), which also fills in the last piece's hashes; finish then
// comes before any byte is read, and a read fails the run.
func (f *feeder) copyBytes(oi, ti, global int, r io.ReaderAt, size int64, unit int, lazy bool, finish func(last *piece) bool) (ok, alive bool, err error) {
	chunk := f.chunkBytes()
	if unit > 0 {
		chunk = max(chunk-chunk%int64(unit), int64(unit))
	}
	var held *piece
	sent := false
	drop := func(err error) (bool, bool, error) {
		if held != nil {
			f.mem.release(held.buf)
		}
		if sent && !f.send(&piece{kind: pieceRewind, out: oi, tensor: ti, global: global}) {
			return false, false, err
		}
		return false, true, err
	}
	for off := int64(0); off < size || off == 0; off += chunk {
		n := min(chunk, size-off)
		p := &piece{kind: pieceBytes, out: oi, tensor: ti, global: global, check: unit > 0, off: off}
		if p.buf = f.slot(need{raw: int(n)}); p.buf == nil {
			if held != nil {
				f.mem.release(held.buf)
			}
			return false, false, nil
		}
		p.buf.raw = grow(p.buf.raw, int(n))
		if lazy {
			p.from = r
		} else {
			if _, err := r.ReadAt(p.buf.raw, off); err != nil {
				f.mem.release(p.buf)
				return drop(err)
			}
			p.dst = p.buf.raw
			f.hash.Write(p.dst)
		}
		if held != nil {
			if !f.send(held) {
				return false, false, nil
			}
			sent = true
		}
		held = p
		if size == 0 {
			break
		}
	}
	if !finish(held) {
		return drop(nil)
	}
	held.last = true
	alive = f.send(held)
	return alive, alive, nil
}
