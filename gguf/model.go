package gguf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"strconv"
)

// Model is a GGUF model opened from disk: a single file, or every shard of a
// set written by gguf-split or llama-quantize --keep-split
// (NAME-00001-of-00003.gguf ...).
type Model struct {
	// Path is the file Open was given.
	Path string
	// Metadata is the first shard's (the only one carrying the model's keys).
	Metadata Metadata
	// Tensors lists every tensor of every shard, shard by shard in file order.
	Tensors []Tensor
	// Shards holds each file, in shard order; a single file is one shard.
	Shards []*Shard

	index map[string]int
}

// Tensor is a tensor of a Model: its info within its shard's file, and the
// shard index (0-based) it lives in.
type Tensor struct {
	TensorInfo
	Shard int
}

// Infos returns each tensor's header, in order, without the shard index.
func (m *Model) Infos() []TensorInfo {
	infos := make([]TensorInfo, len(m.Tensors))
	for i, t := range m.Tensors {
		infos[i] = t.TensorInfo
	}
	return infos
}

// Shard is one file of a Model.
type Shard struct {
	Path string
	*File
	f *os.File
}

// splitName matches a shard file name and captures its prefix, 1-based
// number and count, e.g. "model-00002-of-00003.gguf".
var splitName = regexp.MustCompile(`^(.*)-([0-9]{5,})-of-([0-9]{5,})\.gguf$`)

// ShardPath returns the file name of shard i (0-based) of n, as the
// reference spells it: PREFIX-0000K-of-0000N.gguf.
func ShardPath(prefix string, i, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, i+1, n)
}

// ParseShardPath splits a shard path into its prefix, 0-based index and
// shard count; ok is false if the name does not follow the pattern or
// counts more shards than split.count can hold (65535: callers list the
// set's paths from the count).
func ParseShardPath(path string) (prefix string, i, n int, ok bool) {
	m := splitName.FindStringSubmatch(path)
	if m == nil {
		return "", 0, 0, false
	}
	k, err1 := strconv.Atoi(m[2])
	n, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil || k < 1 || k > n || n > math.MaxUint16 {
		return "", 0, 0, false
	}
	return m[1], k - 1, n, true
}

// Open opens a GGUF model. Given one shard of a set (any of them), it finds
// the others by name and checks them against split.no, split.count and
// split.tensors.count. Only headers are read.
func Open(path string) (*Model, error) {
	first, err := openShard(path)
	if err != nil {
		return nil, err
	}
	m := &Model{Path: path}
	ok := false
	defer func() {
		if !ok {
			m.Close()
			first.close()
		}
	}()

	count, isSplit, err := splitCount(first)
	if err != nil {
		return nil, err
	}
	if !isSplit || count <= 1 {
		if isSplit {
			// A one-file "set", or a file merged by the reference (which
			// keeps split.no and split.tensors.count and sets split.count
			// to 0): its split keys must describe this file alone.
			if err := checkSingle(first, path, count); err != nil {
				return nil, err
			}
		}
		m.Shards = []*Shard{first}
	} else {
		prefix, k, n, named := ParseShardPath(path)
		if !named {
			return nil, fmt.Errorf("%w: %s: shard of a %d-file set, but its name does not follow PREFIX-0000K-of-0000N.gguf, so the other shards cannot be found", ErrShard, path, count)
		}
		if n != count {
			return nil, fmt.Errorf("%w: %s: the name says %d shards, %s says %d", ErrShard, path, n, KeySplitCount, count)
		}
		m.Shards = make([]*Shard, n)
		m.Shards[k] = first
		for i := range m.Shards {
			if i == k {
				continue
			}
			s, err := openShard(ShardPath(prefix, i, n))
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w: shard %d of %d is missing: %w", ErrShard, i+1, n, err)
			} else if err != nil {
				return nil, err
			}
			m.Shards[i] = s
		}
		if err := m.checkShards(); err != nil {
			return nil, err
		}
	}
	m.Metadata = m.Shards[0].Metadata
	if len(m.Shards) == 1 {
		m.fromOneShard()
		ok = true
		return m, nil
	}
	total := 0
	for _, s := range m.Shards {
		total += len(s.Tensors)
	}
	m.index = make(map[string]int, total)
	m.Tensors = make([]Tensor, 0, total)
	for si, s := range m.Shards {
		for _, t := range s.Tensors {
			if j, dup := m.index[t.Name]; dup {
				return nil, fmt.Errorf("%w %q: in %s and in %s (shards from different models?)", ErrDuplicateTensor, t.Name, m.Shards[m.Tensors[j].Shard].Path, s.Path)
			}
			m.index[t.Name] = len(m.Tensors)
			m.Tensors = append(m.Tensors, Tensor{TensorInfo: t, Shard: si})
		}
	}
	if len(m.Shards) > 1 {
		want, _ := m.Metadata.Int(KeySplitTensorsCount)
		if int64(len(m.Tensors)) != want {
			return nil, fmt.Errorf("%w: %s says %s %d, but the %d shards hold %d tensors", ErrShard, m.Shards[0].Path, KeySplitTensorsCount, want, len(m.Shards), len(m.Tensors))
		}
	}
	ok = true
	return m, nil
}

// splitCount returns split.count of a shard; isSplit is false without it.
// OpenShard opens the one file at path as a model of its own tensors, not
// looking for the other shards of its set (--reuse of the part of a set a
// machine holds). Its split keys are not checked: for a whole model use
// Open.
func OpenShard(path string) (*Model, error) {
	s, err := openShard(path)
	if err != nil {
		return nil, err
	}
	m := &Model{Path: path, Shards: []*Shard{s}, Metadata: s.Metadata}
	m.fromOneShard()
	return m, nil
}

// fromOneShard makes the tensors of a model of one shard: the file's own
// index serves, no need to build another.
func (m *Model) fromOneShard() {
	s := m.Shards[0]
	m.index = s.index
	m.Tensors = make([]Tensor, len(s.Tensors))
	for i, t := range s.Tensors {
		m.Tensors[i] = Tensor{TensorInfo: t}
	}
}

func splitCount(s *Shard) (count int, isSplit bool, err error) {
	v, present := s.Metadata.Lookup(KeySplitCount)
	if !present {
		return 0, false, nil
	}
	n, ok := v.Uint()
	if !ok || n > 1<<20 {
		return 0, false, fmt.Errorf("%w: %s: %s is %s", ErrShard, s.Path, KeySplitCount, v)
	}
	return int(n), true, nil
}

// checkSingle checks the split keys of a file that says it is a set of at
// most one file: it must be shard 0 and hold split.tensors.count tensors,
// and its name must not say it is one of several (a shard whose split.count
// was damaged would otherwise pass for the whole model).
func checkSingle(s *Shard, path string, count int) error {
	if _, k, n, named := ParseShardPath(path); named && n > 1 {
		return fmt.Errorf("%w: %s is shard %d of %d by name, but says %s %d", ErrShard, path, k+1, n, KeySplitCount, count)
	}
	no, present, err := s.Metadata.LookupUint(KeySplitNo)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrShard, path, err)
	}
	if present && no != 0 {
		return fmt.Errorf("%w: %s says %s %d and %s %d: a later shard of a set whose first file says otherwise", ErrShard, path, KeySplitNo, no, KeySplitCount, count)
	}
	total, present, err := s.Metadata.LookupInt(KeySplitTensorsCount)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrShard, path, err)
	}
	if present && total != int64(len(s.Tensors)) {
		return fmt.Errorf("%w: %s says %s %d and %s %d, but holds %d tensors (a shard of a larger set?)", ErrShard, path, KeySplitCount, count, KeySplitTensorsCount, total, len(s.Tensors))
	}
	return nil
}

// checkShards checks that the shards belong together and are each where
// their split.no says.
func (m *Model) checkShards() error {
	n := len(m.Shards)
	total, ok, err := m.Shards[0].Metadata.LookupInt(KeySplitTensorsCount)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrShard, m.Shards[0].Path, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s has no %s", ErrShard, m.Shards[0].Path, KeySplitTensorsCount)
	}
	for i, s := range m.Shards {
		for _, prev := range m.Shards[:i] {
			if same, _ := SameFile(prev.Path, s.Path); same {
				return fmt.Errorf("%w: %s and %s are the same file (shard listed twice)", ErrShard, prev.Path, s.Path)
			}
		}
		no, ok, err := s.Metadata.LookupUint(KeySplitNo)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrShard, s.Path, err)
		}
		if !ok {
			return fmt.Errorf("%w: %s has no %s", ErrShard, s.Path, KeySplitNo)
		}
		if no != uint64(i) {
			return fmt.Errorf("%w: %s is shard %d by name but its %s %d (counted from 0) makes it shard %d: a shard listed twice, or a renamed file", ErrShard, s.Path, i+1, KeySplitNo, no, no+1)
		}
		count, _, err := splitCount(s)
		if err != nil {
			return err
		}
		if count != n {
			return fmt.Errorf("%w: %s says %s %d, %s says %d (shards from different models?)", ErrShard, s.Path, KeySplitCount, count, m.Path, n)
		}
		t, ok, err := s.Metadata.LookupInt(KeySplitTensorsCount)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrShard, s.Path, err)
		}
		if !ok {
			return fmt.Errorf("%w: %s has no %s", ErrShard, s.Path, KeySplitTensorsCount)
		}
		if t != total {
			return fmt.Errorf("%w: %s says %s %d, %s says %d (shards from different models?)", ErrShard, s.Path, KeySplitTensorsCount, t, m.Shards[0].Path, total)
		}
		// Shards written by llama-quantize --keep-split carry the model's
		// keys in every file; where they do, they must agree.
		for _, key := range []string{"general.architecture", "general.name"} {
			a, inFirst := m.Shards[0].Metadata.Lookup(key)
			b, inThis := s.Metadata.Lookup(key)
			if inFirst && inThis && !a.Equal(b) {
				return fmt.Errorf("%w: %s has %s %s, %s has %s (shards from different models)", ErrShard, s.Path, key, b, m.Shards[0].Path, a)
			}
		}
	}
	return nil
}

func openShard(path string) (*Shard, error) {
	f, size, err := OpenRegular(path)
	if err != nil {
		// The system's errors (no such file, permission denied, too many
		// open files) say what went wrong as they are; only a path that is
		// not a regular file (a directory, a pipe) is not a GGUF file.
		if _, isOS := errors.AsType[*fs.PathError](err); isOS {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		return nil, fmt.Errorf("%w: %w", ErrNotGGUF, err)
	}
	gf, err := Read(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Shard{Path: path, File: gf, f: f}, nil
}

func (s *Shard) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// TensorIndex returns the position of the named tensor in Tensors, or -1.
func (m *Model) TensorIndex(name string) int {
	if i, ok := m.index[name]; ok {
		return i
	}
	return -1
}

// TensorReader returns a reader of tensor i's data. Readers are independent
// (they use ReadAt) and may be used concurrently.
func (m *Model) TensorReader(i int) *io.SectionReader {
	t := &m.Tensors[i]
	s := m.Shards[t.Shard]
	return io.NewSectionReader(s.f, s.DataOffset+t.Offset, t.Size)
}

// TensorFile returns the open file holding tensor i and the absolute offset
// of its data in it, for kernel-side copies (Writer.WriteTensorFrom). The
// file belongs to the Model: do not close it.
func (m *Model) TensorFile(i int) (f *os.File, offset int64) {
	t := &m.Tensors[i]
	s := m.Shards[t.Shard]
	return s.f, s.DataOffset + t.Offset
}

// Size returns the total size of the model's files in bytes.
func (m *Model) Size() int64 {
	var n int64
	for _, s := range m.Shards {
		n += s.Size
	}
	return n
}

// Close closes every shard's file.
func (m *Model) Close() error {
	var first error
	for _, s := range m.Shards {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
