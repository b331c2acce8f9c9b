// Package pipeline runs a quantization plan: it streams every tensor of the
// input model through conversion to float32, the quantize kernels and the
// GGUF writer, in bounded pieces, with workers on every core and reading and
// writing overlapped with the compute.
package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// Tensor is one tensor of an output file and how to make it.
type Tensor struct {
	Name   string
	Shape  []int64
	Source int          // index into the input model's Tensors
	Type   formats.Type // type written
	// Convert is false when the input bytes are copied unchanged.
	Convert bool
	// Imatrix holds ne0 mean importance weights per matrix (ne2*ne3 of them),
	// or is nil. A plan's tensors leave it nil and have their data made a
	// matrix at a time as the run reaches them (importance).
	Imatrix []float32
	// importance, set by Build, makes the tensor's importance data.
	importance *importanceSource
	// Kernel holds the kernel switches the tensor is quantized with
	// (Config.Kernel).
	Kernel quantize.Options
}

// Output is one file to write.
type Output struct {
	Path     string
	Metadata gguf.Metadata
	Tensors  []Tensor
	// Skip leaves the file alone (--partial-requant, or --resume with
	// Config.Resume: it exists and matches the plan, see CheckExisting).
	Skip bool
	// Replace: the file exists but does not match the plan, and
	// --partial-requant asks for it to be written again.
	Replace bool
	// Elsewhere: another run writes this output (Config.OnlyShards did not
	// select it); Skip is set too.
	Elsewhere bool

	kept    *Sidecar // the sidecar of a Skip file, for VerifyKept
	resumed bool     // kept by Config.Resume: if VerifyKept fails it, it is not replaced
}

// Event reports progress: tensor Index (0-based, over all outputs) of Count
// has had Done of its Bytes input bytes processed.
type Event struct {
	Index, Count int
	Name         string
	Done, Bytes  int64
	Finished     bool // the tensor is fully written
	// Fallback, on the Finished event only, lists the rows of the tensor
	// the reference cannot quantize (see Fallback), nil when none.
	Fallback *Fallback
}

// MaxThreads bounds the workers Run starts, whatever Options.Threads asks
// for: the memory budget shares itself out as two pieces per worker, and at
// this many workers the default budget's pieces are down to a few rows of
// the widest models, so more workers would only wait (and hold their
// stacks and scratch).
const MaxThreads = 1024

// Options adjusts Run.
type Options struct {
	// Threads is the number of quantizing workers (default: all cores; at
	// most MaxThreads).
	Threads int
	// PieceWeights bounds the weights of one work piece (default 1<<21).
	// Pieces are smaller where Memory would not otherwise hold two per
	// worker. A call the reference makes over more rows is split too; for
	// the one type whose bytes depend on the whole call it is scanned first
	// (see quantize.CallScoped and callScan).
	PieceWeights int
	// Memory bounds the bytes the pieces in flight hold, from reading to
	// writing: input rows, their float32 conversion and the output
	// (default DefaultMemory, at least 1 MiB). It does not grow with
	// Threads; a piece larger than it on its own is worked on alone.
	Memory int64
	// Progress, if set, is called as pieces are written, from one
	// goroutine at a time and in order; a Finished tensor is on disk and
	// in the progress record (see syncer).
	Progress func(Event)
	// Inputs are paths that must not be overwritten (the input model's files).
	Inputs []string
	// Reuse, when set, holds earlier outputs whose tensors are copied
	// where their sidecars show they are what this run would write
	// (--reuse; see OpenReuse).
	Reuse *Reuse
	// Resume holds, per output (as outs), the temporary file of an
	// interrupted run to continue (FindResumable); nil, or a nil entry,
	// starts the output afresh.
	Resume []*Resumable
	// Keep: when ctx is cancelled (an interrupt), keep the temporary files
	// and their progress records for a later Resume instead of removing
	// them (--resume).
	Keep bool
	// Notes, if set, receives a line about each thing worth telling that
	// is not an error: what was reused and what could not be, a sidecar
	// that could not be written.
	Notes func(string)

	// memoryReport, if set, is called with the bytes lent to pieces in
	// flight, the bytes of all buffers kept and the pieces in flight, on
	// every change (tests).
	memoryReport func(inUse, held int64, pieces int)
	// quantize, if set, replaces quantizePiece (benchmarks: a stand-in
	// kernel that measures the pipeline rather than the kernels); its
	// pieces are converted whole, never in chunks (convertChunks) or in
	// one pass (convertOnePass).
	quantize func(t Tensor, p *piece) error
	// stats, if set, receives the CPU time of the reader, the writer and
	// the hashers.
	stats *pipeStats
	// beforeScan, if set, is called by a worker before it scans a call
	// (tests: holding a scan back makes its call's pieces speculative).
	beforeScan func(*callScan)
}

// pipeStats is the CPU time the one reader, the one writer and the two
// hasher goroutines of a run used: the input bytes over any of them is the
// rate at which it alone would bound the run, however many workers there
// are.
type pipeStats struct {
	reader, writer, inHasher, outHasher time.Duration
	// threadCPU is the CPU time of the calling OS thread (benchmarks).
	threadCPU func() time.Duration
}

// measure locks the goroutine to its thread, so that the thread's CPU time
// is the goroutine's, and returns what adds that time to *d and unlocks.
func (s *pipeStats) measure(d *time.Duration) func() {
	runtime.LockOSThread()
	start := s.threadCPU()
	return func() {
		*d += s.threadCPU() - start
		runtime.UnlockOSThread()
	}
}

// pieceKind says what the writer does with a piece.
type pieceKind int

const (
	pieceQuantize pieceKind = iota // rows to convert and quantize
	pieceBytes                     // bytes to write as they are (dst)
	pieceRewind                    // drop what was written of the tensor
	pieceScan                      // a call to scan (scanCall); it bypasses the writer
)

// piece is one unit of work: rows [row, row+rows) of one matrix of a
// tensor, or a run of bytes copied from the input or an earlier output.
type piece struct {
	seq     int
	kind    pieceKind
	out     int // output file
	tensor  int // index in the output's Tensors
	global  int // tensor index over all outputs, for progress
	matrix  int64
	row     int64
	rows    int64
	last    bool   // last piece of its tensor
	inSum   uint64 // on the last piece: xxhash64 of the input tensor's bytes
	outSum  uint64 // on the last byte piece: xxhash64 of the bytes written (the feeder hashed them, unless from is set)
	inBytes int64
	// from: the input tensor a byte piece is read from, at off, by its
	// worker; the hasher hashes it (feeder.copyBytes' lazy pieces).
	from io.ReaderAt
	// check: a byte piece copied from the input, whose values (or block
	// scales) are checked as the reference's loader checks them, from its
	// byte offset off in the tensor (see checkStored).
	check bool
	off   int64

	buf      *buffers // borrowed from the pool for the piece's lifetime
	src      []float32
	im       []float32 // the matrix's importance data (a planned tensor's, see importanceSource)
	dst      []byte
	overGate bool      // some |src| reaches overflowGate (see checkOutput)
	fallback *Fallback // rows written by a substitute encoding (tensor rows)
	err      error

	// Call-scoped types (quantize.CallScoped): a piece holds several whole
	// reference calls of callRows rows each, or is part of one call, whose
	// scan is call; speculative says it was quantized before that scan
	// ended (see callScan).
	callRows    int64
	call        *callScan
	speculative bool
}

// callScan is the scan of one reference call of a call-scoped type that is
// larger than a piece (quantize.CallState). A pieceScan reads the call and
// scans it while workers quantize the call's pieces; a piece whose worker
// finds the scan not yet done is quantized with an empty state instead,
// which gives the call's bytes unless the scan's result Matters (q2_K:
// ternary weights, which models rarely have). The writer waits for the scan
// when it reaches the call's first piece and redoes those pieces then. No
// worker waits for another, and a call of any size is quantized in pieces
// by all workers, within the memory budget.
//
// The scan goes around the writer: its worker returns its memory and
// closes done. It is sent scanAhead calls before its call's pieces (see
// planPieces), so that the scans of the next calls, which take longer than
// many workers need for one call's pieces, run while the earlier calls are
// quantized.
type callScan struct {
	state *quantize.CallState
	chunk int64         // rows the scan reads at a time (see scanChunk)
	done  chan struct{} // closed when state holds the whole call, or err is set
	err   error
}

// scanned reports whether the scan has ended.
func (c *callScan) scanned() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// buffers are the reusable working memory of one piece in flight, lent by
// memory, which keeps them for the next pieces: the garbage collector
// rarely sees per-piece allocations.
type buffers struct {
	raw  []byte
	f32  []float32
	out  []byte
	im   []float32 // the piece's matrix's importance data
	lent int64     // bytes memory counts for them while lent
}

// grow returns s with length n, reallocated with capacity sizeClass(n)
// when it holds less.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, sizeClass(n))
	}
	return s[:n]
}

// sizeClass rounds n up to 8 to 16 times a power of two (12.5 % more at
// most). Pieces of tensors of different shapes ask for slightly different
// sizes; kept buffers of the class of the first fit the next ones, where
// growing by each few bytes would leave the old buffer as garbage every
// time (the heap, and the process, would grow up to twice the memory
// budget before the collector runs).
func sizeClass(n int) int {
	e := bits.Len(uint(n)) - 4
	if n <= 16 || e <= 0 {
		return n
	}
	return ((n-1)>>e + 1) << e
}

// Run writes every output, and a sidecar beside each (see Sidecar),
// making missing directories as llama-quantize does. On an error while
// writing no output file is left under its final name. Once every output
// is complete none is removed: if putting them in place fails part way,
// the error is a *gguf.CommitError saying which are in place (with their
// sidecars), which are as before and where their new files are kept.
//
// An output that exists when Run starts is replaced (the caller checked
// that it may be: --force, --partial-requant); one created while Run
// works is not (an error wrapping os.ErrExist).
func Run(ctx context.Context, in *gguf.Model, outs []Output, opt Options) error {
	if opt.Threads <= 0 {
		opt.Threads = runtime.GOMAXPROCS(0)
	}
	opt.Threads = min(opt.Threads, MaxThreads)
	if opt.PieceWeights <= 0 {
		opt.PieceWeights = 1 << 21
	}
	if opt.Memory <= 0 {
		opt.Memory = DefaultMemory
	}
	opt.Memory = max(opt.Memory, minMemory)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	note := func(format string, args ...any) {
		if opt.Notes != nil {
			opt.Notes(fmt.Sprintf(format, args...))
		}
	}

	records := make([][]TensorRecord, len(outs))
	sizes := make([]int64, len(outs))
	first := make([]int, len(outs)) // first tensor to write (after a resume)
	writers := make([]*gguf.Writer, len(outs))
	journals := make([]*journal, len(outs))
	replace := make([]bool, len(outs)) // the output existed when the run started
	abortAll := func() {
		keep := opt.Keep && parent.Err() != nil
		for i, w := range writers {
			switch {
			case w == nil:
			case keep:
				w.Detach()
				journals[i].close()
			default:
				w.Abort()
				journals[i].remove()
			}
		}
	}
	for i, o := range outs {
		if o.Skip {
			continue
		}
		infos := make([]gguf.TensorInfo, len(o.Tensors))
		for j, t := range o.Tensors {
			if err := checkTensor(in, t); err != nil {
				abortAll()
				return fmt.Errorf("%s: tensor %s: %w", o.Path, t.Name, err)
			}
			infos[j] = gguf.TensorInfo{Name: t.Name, Shape: t.Shape, Type: t.Type}
		}
		recs, size, err := planRecords(in, o)
		if err != nil {
			abortAll()
			return err
		}
		records[i], sizes[i] = recs, size
		copts := &gguf.CreateOptions{Inputs: opt.Inputs, Context: parent}
		if opt.Keep {
			// The run stops by itself on an interrupt and keeps the file.
			copts.Context = nil
		}
		_, err = os.Lstat(o.Path)
		replace[i] = err == nil
		var w *gguf.Writer
		var resumed *Resumable
		if i < len(opt.Resume) && opt.Resume[i] != nil {
			resumed = opt.Resume[i]
			w, err = gguf.Resume(o.Path, resumed.Temp, o.Metadata, infos, resumed.Done, copts)
			if err == nil {
				copy(recs, resumed.records)
				first[i] = resumed.Done
			}
		} else if err = os.MkdirAll(filepath.Dir(o.Path), 0o755); err == nil {
			// A missing directory is made, as llama-quantize makes it.
			w, err = gguf.Create(o.Path, o.Metadata, infos, copts)
		}
		if err != nil {
			abortAll()
			return err
		}
		writers[i] = w
		j, err := createJournal(w.TempPath(), o.Path, size, recs[:first[i]])
		if err != nil {
			abortAll()
			return fmt.Errorf("%s: progress record of %s: %w", o.Path, w.TempPath(), err)
		}
		journals[i] = j
		if resumed != nil {
			os.Remove(journalPath(resumed.Temp))
		}
	}

	count := 0
	for _, o := range outs {
		count += len(o.Tensors)
	}

	temps := make([]string, len(outs))
	for i, w := range writers {
		if w != nil {
			temps[i] = w.TempPath()
		}
	}
	sy, err := newSyncer(temps, journals, outs, opt.Progress, cancel)
	if err != nil {
		abortAll()
		return err
	}

	// Two pieces per worker keep every worker busy while the writer waits
	// for the next piece in order, within the memory budget.
	mem := newMemory(opt.Memory, 2*opt.Threads, opt.memoryReport)
	work := make(chan *piece, opt.Threads)
	done := make(chan *piece, 2*opt.Threads)

	// Reader: plans pieces in output order, lends them memory, and reads
	// (and hashes) the tensors it copies.
	fd := &feeder{ctx: ctx, in: in, outs: outs, records: records, reuse: opt.Reuse, mem: mem, work: work,
		pieceWeights: opt.PieceWeights, threads: opt.Threads, note: note, stats: opt.stats, whole: opt.quantize != nil}
	go fd.run(first)

	// Workers: read, convert and quantize.
	var wg sync.WaitGroup
	for w := 0; w < opt.Threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var deq []float32 // checkOutput's, one row group
			for p := range work {
				if p.kind == pieceScan {
					t := outs[p.out].Tensors[p.tensor]
					if opt.beforeScan != nil {
						opt.beforeScan(p.call)
					}
					if err := scanCall(ctx, in, t, p); err != nil {
						src := in.Shards[in.Tensors[t.Source].Shard].Path
						p.call.err = fmt.Errorf("%s: tensor %s (in %s): %w", outs[p.out].Path, t.Name, src, err)
					}
					mem.release(p.buf)
					close(p.call.done)
					continue
				}
				if p.err == nil && p.from != nil {
					if err := readBytes(in, outs[p.out].Tensors[p.tensor], p); err != nil {
						p.err = fmt.Errorf("%s: tensor %s: %w", outs[p.out].Path, outs[p.out].Tensors[p.tensor].Name, err)
					}
				}
				if p.err == nil && p.kind == pieceBytes && p.check {
					t := outs[p.out].Tensors[p.tensor]
					if err := checkStored(in.Tensors[t.Source].TensorInfo, p.off, p.dst); err != nil {
						src := in.Shards[in.Tensors[t.Source].Shard].Path
						p.err = fmt.Errorf("%s: tensor %s (in %s): %w", outs[p.out].Path, t.Name, src, err)
					}
				}
				if p.err == nil && p.kind == pieceQuantize {
					t := outs[p.out].Tensors[p.tensor]
					if readErr, convErr := readConvert(in, t, p, opt.quantize, &deq); readErr != nil {
						p.err = fmt.Errorf("%s: tensor %s: %w", outs[p.out].Path, t.Name, readErr)
					} else if convErr != nil {
						src := in.Shards[in.Tensors[t.Source].Shard].Path
						p.err = fmt.Errorf("%s: tensor %s (in %s): %w", outs[p.out].Path, t.Name, src, convErr)
					}
				}
				p.src = nil
				select {
				case done <- p:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	// Tensors complete in a resumed file count as done at once.
	if opt.Progress != nil {
		global := 0
		for i, o := range outs {
			for j, t := range o.Tensors {
				if j < first[i] {
					size := in.Tensors[t.Source].Size
					opt.Progress(Event{Index: global + j, Count: count, Name: t.Name, Done: size, Bytes: size, Finished: true,
						Fallback: records[i][j].Fallback.fallback(t.Type)})
				}
			}
			global += len(o.Tensors)
		}
	}

	// Writer: emit pieces in sequence order while later ones are computed,
	// and hand each written piece to the hasher.
	pending := map[int]*piece{}
	next := 0
	var firstErr error
	var deq []float32 // checkOutput's, for pieces redone here
	var stopStats func()
	if opt.stats != nil {
		stopStats = opt.stats.measure(&opt.stats.writer)
	}
	// Hasher: in the same order, hash what was written and the input rows
	// quantized, record each complete tensor, report progress and give the
	// piece's memory back.
	written := make(chan *piece, 2*opt.Threads)
	hashed := make(chan struct{})
	hs := &hasher{in: in, outs: outs, records: records, count: count, progress: opt.Progress, sy: sy, mem: mem, stats: opt.stats}
	go func() {
		defer close(hashed)
		hs.run(written)
	}()
	halted := false
	for p := range done {
		if firstErr != nil || halted {
			continue
		}
		pending[p.seq] = p
		for {
			q := pending[next]
			if q == nil {
				break
			}
			delete(pending, next)
			next++
			if q.err != nil {
				firstErr = q.err
				cancel()
				break
			}
			t := outs[q.out].Tensors[q.tensor]
			if q.call != nil {
				select {
				case <-q.call.done:
				case <-ctx.Done():
					// The run is stopping (the syncer failed, or an
					// interrupt), and the scan with it.
					halted = true
				}
				if halted {
					break
				}
				if err := q.call.err; err != nil {
					firstErr = err
					cancel()
					break
				}
			}
			if q.speculative && q.call.state.Matters() {
				// Quantized before its call's scan ended, as if the scan
				// found nothing: again, from the rows it still holds.
				q.speculative = false
				if err := convertPiece(in, t, q, opt.quantize, &deq); err != nil {
					src := in.Shards[in.Tensors[t.Source].Shard].Path
					firstErr = fmt.Errorf("%s: tensor %s (in %s): %w", outs[q.out].Path, t.Name, src, err)
					cancel()
					break
				}
				q.src = nil
			}
			w := writers[q.out]
			var err error
			if q.kind == pieceRewind {
				err = w.RewindTensor()
			} else {
				_, err = w.Write(q.dst)
			}
			if err != nil {
				firstErr = err
				cancel()
				break
			}
			written <- q
		}
	}
	if stopStats != nil {
		stopStats()
	}
	close(written)
	<-hashed
	if err := sy.stop(); firstErr == nil {
		firstErr = err
	}
	if firstErr == nil {
		// Stopped from outside (an interrupt): the pieces stopped coming.
		firstErr = parent.Err()
	}
	if firstErr != nil {
		abortAll()
		return firstErr
	}
	// Every output is complete: staged, then put in place together, each
	// old sidecar removed before its file is replaced (a sidecar must never
	// describe a file that is not there, even if the new one cannot be
	// written).
	var staged []gguf.Staged
	var placed []int // outputs, as staged
	drop := func() { // before the commit: nothing is in place
		for _, done := range staged {
			os.Remove(done.Temp)
		}
		abortAll()
	}
	for i, w := range writers {
		if w == nil {
			continue
		}
		s, err := w.Stage()
		if err != nil {
			drop()
			return err
		}
		s.Replace = replace[i]
		s.Beside = []string{SidecarPath(outs[i].Path)}
		staged = append(staged, s)
		placed = append(placed, i)
	}
	set, err := planSet(in, outs)
	if err != nil {
		drop()
		return err
	}
	// Each sidecar's header hash and the identity of its file are taken
	// before the commit: after it, a file at the path may be another
	// process's, which must not get this run's sidecar.
	headers := make([]string, len(staged))
	files := make([]os.FileInfo, len(staged))
	for k, s := range staged {
		var err error
		if headers[k], err = hashHeader(s.Temp, dataOffset(records[placed[k]], sizes[placed[k]])); err == nil {
			files[k], err = os.Stat(s.Temp)
		}
		if err != nil {
			drop()
			return fmt.Errorf("%s: %w", outs[placed[k]].Path, err)
		}
	}
	// Each file's sidecar is written as soon as it is in place, and only
	// then its progress record goes: a run killed between two renames
	// leaves files in place that --resume keeps (they have sidecars) and
	// complete ones it puts in place (they have progress records). Those a
	// failed commit keeps keep their records for the same reason.
	for k, i := range placed {
		staged[k].Placed = func() {
			sc := &Sidecar{Schema: SidecarSchema, File: filepath.Base(outs[i].Path), Size: sizes[i], Tensors: records[i], Header: headers[k], Set: set}
			switch written, err := sidecarFor(outs[i].Path, files[k], sc); {
			case err != nil:
				note("%s is complete, but its sidecar could not be written (%v): --reuse and --partial-requant will not trust it", outs[i].Path, err)
			case !written:
				note("%s was replaced by another process after this run put its file there: no sidecar written for it", outs[i].Path)
			}
			journals[i].remove()
		}
	}
	commitErr := gguf.Commit(staged)
	for _, i := range placed {
		journals[i].close() // those not in place keep theirs
	}
	if commitErr != nil {
		return commitErr
	}
	// A file kept as this plan's (--partial-requant, --resume) belongs to
	// this set now: its sidecar, checked against the plan, names it.
	for _, o := range outs {
		if o.Skip && !o.Elsewhere && o.kept != nil && o.kept.Set != set {
			sc := *o.kept
			sc.Set = set
			if err := writeSidecar(o.Path, &sc); err != nil {
				note("%s is kept, but its sidecar could not be updated (%v): verify will see it as a file of another run", o.Path, err)
			}
		}
	}
	if opt.Reuse != nil {
		note("reused %d of %d tensors (%s) from earlier outputs; quantized the others", fd.reused, fd.converted, humanBytes(fd.reusedBytes))
	}
	return nil
}

// checkTensor verifies an output tensor against its source before any work.
func checkTensor(in *gguf.Model, t Tensor) error {
	if t.Source < 0 || t.Source >= len(in.Tensors) {
		return fmt.Errorf("no input tensor %d", t.Source)
	}
	src := in.Tensors[t.Source]
	if !t.Convert {
		if src.Type != t.Type {
			return fmt.Errorf("copy from %s to %s", src.Type, t.Type)
		}
		return nil
	}
	if t.Type != formats.F32 && !quantize.Supported(t.Type) {
		return fmt.Errorf("%w %s", quantize.ErrUnsupported, t.Type)
	}
	switch src.Type {
	case formats.F32, formats.F16, formats.BF16:
	default:
		if !formats.CanDequantize(src.Type) {
			return fmt.Errorf("cannot read %s input", src.Type)
		}
		if src.Type.Interleave() > 1 {
			return fmt.Errorf("requantizing from the row-interleaved %s is not supported; run 'gquant repack --undo' first", src.Type)
		}
	}
	ne0, rows, mats := gguf.Dims(t.Shape)
	if ne0 != src.Shape[0] || rows*mats != src.Rows() {
		return fmt.Errorf("shape %v does not match the input's %v", t.Shape, src.Shape)
	}
	if _, err := t.Type.RowSize(ne0); err != nil {
		return err
	}
	if rows%int64(t.Type.Interleave()) != 0 {
		return fmt.Errorf("%d rows are not a multiple of %s's %d-row groups", rows, t.Type, t.Type.Interleave())
	}
	if t.Imatrix != nil && int64(len(t.Imatrix)) != ne0*mats {
		return fmt.Errorf("importance matrix has %d values, tensor needs %d (%d x %d)", len(t.Imatrix), ne0*mats, ne0, mats)
	}
	return nil
}

// hasImatrix reports whether the tensor is quantized with importance data.
func (t Tensor) hasImatrix() bool { return t.Imatrix != nil || t.importance != nil }

// imatrixHash is hashImatrix of the tensor's importance data.
func (t Tensor) imatrixHash() string {
	if t.importance != nil {
		return t.importance.hash
	}
	return hashImatrix(t.Imatrix)
}

// CallRows returns how many rows of one matrix the reference quantizes per
// ggml_quantize_chunk call, and whether each matrix is one call: llama-quantize
// with two or more threads quantizes a 3-D tensor one matrix per call when
// ne2 is even or at least 4, and otherwise in calls of ceil(16384 / ne0) rows
// (at least one row) times the interleave count.
func CallRows(t formats.Type, shape []int64) (rowsPerCall int64, wholeMatrix bool) {
	ne0, rows, mats := gguf.Dims(shape)
	if mats%2 == 0 || mats >= 4 {
		return rows, true
	}
	const minChunk = 32 * 512
	per := (minChunk + ne0 - 1) / ne0
	if ne0 >= minChunk {
		per = 1
	}
	return per * int64(t.Interleave()), false
}

// piecesFit returns the weights of a piece of tensor t such that two
// pieces per worker fit in memory bytes, at most pieceWeights: with more
// workers the pieces get smaller, so that every worker has one while
// memory bounds the bytes in flight. planPieces keeps at least one row
// group, whatever this says.
func piecesFit(in *gguf.Model, t Tensor, pieceWeights int, memory int64, threads int) int {
	ne0, _, _ := gguf.Dims(t.Shape)
	srcRow, err1 := in.Tensors[t.Source].Type.RowSize(ne0)
	dstRow, err2 := t.Type.RowSize(ne0)
	if err1 != nil || err2 != nil || ne0 <= 0 {
		return pieceWeights
	}
	// 7/8: buffers are allocated in size classes (sizeClass).
	rows := memory / int64(2*max(threads, 1)) * 7 / 8 / (srcRow + 4*ne0 + dstRow)
	return int(min(int64(pieceWeights), rows*ne0))
}

// pieceNeed is the working memory of piece p of tensor t; whole says it
// is converted whole, never in chunks (convertChunks).
func pieceNeed(in *gguf.Model, t Tensor, p *piece, whole bool) need {
	ne0, _, _ := gguf.Dims(t.Shape)
	srcRow, _ := in.Tensors[t.Source].Type.RowSize(ne0)
	dstRow, _ := t.Type.RowSize(ne0)
	if p.kind == pieceScan {
		rows := min(p.rows, p.call.chunk) // returned by the worker after the scan
		return need{raw: int(rows * srcRow), f32: int(rows * ne0)}
	}
	n := need{raw: int(p.rows * srcRow), f32: int(p.rows * ne0), out: int(p.rows * dstRow)}
	if k := chunkRows(t, p); k > 0 && !whole {
		n.f32 = int(k * ne0)
	}
	if t.importance != nil {
		n.im = int(ne0)
	}
	return n
}

// planPieces splits a converted tensor into work pieces: row ranges of
// about PieceWeights weights, in whole row groups. For call-scoped types
// (quantize.CallScoped) pieces hold whole reference calls where these are
// smaller, and otherwise split one call, which a pieceScan scans; the
// scans of scanAhead more calls come before each call's pieces.
func planPieces(in *gguf.Model, t Tensor, pieceWeights, scanAhead int) []*piece {
	src := in.Tensors[t.Source]
	ne0, rows, mats := gguf.Dims(t.Shape)
	group := int64(t.Type.Interleave())
	step := max(int64(pieceWeights)/ne0/group*group, group)
	scoped := quantize.CallScoped(t.Type, t.hasImatrix())
	call := rows // pieces do not cross the stretches of call rows
	var callRows int64
	if scoped {
		per, _ := CallRows(t.Type, t.Shape)
		if per <= step {
			step = step / per * per
			callRows = per
		} else {
			call = min(per, rows)
		}
	}
	srcRow, _ := src.Type.RowSize(ne0)
	type callPieces struct {
		scan   *piece
		pieces []*piece
	}
	var calls []callPieces
	var scans []*piece
	for m := int64(0); m < mats; m++ {
		for c := int64(0); c < rows; c += call {
			cn := min(call, rows-c)
			var cp callPieces
			var scan *callScan
			if scoped && callRows == 0 && cn > step {
				scan = &callScan{state: quantize.NewCallState(t.Type, false), chunk: min(step, max(scanChunk/ne0, 1)), done: make(chan struct{})}
				cp.scan = &piece{kind: pieceScan, matrix: m, row: c, rows: cn, call: scan}
				scans = append(scans, cp.scan)
			}
			for r := c; r < c+cn; r += step {
				n := min(step, c+cn-r)
				cp.pieces = append(cp.pieces, &piece{matrix: m, row: r, rows: n, inBytes: n * srcRow, callRows: callRows, call: scan})
			}
			calls = append(calls, cp)
		}
	}
	var out []*piece
	sent, j := 0, 0 // scans in out; this call's scan
	for _, cp := range calls {
		if cp.scan != nil {
			// This call's scan and the next scanAhead.
			for ; sent <= min(j+max(scanAhead, 0), len(scans)-1); sent++ {
				out = append(out, scans[sent])
			}
			j++
		}
		out = append(out, cp.pieces...)
	}
	out[len(out)-1].last = true
	return out
}

// scanChunk is about how many weights a scan reads at a time: their
// float32 values (128 KiB) stay in L2 from the decoding to the scan, where
// a piece's (8 MiB) made the scan wait for memory twice.
const scanChunk = 1 << 15

// scanCall scans the call of a pieceScan (callScan), reading it about
// scanChunk weights at a time through its buffers: once for ScanMax, then
// again, in order, for ScanSums. It stops early when ctx is done.
func scanCall(ctx context.Context, in *gguf.Model, t Tensor, p *piece) error {
	c := p.call
	for pass := 0; pass < 2; pass++ {
		for r := p.row; r < p.row+p.rows; r += c.chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			g := &piece{matrix: p.matrix, row: r, rows: min(c.chunk, p.row+p.rows-r), buf: p.buf}
			if err := readPiece(in, t, g); err != nil {
				return err
			}
			if err := decodePiece(in, t, g); err != nil {
				return err
			}
			if pass == 0 {
				c.state.ScanMax(g.src)
			} else {
				c.state.ScanSums(g.src)
			}
		}
	}
	return nil
}

// convertPiece converts the piece's input rows: in one pass where it can
// (convertOnePass), otherwise with convertRows.
func convertPiece(in *gguf.Model, t Tensor, p *piece, quantize func(Tensor, *piece) error, deq *[]float32) error {
	if quantize == nil && convertOnePass(in, t, p) {
		return nil
	}
	return convertRows(in, t, p, quantize, deq)
}

// convertRows converts the piece's input rows to float32, quantizes them
// (with quantize: quantizePiece, or a benchmark's stand-in) and checks the
// output.
func convertRows(in *gguf.Model, t Tensor, p *piece, quantize func(Tensor, *piece) error, deq *[]float32) error {
	if quantize == nil {
		if n := chunkRows(t, p); n > 0 {
			return convertChunks(in, t, p, n, deq, nil)
		}
		quantize = quantizePiece
	}
	if err := decodePiece(in, t, p); err != nil {
		return err
	}
	if err := quantizeAfterLead(in, t, p, quantize); err != nil {
		return err
	}
	return checkOutput(t, p, deq)
}

// quantizeAfterLead quantizes the piece. For a type whose rows carry state
// within a reference call (quantize.Lead: iq1_m, iq1_m_r4) and a piece that
// starts inside a call, the kernel first sees the rows before the piece
// that last set each part of that state (usually the one row group just
// before it), in their order, and their bytes are dropped: the piece's bytes
// are then those of the whole call.
func quantizeAfterLead(in *gguf.Model, t Tensor, p *piece, quantizeFn func(Tensor, *piece) error) error {
	rows, err := leadRows(in, t, p)
	if err != nil {
		return err
	}
	ne0, _, _ := gguf.Dims(t.Shape)
	group := int64(t.Type.Interleave())
	if len(rows) == 0 {
		return quantizeFn(t, p)
	}
	rowSize, err := t.Type.RowSize(ne0)
	if err != nil {
		return err
	}
	k := int64(len(rows)) * group
	n := int(k * ne0)
	src := p.src
	buf := grow(p.buf.f32, n+len(src))
	copy(buf[n:], src) // src may be buf's own start: copy moves
	for i, g := range rows {
		copy(buf[n-(i+1)*len(g):], g)
	}
	p.buf.f32, p.src = buf, buf[n:]
	q := *p
	q.row, q.rows, q.src = p.row-k, p.rows+k, buf
	if err := quantizeFn(t, &q); err != nil {
		return err
	}
	p.dst = q.dst[k*rowSize:]
	if fb := q.fallback; fb != nil {
		// Rows of the lead were reported with the piece before.
		_, all, _ := gguf.Dims(t.Shape)
		first := p.matrix*all + p.row
		kept := &Fallback{Type: fb.Type, Reason: fb.Reason}
		for _, r := range fb.Rows {
			if r >= first {
				kept.Rows = append(kept.Rows, r)
			}
		}
		if len(kept.Rows) > 0 {
			p.fallback = kept
		}
	}
	return nil
}

// leadRows returns the row groups before piece p that set state of t's
// kernel no nearer group sets, nearest first: at most one per bit of state
// (16 for iq1_m), however far back the walk goes, so a matrix of zero rows,
// which set nothing and are walked back to the call's start, costs reads,
// not memory. It returns nil for a type without such state.
func leadRows(in *gguf.Model, t Tensor, p *piece) ([][]float32, error) {
	lead := quantize.NewLead(t.Type)
	if lead == nil {
		return nil, nil
	}
	ne0, _, _ := gguf.Dims(t.Shape)
	per, whole := CallRows(t.Type, t.Shape)
	start := int64(0)
	if !whole {
		start = p.row / per * per
	}
	group := int64(t.Type.Interleave())
	var rows [][]float32
	g := &piece{matrix: p.matrix, rows: group, buf: &buffers{}}
	for r := p.row; r > start; {
		r -= group
		g.row = r
		if err := readPiece(in, t, g); err != nil {
			return nil, err
		}
		if err := decodePiece(in, t, g); err != nil {
			return nil, err
		}
		sets, done := lead.Walk(g.src, int(ne0), pieceImportance(t, p, ne0))
		if sets {
			rows = append(rows, slices.Clone(g.src))
		}
		if done {
			break
		}
	}
	return rows, nil
}

// pieceImportance is the importance data piece p is quantized with.
func pieceImportance(t Tensor, p *piece, ne0 int64) []float32 {
	if p.im == nil && t.Imatrix != nil {
		return t.Imatrix[p.matrix*ne0 : (p.matrix+1)*ne0]
	}
	return p.im
}

// readPiece reads the piece's rows, in a worker (reads of many pieces are
// under way at once), and checks them as the reference's loader does.
func readPiece(in *gguf.Model, t Tensor, p *piece) error {
	off, err := readRaw(in, t, p)
	if err != nil {
		return err
	}
	return checkStored(in.Tensors[t.Source].TensorInfo, off, p.buf.raw)
}

// readConvert reads the piece's rows and converts them, in a worker, and
// returns what failed: the reading (readPiece's errors, the loader's check
// among them) or the conversion (convertPiece's). The loader's check of
// bf16 rows, a tenth of the CPU time of a run of the medium model to q8_KV
// or q8_0, looks for infinities and NaNs only, which the conversions find
// anyway: a piece a one-pass kernel takes (convertOnePass) has no value
// at overflowGate or beyond, so none, and one converted in chunks is
// checked from the first chunk that reaches the gate on, or, where its
// conversion fails first, after the chunks converted (convertChunks). The
// error is then the one the check before the conversion found.
func readConvert(in *gguf.Model, t Tensor, p *piece, quantize func(Tensor, *piece) error, deq *[]float32) (readErr, convErr error) {
	off, err := readRaw(in, t, p)
	if err != nil {
		return err, nil
	}
	info := in.Tensors[t.Source].TensorInfo
	if quantize == nil {
		if convertOnePass(in, t, p) {
			return nil, nil
		}
		if n := chunkRows(t, p); n > 0 && info.Type == formats.BF16 {
			ne0, _, _ := gguf.Dims(t.Shape)
			var stored error
			err := convertChunks(in, t, p, n, deq, func(from int64) error {
				stored = checkStored(info, off+2*ne0*from, p.buf.raw[2*ne0*from:])
				return stored
			})
			if stored != nil {
				return stored, nil
			}
			return nil, err
		}
	}
	if err := checkStored(info, off, p.buf.raw); err != nil {
		return err, nil
	}
	return nil, convertRows(in, t, p, quantize, deq)
}

// hasher is Run's last stage before the syncer. It takes the pieces the
// writer wrote, in the same order, hashes the input rows quantized and the
// bytes written for the sidecar (byte pieces the feeder read were hashed
// there), records each complete tensor, reports progress and gives each
// piece's memory back. Hashing is a third of the CPU time of the types
// that only move bytes; beside the writer it overlaps the writes (which
// the kernel serialises on the file) instead of adding to them. The input
// and the output are hashed by two goroutines, one after the other, so
// that neither hash bounds a run on many cores (an xxhash stream runs at
// about 9 GB/s on one core of our VM, and a quantized run hashes 1.1-2
// bytes per byte of input).
type hasher struct {
	in       *gguf.Model
	outs     []Output
	records  [][]TensorRecord
	count    int // tensors over all outputs, for progress
	progress func(Event)
	sy       *syncer
	mem      *memory
	stats    *pipeStats // if set, the hashers' CPU time is added to it
}

// run hashes and records the pieces of written until it is closed.
func (h *hasher) run(written <-chan *piece) {
	inHashed := make(chan *piece, cap(written))
	go func() {
		defer close(inHashed)
		if h.stats != nil {
			defer h.stats.measure(&h.stats.inHasher)()
		}
		inHash := xxhash.New() // of the tensor being quantized
		for q := range written {
			if q.kind == pieceQuantize {
				inHash.Write(q.buf.raw)
				if q.last {
					q.inSum = inHash.Sum64()
					inHash.Reset()
				}
			}
			inHashed <- q
		}
	}()
	if h.stats != nil {
		defer h.stats.measure(&h.stats.outHasher)()
	}
	var tensorDone int64
	var tensorFallback *Fallback // of the tensor being written
	outHash := xxhash.New()
	for q := range inHashed {
		t := h.outs[q.out].Tensors[q.tensor]
		switch q.kind {
		case pieceRewind:
			outHash.Reset()
			tensorDone = 0
			tensorFallback = nil
		case pieceQuantize:
			outHash.Write(q.dst)
		case pieceBytes:
			// Byte pieces read by the feeder were hashed there.
			if q.from != nil {
				outHash.Write(q.dst)
				if q.last {
					q.outSum = outHash.Sum64()
					q.inSum = q.outSum
				}
			}
		}
		// The syncer makes a finished tensor durable and records it,
		// then reports progress, while the writer goes on.
		item := syncItem{out: q.out}
		tensorFallback = mergeFallback(tensorFallback, q.fallback)
		if q.last {
			rec := &h.records[q.out][q.tensor]
			out := outHash.Sum64()
			if q.kind == pieceBytes {
				out = q.outSum
			}
			rec.Input, rec.Output = hashString(q.inSum), hashString(out)
			rec.Fallback = fallbackRecord(tensorFallback)
			outHash.Reset()
			copied := *rec
			item.rec = &copied
		}
		tensorDone += q.inBytes
		if h.progress != nil && q.kind != pieceRewind {
			ev := Event{Index: q.global, Count: h.count, Name: t.Name, Done: tensorDone,
				Bytes: h.in.Tensors[t.Source].Size, Finished: q.last}
			if q.last {
				ev.Fallback = tensorFallback
			}
			item.ev = &ev
		}
		if item.rec != nil || item.ev != nil {
			h.sy.add(item)
		}
		if q.last {
			tensorDone = 0
			tensorFallback = nil
		}
		if q.buf != nil {
			h.mem.release(q.buf)
		}
		q.buf, q.dst = nil, nil
	}
}

// readRaw reads the piece's rows into p.buf.raw and returns their offset in
// the tensor's data.
func readRaw(in *gguf.Model, t Tensor, p *piece) (int64, error) {
	src := in.Tensors[t.Source]
	ne0, rows, _ := gguf.Dims(t.Shape)
	rowSize, err := src.Type.RowSize(ne0)
	if err != nil {
		return 0, err
	}
	p.buf.raw = grow(p.buf.raw, int(p.rows*rowSize))
	raw := p.buf.raw
	off := (p.matrix*rows + p.row) * rowSize
	if _, err := in.TensorReader(t.Source).ReadAt(raw, off); err != nil {
		path := in.Shards[src.Shard].Path
		return 0, fmt.Errorf("reading rows %d..%d of matrix %d from %s: %w", p.row, p.row+p.rows, p.matrix, path, truncated(err))
	}
	return off, nil
}

// readBytes reads a byte piece of an input tensor copied as it is
// (feeder.copyBytes' lazy pieces) into p.buf.raw, which becomes its output.
func readBytes(in *gguf.Model, t Tensor, p *piece) error {
	if _, err := p.from.ReadAt(p.buf.raw, p.off); err != nil {
		path := in.Shards[in.Tensors[t.Source].Shard].Path
		return fmt.Errorf("reading bytes %d..%d from %s: %w", p.off, p.off+int64(len(p.buf.raw)), path, truncated(err))
	}
	p.dst = p.buf.raw
	return nil
}

// truncated says what an end of file in a tensor's data means: the header
// was read whole when the run started, so the file has shrunk since.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the file is shorter than when the run opened it", gguf.ErrTruncated)
	}
	return err
}

// ErrInvalidData: an input tensor holds an infinity or a NaN, as a value or
// as a block scale of the older quantized types, which the reference's
// loader refuses whether the tensor is converted or copied ("tensor has
// invalid data", formats.CheckStored).
var ErrInvalidData = formats.ErrInvalidData

// invalidError is a *formats.InvalidError restated with the row's matrix,
// as the kernels' errors are; a value's unwraps to a *quantize.RowError
// too, as the kernels' check of what they are given (Row counts the rows
// of the tensor).
type invalidError struct {
	msg string
	err *formats.InvalidError
	row *quantize.RowError
}

func (e *invalidError) Error() string { return e.msg }
func (e *invalidError) Unwrap() []error {
	if e.row == nil {
		return []error{e.err}
	}
	return []error{e.err, e.row}
}

// checkStored checks data, the bytes of tensor src from byte off on, as the
// reference's loader does (formats.CheckStored), naming the row in the
// tensor and in its matrix.
func checkStored(src gguf.TensorInfo, off int64, data []byte) error {
	ne0, rows, _ := gguf.Dims(src.Shape)
	err := formats.CheckStored(src.Type, ne0, off, data)
	var ie *formats.InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	at := fmt.Sprintf("row %d (matrix %d, row %d)", ie.Row, ie.Row/rows, ie.Row%rows)
	if ie.Rows > 1 {
		at = fmt.Sprintf("rows %d..%d (matrix %d, rows %d..%d)", ie.Row, ie.Row+ie.Rows-1, ie.Row/rows, ie.Row%rows, ie.Row%rows+ie.Rows-1)
	}
	if ie.Column >= 0 {
		return &invalidError{msg: fmt.Sprintf("%s column %d: value %v is not finite", at, ie.Column, ie.Value), err: ie,
			row: &quantize.RowError{Row: int(ie.Row), Column: int(ie.Column), Value: ie.Value}}
	}
	return &invalidError{msg: fmt.Sprintf("%s block %d: its scale is %s, which llama-quantize refuses (invalid data)", at, ie.Block, ie.What), err: ie}
}

// decodePiece converts the piece's raw input rows to float32.
func decodePiece(in *gguf.Model, t Tensor, p *piece) error {
	ne0, _, _ := gguf.Dims(t.Shape)
	p.buf.f32 = grow(p.buf.f32, int(p.rows*ne0))
	p.src = p.buf.f32
	var err error
	p.overGate, err = decodeRows(in.Tensors[t.Source].Type, ne0, p.buf.raw, p.src)
	return err
}

// decodeRows converts raw input rows of type typ to float32 in dst and
// reports whether some value reaches overflowGate.
func decodeRows(typ formats.Type, ne0 int64, raw []byte, dst []float32) (bool, error) {
	if typ == formats.BF16 {
		// Most models' input: widened and gated in one pass.
		return formats.BF16RowToFP32Magnitude(dst, raw) >= bf16Gate, nil
	}
	if err := formats.DequantizeRows(typ, int(ne0), raw, dst); err != nil {
		return false, err
	}
	switch typ {
	case formats.F16:
		return reaches16(raw, fp16Gate), nil
	case formats.F32:
		return reaches32raw(raw), nil
	default:
		return reaches32(dst), nil
	}
}

// convertOnePass converts a piece of bf16 rows in one pass, without
// float32 rows, where its type has such a kernel (f16, q8_KV, q8_KV_r8),
// and reports whether it did: it refuses pieces with a magnitude of
// overflowGate or more (or an infinity or a NaN), which go the usual way
// (convertRows), whose checks name the value.
func convertOnePass(in *gguf.Model, t Tensor, p *piece) bool {
	if in.Tensors[t.Source].Type != formats.BF16 {
		return false
	}
	switch t.Type {
	case formats.F16:
		return convertBF16ToF16(t, p)
	case formats.Q8_KV, formats.Q8_KV_R8:
		return convertBF16ToQ8KV(t, p)
	}
	return false
}

// convertBF16ToQ8KV converts a piece of bf16 rows to q8_KV or q8_KV_r8 in
// one pass (quantize.Q8KVFromBF16), and reports whether it did, as
// convertBF16ToF16. Pieces whose importance data checkOutput would read the
// output back for (riskyImportance; q8_KV's kernel ignores the data) go the
// usual way too. In a run of the medium model to q8_KV the widening was a
// tenth of the CPU time.
func convertBF16ToQ8KV(t Tensor, p *piece) bool {
	if p.call != nil || p.callRows > 0 {
		return false
	}
	_, im, err := startOutput(t, p)
	if err != nil || im != nil && riskyImportance(im) {
		return false // the usual way reports the error
	}
	ne0, _, _ := gguf.Dims(t.Shape)
	return quantize.Q8KVFromBF16(t.Type, p.dst, p.buf.raw, int(ne0), bf16Gate)
}

// convertBF16ToF16 converts a piece of bf16 rows to f16 in one pass,
// without float32 rows (formats.BF16RowToFP16Magnitude), and reports
// whether it did: a piece with a value that reaches overflowGate, or is not
// finite, goes the way of every other piece instead, whose checks name the
// value. In a run of the medium model to F16 the widening and the
// conversion were a fifth of the CPU time, in chunks.
func convertBF16ToF16(t Tensor, p *piece) bool {
	if _, _, err := startOutput(t, p); err != nil {
		return false // the usual way reports it
	}
	return formats.BF16RowToFP16Magnitude(p.dst, p.buf.raw) < bf16Gate
}

// chunkBytes bounds the float32 rows a worker holds at a time where it
// converts a piece in chunks (convertChunks): they stay in the core's L2
// cache between the widening and the kernel. Converting 512 rows of 4096
// bf16 weights whole went through 8 MB of float32 in the shared cache; in
// chunks of 16 rows (256 KiB), BenchmarkConvertPiece on an Intel Xeon
// (Sapphire Rapids class, 2 MiB of L2 per core), one thread, medians of 5:
// f16 7960 against 4031 MB/s of input, q8_KV 7374 against 4306, q8_0 3223
// against 2480; kernels that dominate their time (q4_K) do not change.
const chunkBytes = 256 << 10

// chunkRows is how many rows of piece p convertChunks converts at a time,
// or 0 where the piece is converted whole: it fits in chunkBytes, or its
// kernel sees more than its rows (a call-scoped type, a type with a lead),
// or the float32 rows are the output (f32).
func chunkRows(t Tensor, p *piece) int64 {
	if t.Type == formats.F32 || p.call != nil || p.callRows > 0 ||
		quantize.CallScoped(t.Type, t.hasImatrix()) || quantize.NewLead(t.Type) != nil {
		return 0
	}
	ne0, _, _ := gguf.Dims(t.Shape)
	group := int64(t.Type.Interleave())
	n := max(chunkBytes/(4*ne0)/group*group, group)
	if n >= p.rows {
		return 0
	}
	return n
}

// convertChunks is convertPiece for a piece converted n rows at a time
// (chunkRows): each chunk is widened, quantized and checked before the
// next, in a float32 buffer of n rows.
//
// check, if set, is the loader's check of the piece's bf16 rows from row
// from on, which the caller has not run (readConvert): it runs from the
// first chunk whose widening reaches overflowGate (every infinity and NaN
// does) on, or, if the conversion fails first, from the rows after those
// converted, and its error replaces the conversion's.
func convertChunks(in *gguf.Model, t Tensor, p *piece, n int64, deq *[]float32, check func(from int64) error) (err error) {
	finite := int64(0) // rows before it are finite: no check needed
	defer func() {
		if err != nil && check != nil {
			if cerr := check(finite); cerr != nil {
				err = cerr
			}
		}
	}()
	typ := in.Tensors[t.Source].Type
	ne0, _, _ := gguf.Dims(t.Shape)
	srcRow, err := typ.RowSize(ne0)
	if err != nil {
		return err
	}
	rowSize, im, err := startOutput(t, p)
	if err != nil {
		return err
	}
	p.buf.f32 = grow(p.buf.f32, int(n*ne0))
	for at := int64(0); at < p.rows; at += n {
		k := min(n, p.rows-at)
		c := *p
		c.row, c.rows, c.src = p.row+at, k, p.buf.f32[:k*ne0]
		c.dst = p.dst[at*rowSize : (at+k)*rowSize]
		if c.overGate, err = decodeRows(typ, ne0, p.buf.raw[at*srcRow:(at+k)*srcRow], c.src); err != nil {
			return err
		}
		if check != nil {
			if c.overGate {
				if err := check(at); err != nil {
					check = nil
					return err
				}
				check = nil // the rest of the piece is checked
			} else {
				finite = at + k
			}
		}
		if err := quantizeCall(t, &c, 0, k, rowSize, im); err != nil {
			return err
		}
		if err := checkOutput(t, &c, deq); err != nil {
			return err
		}
		p.fallback = c.fallback // the kernel's and checkOutput's rows
	}
	return nil
}

// The gate's bit patterns without the sign: magnitudes compare like them.
const (
	bf16Gate = 0x4580     // 4096 in bfloat16
	fp16Gate = 0x6c00     // 4096 in IEEE half
	f32Gate  = 0x45800000 // 4096 in float32
)

// reaches16 reports whether any 16-bit float in raw (little-endian) has a
// magnitude of at least gate (a bit pattern without sign). Four values at a
// time: adding 0x8000-gate to a magnitude below 0x8000 sets its top bit
// exactly when it reaches gate, and never carries into the next value.
// A NaN or an infinity counts as reaching it.
func reaches16(raw []byte, gate uint64) bool {
	const mags = 0x7fff7fff7fff7fff
	add := (0x8000 - gate) * 0x0001000100010001
	var a0, a1, a2, a3 uint64
	le := binary.LittleEndian
	for len(raw) >= 32 {
		a0 |= le.Uint64(raw[0:8])&mags + add
		a1 |= le.Uint64(raw[8:16])&mags + add
		a2 |= le.Uint64(raw[16:24])&mags + add
		a3 |= le.Uint64(raw[24:32])&mags + add
		raw = raw[32:]
	}
	acc := a0 | a1 | a2 | a3
	for ; len(raw) >= 2; raw = raw[2:] {
		acc |= uint64(le.Uint16(raw))&0x7fff + (0x8000 - gate)
	}
	return acc&0x8000800080008000 != 0
}

// reaches32raw is reaches32 on little-endian float32 bytes, two at a time.
func reaches32raw(raw []byte) bool {
	const mags = 0x7fffffff7fffffff
	const add = (0x80000000 - f32Gate) * 0x0000000100000001
	var a0, a1, a2, a3 uint64
	le := binary.LittleEndian
	for len(raw) >= 32 {
		a0 |= le.Uint64(raw[0:8])&mags + add
		a1 |= le.Uint64(raw[8:16])&mags + add
		a2 |= le.Uint64(raw[16:24])&mags + add
		a3 |= le.Uint64(raw[24:32])&mags + add
		raw = raw[32:]
	}
	acc := a0 | a1 | a2 | a3
	for ; len(raw) >= 4; raw = raw[4:] {
		acc |= uint64(le.Uint32(raw))&0x7fffffff + (0x80000000 - f32Gate)
	}
	return acc&0x8000000080000000 != 0
}

// reaches32 reports whether any |x| reaches f32Gate (or is not finite),
// the same way on 32-bit patterns.
func reaches32(x []float32) bool {
	const add = 0x80000000 - f32Gate
	var a0, a1, a2, a3 uint32
	for len(x) >= 4 {
		a0 |= math.Float32bits(x[0])&0x7fffffff + add
		a1 |= math.Float32bits(x[1])&0x7fffffff + add
		a2 |= math.Float32bits(x[2])&0x7fffffff + add
		a3 |= math.Float32bits(x[3])&0x7fffffff + add
		x = x[4:]
	}
	acc := a0 | a1 | a2 | a3
	for _, v := range x {
		acc |= math.Float32bits(v)&0x7fffffff + add
	}
	return acc&0x80000000 != 0
}

// overflowGate is the magnitude below which no output type can overflow:
// every type stores its scales (and q4_1/q5_1 their minimums) as fp16 or
// wider, derived from the block's values by dividing by a grid maximum of
// at least 1, so with every |x| below 65504 no stored number passes fp16's
// largest finite value, and f16 itself overflows only from 65520 on. The
// smallest magnitude that overflows, over every type and power of two, is
// 2^16 (q5_1's fp16 minimum, and f16); the gate keeps a factor 16 below it
// and TestOverflowGate checks every type at 4 x the gate. Pieces reaching
// it are read back by checkOutput; finding them costs nothing for bf16
// input (the widening finds the largest magnitude) and a few integer
// operations per four inputs for others (reaches16, reaches32).
const overflowGate = 1 << 12

// checkOutput reads back the output of a piece whose input reaches
// overflowGate, or whose importance data can make an encoding non-finite
// (riskyImportance), and fails, as for a NaN in the input, if it holds an
// infinity or a NaN: a finite value too large for the output type (3.39e38
// in f16, or a block scale of q8_0 or q4_K past fp16's range) would be
// written as an infinity. The error names the row and the column of the
// largest value of that row (for f16 and bf16, the value itself).
//
// Rows that the importance data made non-finite (a block of zero
// importance gives q2_K, q4_K, q5_K and iq4_nl NaN scales; llama-quantize
// then stops the whole run: "quantized data validation failed") are
// quantized again with uniform importance, each row group on its own, and
// reported as a Fallback; only if that is not finite either does the
// piece fail.
//
// It reads back one row group at a time into the worker's deq, so the
// check costs no memory that grows with the piece or the workers.
func checkOutput(t Tensor, p *piece, deq *[]float32) error {
	if t.Type == formats.F32 {
		return nil
	}
	ne0, rows, _ := gguf.Dims(t.Shape)
	im := pieceImportance(t, p, ne0)
	risky := im != nil && riskyImportance(im)
	if !p.overGate && !risky {
		return nil
	}
	rowSize, err := t.Type.RowSize(ne0)
	if err != nil {
		return err
	}
	group := int64(t.Type.Interleave())
	groupBytes := group * rowSize
	*deq = grow(*deq, int(group*ne0))
	back := *deq
	if risky {
		redone, finite, err := t.Kernel.UniformWhereNotFinite(p.dst, t.Type, int(p.rows), int(ne0), p.src, back)
		if err != nil {
			return err
		}
		for _, r := range redone {
			p.fallback = addFallbackRows(p.fallback, t.Type, importanceFallback, p.matrix*rows+p.row+int64(r), group)
		}
		if finite && !p.overGate {
			return nil
		}
	}
	for at := int64(0); at < p.rows; at += group {
		if err := formats.DequantizeRows(t.Type, int(ne0), p.dst[at*rowSize:at*rowSize+groupBytes], back); err != nil {
			return err
		}
		i := formats.FirstNonFinite(back)
		if i < 0 {
			continue
		}
		r := at + int64(i)/ne0
		col := int64(i) % ne0
		if t.Type != formats.F16 && t.Type.Base() != formats.BF16 {
			row := p.src[r*ne0 : (r+1)*ne0]
			col = 0
			for j, v := range row {
				if math.Abs(float64(v)) > math.Abs(float64(row[col])) {
					col = int64(j)
				}
			}
		}
		return fmt.Errorf("row %d (matrix %d, row %d) column %d: value %v is too large for %s (written, it would be %v)",
			p.matrix*rows+p.row+r, p.matrix, p.row+r, col, p.src[r*ne0+col], t.Type, back[i])
	}
	return nil
}

// importanceFallback is the Fallback reason of rows checkOutput quantized
// again with uniform importance.
const importanceFallback = "with its importance data the encoding is not finite (a block of zero or tiny importance, or a huge value): " +
	"written with uniform importance"

// addFallbackRows adds rows first..first+n-1 of a tensor, written with a
// substitute encoding for reason, to f (nil: none yet).
func addFallbackRows(f *Fallback, typ formats.Type, reason string, first, n int64) *Fallback {
	if f == nil {
		f = &Fallback{Type: typ, Reason: reason}
	} else if !strings.Contains(f.Reason, reason) {
		f.Reason += "; " + reason
	}
	for r := first; r < first+n; r++ {
		f.Rows = append(f.Rows, r)
	}
	return f
}

// riskyImportance reports whether importance data im can make a kernel's
// encoding non-finite, so that checkOutput reads the output back: an
// aligned group of 16 weights all below 1e-30 (zero, or so small that the
// weighted sums of a block underflow to 0/0; 1e-43 gives q4_K NaN scales),
// or a weight of 1e30 or more (sums that overflow). Real importance
// matrices rarely have either, so their runs rarely pay for the check.
func riskyImportance(im []float32) bool {
	const tiny, huge = 1e-30, 1e30
	for i := 0; i < len(im); i += 16 {
		g := im[i:min(i+16, len(im))]
		small := true
		for _, w := range g {
			if w >= tiny {
				small = false
			}
			if w >= huge {
				return true
			}
		}
		if small {
			return true
		}
	}
	return false
}

// littleEndian says float32 values in memory are laid out as GGUF stores
// them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// startOutput readies piece p's output: p.dst sized for its rows of t's
// type, no fallback rows yet. It returns the output row size and the
// importance data the kernel gets.
func startOutput(t Tensor, p *piece) (rowSize int64, im []float32, err error) {
	ne0, _, _ := gguf.Dims(t.Shape)
	if rowSize, err = t.Type.RowSize(ne0); err != nil {
		return 0, nil, err
	}
	p.buf.out = grow(p.buf.out, int(p.rows*rowSize))
	p.dst, p.fallback = p.buf.out, nil
	return rowSize, pieceImportance(t, p, ne0), nil
}

// quantizePiece converts the piece's float32 rows into the output type.
func quantizePiece(t Tensor, p *piece) error {
	if t.Type == formats.F32 {
		if littleEndian {
			// The float32 rows in memory are the output's bytes.
			p.dst = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(p.src))), 4*len(p.src))
			return nil
		}
		p.buf.out = grow(p.buf.out, 4*len(p.src))
		p.dst = p.buf.out
		for i, v := range p.src {
			binary.LittleEndian.PutUint32(p.dst[4*i:], math.Float32bits(v))
		}
		return nil
	}
	rowSize, im, err := startOutput(t, p)
	if err != nil {
		return err
	}
	per := p.rows
	if p.callRows > 0 {
		per = p.callRows
	}
	for at := int64(0); at < p.rows; at += per {
		if err := quantizeCall(t, p, at, min(per, p.rows-at), rowSize, im); err != nil {
			return err
		}
	}
	return nil
}

// quantizeCall quantizes rows [at, at+n) of piece p as one reference
// call, or as part of the call p.call has scanned.
func quantizeCall(t Tensor, p *piece, at, n, rowSize int64, im []float32) error {
	ne0, rows, _ := gguf.Dims(t.Shape)
	dst, src := p.dst[at*rowSize:(at+n)*rowSize], p.src[at*ne0:(at+n)*ne0]
	var rep quantize.Report
	var err error
	if c := p.call; c != nil {
		state := c.state
		if !c.scanned() {
			state = quantize.NewCallState(t.Type, false)
			p.speculative = true
		}
		rep, err = t.Kernel.QuantizeRowsInCall(dst, t.Type, int(n), int(ne0), src, im, state)
	} else {
		rep, err = t.Kernel.QuantizeRowsReport(dst, t.Type, int(n), int(ne0), src, im)
	}
	first := p.matrix*rows + p.row + at // the call's first row in the tensor
	if fb := rep.Fallback; fb != nil {
		if p.fallback == nil {
			p.fallback = &Fallback{Type: fb.Type, Reason: fb.Reason}
		}
		for _, r := range fb.Rows {
			p.fallback.Rows = append(p.fallback.Rows, first+int64(r))
		}
	}
	if err != nil {
		var re *quantize.RowError
		if errors.As(err, &re) {
			return &locatedError{err: err, msg: fmt.Sprintf("row %d (matrix %d, row %d) column %d: value %v is not finite",
				first+int64(re.Row), p.matrix, p.row+at+int64(re.Row), re.Column, re.Value)}
		}
		var oe *quantize.OverflowError
		if errors.As(err, &oe) {
			return &locatedError{err: err, msg: fmt.Sprintf("row %d (matrix %d, row %d) column %d: value %v is too large for %s (its float32 search overflows)",
				first+int64(oe.Row), p.matrix, p.row+at+int64(oe.Row), oe.Column, oe.Value, oe.Type)}
		}
		return err
	}
	return nil
}

// locatedError is a kernel's error about one value (*quantize.RowError,
// *quantize.OverflowError), which counts rows within the kernel call,
// restated with the row counted in the tensor (and in its matrix). It
// unwraps to the kernel's error, so errors.As finds it.
type locatedError struct {
	msg string
	err error
}

func (e *locatedError) Error() string { return e.msg }
func (e *locatedError) Unwrap() error { return e.err }
