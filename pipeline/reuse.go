package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/gguf"
)

// Reuse holds the tensors of earlier outputs (--reuse PREV.gguf) that Run
// may copy instead of quantizing: those their sidecars record. A tensor is
// copied only when its record has the plan's recipe (input type and shape,
// importance data, type, kernel switches, quantize.KernelVersion), the
// input tensor's bytes hash to the recorded input hash, and the earlier
// output's bytes still hash to the recorded output hash as they are read
// (else it is quantized after all). So the output is the one a fresh run
// writes, byte for byte.
type Reuse struct {
	models []*gguf.Model
	paths  []string                       // every file read
	byRec  map[string]map[uint64][]reused // recipe, input hash -> tensors
	files  int                            // files with a usable sidecar
}

// reused is one tensor of an earlier output.
type reused struct {
	model    int
	tensor   int             // index in the model
	file     string          // for messages
	output   uint64          // recorded hash of its bytes
	fallback *FallbackRecord // recorded substitute rows, warned about again
}

// OpenReuse opens the earlier outputs (each any shard of a set) and reads
// their files' sidecars. notes receives one line per file that has no
// usable sidecar (nothing of it is reused) and per record that does not
// describe its file (left out).
func OpenReuse(paths []string, notes func(string)) (*Reuse, error) {
	r := &Reuse{byRec: map[string]map[uint64][]reused{}}
	for _, p := range paths {
		ms, err := openReused(p, notes)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("--reuse: %w", err)
		}
		for _, m := range ms {
			mi := len(r.models)
			r.models = append(r.models, m)
			for _, s := range m.Shards {
				r.paths = append(r.paths, s.Path)
				r.addShard(mi, m, s, notes)
			}
		}
	}
	return r, nil
}

// openReused opens the earlier output at path: its whole shard set, or,
// where some of its shards are missing, the one named included (a machine
// of a job array holds the shards of its own part), each shard present as
// a model of its own; none present is an error. Every
// tensor reused is checked against its record whatever the set, so a
// partial set is as safe as a whole one.
func openReused(path string, notes func(string)) ([]*gguf.Model, error) {
	m, err := gguf.Open(path)
	if err == nil {
		return []*gguf.Model{m}, nil
	}
	// The shard named may be one of those missing: every machine of a job
	// array runs the same command line, --reuse PREV-00001-of-0000N.gguf
	// included, and holds the shards of its own part only.
	prefix, _, n, named := gguf.ParseShardPath(path)
	if !named || !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var ms []*gguf.Model
	missing := 0
	for i := range n {
		m, err := gguf.OpenShard(gguf.ShardPath(prefix, i, n))
		switch {
		case errors.Is(err, os.ErrNotExist):
			missing++
			continue
		case err != nil:
			for _, m := range ms {
				m.Close()
			}
			return nil, err
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, err // none of the set here: a wrong path, say so
	}
	if notes != nil {
		notes(fmt.Sprintf("--reuse %s: %d of its %d shards are missing: reusing from the %d present", path, missing, n, len(ms)))
	}
	return ms, nil
}

func (r *Reuse) addShard(mi int, m *gguf.Model, s *gguf.Shard, notes func(string)) {
	note := func(format string, args ...any) {
		if notes != nil {
			notes(fmt.Sprintf(format, args...))
		}
	}
	sc, err := ReadSidecar(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		note("--reuse %s: no sidecar (%s): nothing is reused from it", s.Path, SidecarPath(s.Path))
		return
	}
	if err != nil {
		note("--reuse %s: %v: nothing is reused from it", s.Path, err)
		return
	}
	if sc.Size != s.Size {
		note("--reuse %s: its sidecar describes a file of %d bytes, it has %d: nothing is reused from it", s.Path, sc.Size, s.Size)
		return
	}
	r.files++
	for _, rec := range sc.Tensors {
		ti := m.TensorIndex(rec.Name)
		if ti < 0 || m.Tensors[ti].Shard != shardIndex(m, s) {
			note("--reuse %s: its sidecar records %s, which the file does not hold: not reused", s.Path, rec.Name)
			continue
		}
		t := m.Tensors[ti]
		if s.DataOffset+t.Offset != rec.Offset || t.Size != rec.Size || t.Type.String() != rec.Type {
			note("--reuse %s: %s is not where or what its sidecar says: not reused", s.Path, rec.Name)
			continue
		}
		if rec.Copied {
			continue // copying from the input is as cheap
		}
		in, _ := parseHash(rec.Input)
		out, _ := parseHash(rec.Output)
		key := rec.recipe()
		if r.byRec[key] == nil {
			r.byRec[key] = map[uint64][]reused{}
		}
		r.byRec[key][in] = append(r.byRec[key][in], reused{model: mi, tensor: ti, file: s.Path, output: out, fallback: rec.Fallback})
	}
}

func shardIndex(m *gguf.Model, s *gguf.Shard) int {
	for i, x := range m.Shards {
		if x == s {
			return i
		}
	}
	return -1
}

// Paths lists every file the earlier outputs are made of, so that a
// command can refuse to write over them.
func (r *Reuse) Paths() []string { return r.paths }

// Usable reports whether any file had a usable sidecar.
func (r *Reuse) Usable() bool { return r != nil && r.files > 0 }

// candidates returns the earlier tensors made with rec's recipe, by their
// input hash, or nil.
func (r *Reuse) candidates(rec *TensorRecord) map[uint64][]reused {
	if r == nil || rec.Copied {
		return nil
	}
	return r.byRec[rec.recipe()]
}

// reader returns a reader of an earlier tensor's bytes and their size.
func (r *Reuse) reader(c reused) (*io.SectionReader, int64) {
	m := r.models[c.model]
	return m.TensorReader(c.tensor), m.Tensors[c.tensor].Size
}

// Close closes the earlier outputs.
func (r *Reuse) Close() error {
	if r == nil {
		return nil
	}
	var first error
	for _, m := range r.models {
		if err := m.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.models = nil
	return first
}

// hashTensor hashes the bytes of input tensor i, reading them with buf.
func hashTensor(in *gguf.Model, i int, buf []byte) (uint64, error) {
	d := xxhash.New()
	if _, err := io.CopyBuffer(d, in.TensorReader(i), buf); err != nil {
		return 0, err
	}
	return d.Sum64(), nil
}
