// Package splitter cuts a GGUF model into shards and joins shards back into
// one file, the way llama-gguf-split does, byte for byte.
//
// PlanShards is the pure part: which tensors go in which shard and what each
// shard's header holds, with exact file sizes, for dry runs and for the
// quantize pipeline, which writes shards directly. Split and Merge stream
// the tensor data from file to file with copy_file_range (no tensor is ever
// held in memory) and make their outputs appear all at once: everything is
// written under temporary names and renamed at the end, and a failure
// removes whatever was written. Once every file is complete none is
// removed: a rename that fails part way leaves the files already renamed in
// place and the others under their temporary names, and says which
// (*gguf.CommitError).
//
// Merge differs from the reference on purpose: it drops the split keys, so
// merging the shards of a file gives back that file exactly (the reference
// keeps split.no and split.tensors.count and sets split.count to 0).
package splitter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gquant/gquant/gguf"
)

// Sentinel errors, for errors.Is.
var (
	// ErrLimits is returned for limits or shard assignments that cannot
	// make a valid shard set.
	ErrLimits = errors.New("splitter: bad split limits")
	// ErrNotSplit is returned by Merge for a file that is not a shard.
	ErrNotSplit = errors.New("splitter: not a shard set")
	// ErrExists is returned when an output file exists and Options.Overwrite
	// is not set.
	ErrExists = errors.New("splitter: output file exists")
)

// Options adjusts Split and Merge. The zero value (or nil) is fine.
type Options struct {
	// Overwrite allows replacing existing output files. Inputs are never
	// overwritten (gguf.ErrSameFile), whatever this says.
	Overwrite bool
	// Log receives one line per file written; nil is silent.
	Log io.Writer
	// Context, when set, stops the write when it is done (an interrupt):
	// nothing is then left under a final name.
	Context context.Context
	// Beside, when set, names the files that describe an output file (its
	// sidecar, pipeline.SidecarPath): they are removed before the file is
	// replaced, so that none describes a file that is not there.
	Beside func(output string) []string
	// Prepare, when set, is called once every output is complete under its
	// temporary name (staged, in the order of final) and before any is
	// renamed; placed(i) then runs as soon as final[i] is in place, before
	// the next rename (gquant writes its sidecar there, so a kill between
	// two renames leaves no new file without one). An error from Prepare
	// stops the run with nothing renamed; one from placed is returned
	// after the renames.
	Prepare func(staged, final []string) (placed func(i int) error, err error)
}

func (o *Options) overwrite() bool { return o != nil && o.Overwrite }

func (o *Options) beside(path string) []string {
	if o == nil || o.Beside == nil {
		return nil
	}
	return o.Beside(path)
}

func (o *Options) context() context.Context {
	if o == nil || o.Context == nil {
		return context.Background()
	}
	return o.Context
}

func (o *Options) logf(format string, args ...any) {
	if o != nil && o.Log != nil {
		fmt.Fprintf(o.Log, format, args...)
	}
}

// Split writes the shards of model in to PREFIX-0000K-of-0000N.gguf (a
// ".gguf" ending of prefix is dropped) as PlanShards lays them out, and
// returns the plan. in may itself be a shard set: it is re-split as if it
// were merged first.
func Split(in *gguf.Model, prefix string, limits Limits, opts *Options) (Plan, error) {
	infos := make([]gguf.TensorInfo, len(in.Tensors))
	for i, t := range in.Tensors {
		infos[i] = t.TensorInfo
	}
	plan, err := PlanShards(in.Metadata, infos, limits)
	if err != nil {
		return Plan{}, err
	}
	paths := plan.Paths(prefix)
	out, err := newOutputs(paths, modelPaths(in), opts)
	if err != nil {
		return Plan{}, err
	}
	defer out.discard()
	var buf []byte // shared by all shards
	for s, sh := range plan.Shards {
		opts.logf("writing %s: %d tensors, %d bytes\n", paths[s], len(sh.Tensors), sh.FileSize)
		err := writeFile(opts.context(), out.staged[s], sh.Metadata, sh.Tensors, func(j int) (*os.File, int64) {
			return in.TensorFile(sh.Source[j])
		}, &buf)
		if err != nil {
			return Plan{}, fmt.Errorf("splitter: shard %d of %d (%s): %w", s+1, len(paths), paths[s], err)
		}
	}
	if err := out.commit(); err != nil {
		return Plan{}, err
	}
	return plan, nil
}

// Merge joins the shard set that firstShard belongs to (any shard of it
// finds the others) into the single file out: the first shard's metadata
// without the split keys, then every tensor in shard order.
func Merge(firstShard, out string, opts *Options) error {
	m, err := gguf.Open(firstShard)
	if err != nil {
		return fmt.Errorf("splitter: merge: %w", err)
	}
	defer m.Close()
	return MergeModel(m, out, opts)
}

// MergeModel writes the opened shard set m to the single file out (see Merge).
func MergeModel(m *gguf.Model, out string, opts *Options) error {
	md, infos, err := merged(m)
	if err != nil {
		return err
	}
	outs, err := newOutputs([]string{out}, modelPaths(m), opts)
	if err != nil {
		return err
	}
	defer outs.discard()
	opts.logf("writing %s: %d tensors from %d shards\n", out, len(infos), len(m.Shards))
	var buf []byte
	if err := writeFile(opts.context(), outs.staged[0], md, infos, m.TensorFile, &buf); err != nil {
		return fmt.Errorf("splitter: merging into %s: %w", out, err)
	}
	return outs.commit()
}

// merged returns the header of the file MergeModel writes for m.
func merged(m *gguf.Model) (gguf.Metadata, []gguf.TensorInfo, error) {
	if _, split := m.Metadata.Lookup(gguf.KeySplitCount); !split {
		return nil, nil, fmt.Errorf("%w: %s has no %s key (nothing to merge)", ErrNotSplit, m.Path, gguf.KeySplitCount)
	}
	infos := make([]gguf.TensorInfo, len(m.Tensors))
	for i, t := range m.Tensors {
		infos[i] = t.TensorInfo
		infos[i].Offset = 0
	}
	return StripSplitKeys(m.Metadata), infos, nil
}

// MergedSize returns the exact size of the file MergeModel writes for m.
func MergedSize(m *gguf.Model) (int64, error) {
	md, infos, err := merged(m)
	if err != nil {
		return 0, err
	}
	return gguf.FileSize(md, infos)
}

func modelPaths(m *gguf.Model) []string {
	paths := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		paths[i] = s.Path
	}
	return paths
}

// writeFile writes one GGUF file, copying tensor j's data from the file and
// offset src(j) gives with copyData (buf is its reusable buffer).
func writeFile(ctx context.Context, path string, md gguf.Metadata, tensors []gguf.TensorInfo, src func(j int) (*os.File, int64), buf *[]byte) error {
	dataOffset, err := gguf.HeaderSize(md, tensors)
	if err != nil {
		return err
	}
	w, err := gguf.Create(path, md, tensors, &gguf.CreateOptions{Context: ctx})
	if err != nil {
		return err
	}
	defer w.Abort()
	for j, t := range w.Tensors() {
		f, off := src(j)
		if err := copyData(w, f, off, dataOffset+t.Offset, t.Size, buf); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	return w.Close()
}

// copyBufferSize is the buffer copyData reads through when the kernel copy
// would be slow; 1 MiB and up measured the same, 256 KiB a quarter slower.
const copyBufferSize = 4 << 20

var pageSize = int64(os.Getpagesize())

// copyData writes the next tensor of w, size bytes found at srcOff in src;
// dstOff is where they land in w's file. When both offsets fall at the same
// place within a page, the kernel copies the data (copy_file_range) as fast
// as a plain file copy. When they do not, which the GGUF layout makes the
// usual case, the kernel's copy writes every destination page in two
// pieces and costs about 45% more CPU than reading through a buffer in
// user space, which is within 10% of the aligned kernel copy; so it does
// that instead, with one reusable buffer (*buf), never a whole tensor.
func copyData(w *gguf.Writer, src *os.File, srcOff, dstOff, size int64, buf *[]byte) error {
	if (srcOff-dstOff)%pageSize == 0 {
		return w.WriteTensorFrom(src, srcOff)
	}
	if *buf == nil {
		*buf = make([]byte, copyBufferSize)
	}
	for done := int64(0); done < size; {
		n := min(int64(len(*buf)), size-done)
		if _, err := src.ReadAt((*buf)[:n], srcOff+done); err != nil {
			return err
		}
		if _, err := w.Write((*buf)[:n]); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// outputs is a set of output files written under temporary names and
// renamed into place together, so that a failure while writing never leaves
// some of them under their final names.
type outputs struct {
	final, staged []string
	opts          *Options
	committed     bool
}

// newOutputs checks the final paths (none may be an input; none may exist
// unless opts.Overwrite) and picks a temporary name beside each.
func newOutputs(final, inputs []string, opts *Options) (*outputs, error) {
	o := &outputs{final: final, staged: make([]string, len(final)), opts: opts}
	// Staged names are temporary names of the final ones (gguf.TempPrefix,
	// with a token of this process, gguf.NewTempToken), so that a later
	// run on the same outputs finds them if this one is killed before it
	// commits, and this process tells them as its own.
	token := gguf.NewTempToken()
	for i, path := range final {
		for _, in := range inputs {
			same, err := gguf.SameFile(path, in)
			if err != nil {
				return nil, fmt.Errorf("splitter: %w", err)
			}
			if same {
				return nil, fmt.Errorf("splitter: %w: %s is the input %s", gguf.ErrSameFile, path, in)
			}
		}
		if _, err := os.Lstat(path); err == nil && !opts.overwrite() {
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		}
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("splitter: %w", err)
		}
		o.staged[i] = filepath.Join(dir, gguf.TempPrefix(path)+token)
	}
	return o, nil
}

// commit renames every staged file to its final name (gguf.Commit). If a
// rename fails, the complete files stay where they are, as its
// *gguf.CommitError says: those renamed may have replaced the user's files.
func (o *outputs) commit() error {
	var placed func(int) error
	if o.opts != nil && o.opts.Prepare != nil {
		var err error
		if placed, err = o.opts.Prepare(o.staged, o.final); err != nil {
			return fmt.Errorf("splitter: %w", err)
		}
	}
	var placeErr error
	files := make([]gguf.Staged, len(o.final))
	for i := range o.final {
		files[i] = gguf.Staged{Temp: o.staged[i], Final: o.final[i], Replace: o.opts.overwrite(), Beside: o.opts.beside(o.final[i])}
		if placed != nil {
			files[i].Placed = func() {
				if err := placed(i); err != nil && placeErr == nil {
					placeErr = err
				}
			}
		}
	}
	// Reported, not discarded, whatever happens.
	o.committed = true
	if err := gguf.Commit(files); err != nil {
		return fmt.Errorf("splitter: %w", err)
	}
	if placeErr != nil {
		return fmt.Errorf("splitter: the outputs are in place, but: %w", placeErr)
	}
	return nil
}

// discard removes the staged files unless commit was reached.
func (o *outputs) discard() {
	if o.committed {
		return
	}
	for _, p := range o.staged {
		os.Remove(p)
	}
}
