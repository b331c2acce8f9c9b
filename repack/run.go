package repack

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/splitter"
)

// chunkBytes is about how much of a tensor one shuffle step reads. Chunks
// are whole row groups; a few are in flight at a time (see converter): at
// most memoryBudget / (2 x chunkBytes) sets of input and output buffers,
// so memory stays near memoryBudget whatever the tensor size and however
// many threads (a shuffle is bound by memory bandwidth long before 16
// threads are busy).
const (
	chunkBytes   = 4 << 20
	memoryBudget = 128 << 20
)

// Outputs returns the files Run writes for the output name out: out itself,
// or, for a shard set kept as one (Options.Merge unset), the shards
// PREFIX-0000K-of-0000N.gguf, PREFIX being out without its ".gguf" ending
// (or out's own prefix, if out already names a shard of an N-file set).
func (p *Plan) Outputs(out string) []string {
	if p.Options.Split != nil {
		sp, err := p.splitPlan(nil)
		if err != nil {
			return []string{out}
		}
		return sp.Paths(out)
	}
	n := p.shards
	if n <= 1 || p.Options.Merge {
		return []string{out}
	}
	prefix := strings.TrimSuffix(out, ".gguf")
	if pre, _, count, ok := gguf.ParseShardPath(out); ok && count == n {
		prefix = pre
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = gguf.ShardPath(prefix, i, n)
	}
	return paths
}

// CheckOutputs fails with gguf.ErrSameFile when a file Run would write for out
// is one of m's files (by os.SameFile, so links and other spellings of a
// path are caught).
func (p *Plan) CheckOutputs(m *gguf.Model, out string) error {
	for _, path := range p.Outputs(out) {
		for _, s := range m.Shards {
			same, err := gguf.SameFile(path, s.Path)
			if err != nil {
				return err
			}
			if same {
				return fmt.Errorf("repack: %w: %s is the input %s", gguf.ErrSameFile, path, s.Path)
			}
		}
	}
	return nil
}

// outputFile is one file Run writes.
type outputFile struct {
	path    string
	md      gguf.Metadata
	tensors []int // indexes into Plan.Tensors
}

// splitPlan plans the output shards for Options.Split. Which tensor goes
// where depends only on the tensors, so md may be nil when only the paths
// are wanted.
func (p *Plan) splitPlan(md gguf.Metadata) (splitter.Plan, error) {
	all := make([]int, len(p.Tensors))
	for i := range all {
		all[i] = i
	}
	return splitter.PlanShards(md, p.infos(all), *p.Options.Split)
}

// infos returns the output headers of the tensors at indexes (into
// Tensors): their names, shapes and target types.
func (p *Plan) infos(indexes []int) []gguf.TensorInfo {
	infos := make([]gguf.TensorInfo, len(indexes))
	for j, i := range indexes {
		t := p.Tensors[i]
		infos[j] = gguf.TensorInfo{Name: t.Name, Shape: t.Shape, Type: t.To}
	}
	return infos
}

// layout lays out the output files: their metadata and tensors.
func (p *Plan) layout(m *gguf.Model, out string) ([]outputFile, error) {
	paths := p.Outputs(out)
	md := m.Metadata.Clone()
	// The reference's quantizer copies the keys, sets the quantization
	// version, drops the split keys and sets the file type, in this order
	// (a key that is not there yet goes at the end).
	md.Set(keyQuantizationVersion, gguf.Uint32Value(quantizationVersion))
	md.Delete(gguf.KeySplitNo)
	md.Delete(gguf.KeySplitCount)
	md.Delete(gguf.KeySplitTensorsCount)
	for _, kv := range p.Options.Metadata {
		md.Set(kv.Key, kv.Value)
	}
	if p.FileType.Write {
		md.Set(keyFileType, gguf.Uint32Value(uint32(p.FileType.To)))
	}
	if p.Options.Split != nil {
		sp, err := p.splitPlan(md)
		if err != nil {
			return nil, fmt.Errorf("repack: %w", err)
		}
		files := make([]outputFile, len(sp.Shards))
		for i, sh := range sp.Shards {
			files[i] = outputFile{path: paths[i], md: sh.Metadata, tensors: sh.Source}
		}
		return files, nil
	}
	files := make([]outputFile, len(paths))
	for i := range files {
		files[i].path = paths[i]
		if i == 0 {
			files[i].md = md
		}
		if len(files) > 1 {
			// As llama-quantize --keep-split: the first shard carries the
			// model's keys, the others only the split keys.
			files[i].md.Set(gguf.KeySplitNo, gguf.Uint16Value(uint16(i)))
			files[i].md.Set(gguf.KeySplitCount, gguf.Uint16Value(uint16(len(files))))
			files[i].md.Set(gguf.KeySplitTensorsCount, gguf.Int32Value(int32(len(p.Tensors))))
		}
	}
	for i, t := range p.Tensors {
		f := 0
		if len(files) > 1 {
			f = t.Shard
		}
		files[f].tensors = append(files[f].tensors, i)
	}
	return files, nil
}

// Run writes the repacked (or un-repacked) model to out as p says and
// returns the paths written (see Plan.Outputs). Untouched tensors are copied
// by the kernel (copy_file_range); converted ones stream through in chunks
// of whole row groups, read and written in file order and shuffled by
// Options.Threads goroutines, so memory stays bounded whatever the tensor
// sizes. The files appear under their names only when all are complete,
// put in place together by gguf.Commit (each one's Options.Beside files
// removed before it). Before that, a failure leaves nothing behind; should a
// rename fail, the error is a *gguf.CommitError saying which files are new
// and in place and where the complete ones not put in place are kept, and
// nothing complete is removed.
func Run(m *gguf.Model, p *Plan, out string) ([]string, error) {
	if len(p.Tensors) != len(m.Tensors) || len(m.Shards) != p.shards {
		return nil, fmt.Errorf("%w: %d tensors in %d files, the plan has %d in %d", ErrPlan, len(m.Tensors), len(m.Shards), len(p.Tensors), p.shards)
	}
	for i, t := range p.Tensors {
		mt := m.Tensors[i]
		if t.Name != mt.Name || t.From != mt.Type || t.InBytes != mt.Size {
			return nil, fmt.Errorf("%w: tensor %d is %s (%s), the plan has %s (%s)", ErrPlan, i, mt.Name, mt.Type, t.Name, t.From)
		}
	}
	if err := p.CheckOutputs(m, out); err != nil {
		return nil, err
	}
	files, err := p.layout(m, out)
	if err != nil {
		return nil, err
	}
	var inputs []string
	for _, s := range m.Shards {
		inputs = append(inputs, s.Path)
	}

	writers := make([]*gguf.Writer, len(files))
	defer func() {
		for _, w := range writers {
			if w != nil {
				w.Abort()
			}
		}
	}()
	for i, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return nil, fmt.Errorf("repack: %w", err)
		}
		infos := p.infos(f.tensors)
		w, err := gguf.Create(f.path, f.md, infos, &gguf.CreateOptions{Inputs: inputs, Context: p.Options.Context, NoReplace: !p.Options.Overwrite})
		if err != nil {
			return nil, fmt.Errorf("repack: %w", err)
		}
		writers[i] = w
	}

	threads := p.Options.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	c := newConverter(threads)
	// The tensors in the order they are written, so that the next one's
	// stream can start while the current one is written.
	type step struct{ file, tensor int }
	var order []step
	for i, f := range files {
		for _, ti := range f.tensors {
			order = append(order, step{i, ti})
		}
	}
	var ahead *stream // started stream of order[at+1], if converted
	defer func() {
		if ahead != nil {
			ahead.abort()
		}
	}()
	for at, st := range order {
		w := writers[st.file]
		t := p.Tensors[st.tensor]
		if t.Converted() {
			s := ahead
			if s == nil {
				s = c.start(m.TensorReader(t.Index), t, nil)
			}
			ahead = nil
			if at+1 < len(order) {
				if nt := p.Tensors[order[at+1].tensor]; nt.Converted() {
					ahead = c.start(m.TensorReader(nt.Index), nt, s.readDone)
				}
			}
			if err := c.finish(s, w); err != nil {
				return nil, fmt.Errorf("repack: tensor %q (%s -> %s): %w", t.Name, t.From, t.To, err)
			}
		} else {
			if err := checkCopied(m, t); err != nil {
				return nil, fmt.Errorf("repack: tensor %q: %w", t.Name, err)
			}
			src, off := m.TensorFile(t.Index)
			if err := w.WriteTensorFrom(src, off); err != nil {
				return nil, fmt.Errorf("repack: tensor %q: %w", t.Name, err)
			}
		}
		if log := p.Options.Log; log != nil {
			fmt.Fprintf(log, "[%4d/%4d] %-40s %-9s -> %-9s %10.3f MiB\n", at+1, len(p.Tensors), t.Name, t.From, t.To, float64(t.OutBytes)/(1<<20))
		}
	}
	// Every file is complete: staged, then renamed by one commit, so that a
	// rename failing part way removes none of them (one already in place
	// may have replaced the user's file; the others are kept for the user
	// to move) and its error names them all, and so that each old sidecar
	// is gone before its file is replaced (it must never describe the new
	// one, even if the process dies in between).
	staged := make([]gguf.Staged, 0, len(writers))
	for _, w := range writers {
		s, err := w.Stage()
		if err != nil {
			for _, done := range staged {
				os.Remove(done.Temp)
			}
			return nil, fmt.Errorf("repack: %w", err)
		}
		s.Replace = p.Options.Overwrite
		s.Beside = p.Options.beside(s.Final)
		staged = append(staged, s)
	}
	if err := gguf.Commit(staged); err != nil {
		return nil, fmt.Errorf("repack: %w", err)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	return paths, nil
}

// checkCopied reads a tensor that is copied as it is (the writer copies it
// between the files) and checks it as llama-quantize's loader does
// (formats.CheckStored).
func checkCopied(m *gguf.Model, t TensorPlan) error {
	unit := formats.CheckUnit(t.From)
	if unit == 0 {
		return nil
	}
	ne0 := int64(1)
	if len(t.Shape) > 0 {
		ne0 = t.Shape[0]
	}
	r := m.TensorReader(t.Index)
	buf := make([]byte, max(int64(unit), chunkBytes/int64(unit)*int64(unit)))
	for off := int64(0); off < t.InBytes; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), t.InBytes-off)]
		if _, err := r.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && off+int64(len(b)) == t.InBytes) {
			return err
		}
		if err := formats.CheckStored(t.From, ne0, off, b); err != nil {
			return err
		}
	}
	return nil
}

// buffers is one chunk's input and output space.
type buffers struct{ in, out []byte }

// converter shuffles tensors chunk by chunk: one goroutine reads chunks in
// order, Threads goroutines convert them, and the caller writes them in
// order. A fixed set of buffers circulates, which bounds memory and keeps
// the reader at most a few chunks ahead of the writer, across tensors too
// (see start).
type converter struct {
	threads int
	free    chan *buffers
}

func newConverter(threads int) *converter {
	sets := min(threads+2, max(3, memoryBudget/(2*chunkBytes)))
	// No more chunks than buffer sets are ever in flight, so shufflers
	// beyond that only wait: --threads 100000 started 100000 goroutines per
	// tensor (seconds and hundreds of MB for nothing; a few million ran
	// out of memory).
	threads = max(1, min(threads, sets))
	c := &converter{threads: threads, free: make(chan *buffers, sets)}
	for range sets {
		c.free <- &buffers{}
	}
	return c
}

type chunk struct {
	seq    int
	buf    *buffers
	in     []byte
	out    []byte
	err    error
	offset int64
}

// stream is one tensor going through the converter: its reader and
// shufflers run from start on, its writing happens in finish.
type stream struct {
	err      error // from setting up; finish returns it
	nChunks  int
	quit     chan struct{}
	done     chan chunk
	readDone chan struct{} // closed when the reader has taken its last buffer (or quit)
	wg       sync.WaitGroup
}

// start sets the reading and shuffling of tensor t going. When after is
// not nil the reader waits for it to close before taking any buffer: a
// stream started while the previous one still reads would take buffers
// that one needs before the writer can hand any back, and both would stall.
// So Run starts the next tensor's stream with the current one's readDone,
// and its first chunks are ready when the writer gets to it instead of the
// writer waiting at every tensor for the first read and shuffle.
func (c *converter) start(r io.ReaderAt, t TensorPlan, after <-chan struct{}) *stream {
	s := &stream{quit: make(chan struct{}), readDone: make(chan struct{})}
	ne0 := int64(1)
	if len(t.Shape) > 0 {
		ne0 = t.Shape[0]
	}
	inRow, err := t.From.RowSize(ne0)
	if err != nil {
		s.err = err
		close(s.readDone)
		return s
	}
	outRow, err := t.To.RowSize(ne0)
	if err != nil {
		s.err = err
		close(s.readDone)
		return s
	}
	interleaved, undo := t.To, false
	if !t.To.IsInterleaved() {
		interleaved, undo = t.From, true
	}
	k := int64(interleaved.Interleave())
	groupIn, groupOut := k*inRow, k*outRow
	rows := t.InBytes / inRow
	if rows*inRow != t.InBytes || rows%k != 0 || rows/k*groupOut != t.OutBytes {
		s.err = fmt.Errorf("%d bytes are not whole %d-row groups of %d-byte rows", t.InBytes, k, inRow)
		close(s.readDone)
		return s
	}
	shuffle := newGroupConverter(interleaved, int(ne0), undo, int(groupIn), int(groupOut)).convert
	groups := rows / k
	perChunk := max(1, chunkBytes/max(groupIn, groupOut))
	s.nChunks = int((groups + perChunk - 1) / perChunk)
	chunkIn, chunkOut := perChunk*groupIn, perChunk*groupOut

	jobs := make(chan chunk, c.threads+2)
	s.done = make(chan chunk, c.threads+2)
	s.wg.Add(1)
	go func() { // reader: chunks in file order
		defer s.wg.Done()
		defer close(jobs)
		defer close(s.readDone)
		if after != nil {
			select {
			case <-after:
			case <-s.quit:
				return
			}
		}
		for seq := range s.nChunks {
			var b *buffers
			select {
			case b = <-c.free:
			case <-s.quit:
				return
			}
			if int64(cap(b.in)) < chunkIn {
				b.in = make([]byte, chunkIn)
			}
			if int64(cap(b.out)) < chunkOut {
				b.out = make([]byte, chunkOut)
			}
			off := int64(seq) * chunkIn
			n := min(chunkIn, t.InBytes-off)
			ch := chunk{seq: seq, buf: b, in: b.in[:n], out: b.out[:n/groupIn*groupOut], offset: off}
			got, err := r.ReadAt(ch.in, off)
			if got == len(ch.in) {
				err = nil // io.EOF at the very end is fine
			} else if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("read %d of %d bytes at %d: %w", got, n, off, io.ErrUnexpectedEOF)
			}
			ch.err = err
			select {
			case jobs <- ch:
			case <-s.quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for range c.threads { // shufflers
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for ch := range jobs {
				if ch.err == nil {
					ch.err = formats.CheckStored(t.From, ne0, ch.offset, ch.in)
				}
				if ch.err == nil {
					ch.err = shuffle(ch.out, ch.in)
				}
				select {
				case s.done <- ch:
				case <-s.quit:
					return
				}
			}
		}()
	}
	return s
}

// finish writes the stream's chunks to w in order and returns its buffers
// to the converter. After an error the stream is stopped and the buffers it
// held are lost: the converter must not be used again.
func (c *converter) finish(s *stream, w *gguf.Writer) error {
	err := s.err
	pending := map[int]chunk{}
	for next := 0; next < s.nChunks && err == nil; {
		ch, ok := pending[next]
		if !ok {
			ch = <-s.done
			pending[ch.seq] = ch
			continue
		}
		delete(pending, next)
		next++
		if ch.err != nil {
			err = fmt.Errorf("chunk at byte %d: %w", ch.offset, ch.err)
		} else if _, werr := w.Write(ch.out); werr != nil {
			err = werr
		}
		c.free <- ch.buf
	}
	s.abort()
	return err
}

// abort stops the stream's goroutines and waits for them (after finish
// has drained it, it only waits).
func (s *stream) abort() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	s.wg.Wait()
}

// FileSizes returns the exact size of every file Run would write for out,
// in the order of Outputs, computed from the headers alone.
func (p *Plan) FileSizes(m *gguf.Model, out string) ([]int64, error) {
	files, err := p.layout(m, out)
	if err != nil {
		return nil, err
	}
	sizes := make([]int64, len(files))
	for i, f := range files {
		infos := p.infos(f.tensors)
		if sizes[i], err = gguf.FileSize(f.md, infos); err != nil {
			return nil, fmt.Errorf("repack: %s: %w", f.path, err)
		}
	}
	return sizes, nil
}
