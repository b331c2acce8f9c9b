package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gquant/gquant/gguf"
)

// ErrMixedSet: a shard set whose sidecars name different sets of files
// (Sidecar.Set), shards of two runs.
var ErrMixedSet = errors.New("shards of two runs")

// CarrySidecars gives the files a split or merge wrote from in (outputs,
// which hold in's tensors with their bytes unchanged, in any grouping)
// the sidecars those tensors had: each record as in's sidecars have it,
// with the offset it now has. The output hashes stay true because the
// bytes are copies; gquant verify re-hashes them.
//
// Where some file of in has no sidecar (or one that does not describe it),
// nothing is written, and any sidecar left beside an output by an earlier
// run is removed so that none describes a file it was not made for;
// missing names the input files that lacked one, removed those sidecars.
// The same holds where in's sidecars name different sets (shards of two
// runs), and the error then wraps ErrMixedSet. An output tensor that no
// record describes, or one of another shape, type or size, is an error.
func CarrySidecars(in *gguf.Model, outputs []string) (missing, removed []string, err error) {
	c, err := PrepareCarry(in, outputs, outputs)
	if err != nil {
		return nil, nil, err
	}
	for i := range outputs {
		if err := c.Place(i); err != nil {
			return c.Missing, c.Removed, err
		}
	}
	return c.Missing, c.Removed, c.Mixed
}

// A Carry holds the sidecars of the outputs of a split or merge, made from
// the staged files before they are renamed (PrepareCarry), so that each
// output's sidecar goes beside it as soon as it is in place: a kill
// between two renames then leaves no new file without its sidecar.
type Carry struct {
	final []string
	scs   []*Sidecar // nil where no sidecar is carried
	// Missing and Removed are CarrySidecars' missing and removed (Removed
	// grows as Place removes old sidecars).
	Missing, Removed []string
	// Mixed wraps ErrMixedSet where in's sidecars name different sets.
	Mixed error
}

// PrepareCarry makes the sidecars CarrySidecars gives final (the paths the
// files will have) from staged (the complete files, under their temporary
// names, in the same order).
func PrepareCarry(in *gguf.Model, staged, final []string) (*Carry, error) {
	c := &Carry{final: final, scs: make([]*Sidecar, len(final))}
	records := map[string]TensorRecord{}
	sets := map[string]string{} // Sidecar.Set -> a shard that names it
	for _, s := range in.Shards {
		sc, err := ReadSidecar(s.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			c.Missing = append(c.Missing, s.Path)
			continue
		case err != nil:
			return nil, err
		case sc.Size != s.Size:
			c.Missing = append(c.Missing, s.Path)
			continue
		}
		if _, seen := sets[sc.Set]; sc.Set != "" && !seen {
			sets[sc.Set] = s.Path // the first shard of each set names it
		}
		for _, r := range sc.Tensors {
			records[r.Name] = r
		}
	}
	if len(sets) > 1 {
		// Shards of two runs: the outputs would be trusted as one.
		var names []string
		for _, p := range sets {
			names = append(names, p)
		}
		slices.Sort(names)
		c.Mixed = fmt.Errorf("%w: the input's sidecars name different sets of files (%s): its shards were not written together, so the outputs get no sidecars", ErrMixedSet, strings.Join(names, ", "))
		c.Missing = names
	}
	if len(c.Missing) > 0 {
		return c, nil
	}
	headers := make([]string, len(final))
	tensors := make([][]TensorRecord, len(final))
	for i := range final {
		sc, err := carriedSidecar(staged[i], records)
		if err != nil {
			return nil, err
		}
		sc.File = filepath.Base(final[i])
		c.scs[i] = sc
		headers[i], tensors[i] = sc.Header, sc.Tensors
	}
	set := setIdentity(headers, tensors)
	for _, sc := range c.scs {
		sc.Set = set
	}
	return c, nil
}

// Place writes the sidecar of output i, now in place; where none is
// carried, it removes any sidecar an earlier run left beside it.
func (c *Carry) Place(i int) error {
	out := c.final[i]
	if c.scs[i] == nil {
		switch err := os.Remove(SidecarPath(out)); {
		case err == nil:
			c.Removed = append(c.Removed, SidecarPath(out))
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
		return nil
	}
	if err := writeSidecar(out, c.scs[i]); err != nil {
		return fmt.Errorf("%s: %w", SidecarPath(out), err)
	}
	return nil
}

// carriedSidecar is the sidecar of the copy at path, from the records of
// its tensors.
func carriedSidecar(path string, records map[string]TensorRecord) (*Sidecar, error) {
	f, size, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := gguf.Read(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc := &Sidecar{Schema: SidecarSchema, File: filepath.Base(path), Size: size, Tensors: make([]TensorRecord, len(h.Tensors))}
	if sc.Header, err = hashHeader(path, h.DataOffset); err != nil {
		return nil, err
	}
	for i, t := range h.Tensors {
		r, ok := records[t.Name]
		if !ok || r.Type != t.Type.String() || !slices.Equal(r.Shape, t.Shape) || r.Size != t.Size {
			return nil, fmt.Errorf("%w: %s: tensor %s is not the one the input's sidecars record", ErrSidecar, path, t.Name)
		}
		r.Shape = slices.Clone(r.Shape)
		r.Options = slices.Clone(r.Options)
		r.Offset = h.DataOffset + t.Offset
		sc.Tensors[i] = r
	}
	return sc, nil
}
