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
	records := map[string]TensorRecord{}
	sets := map[string]string{} // Sidecar.Set -> a shard that names it
	for _, s := range in.Shards {
		sc, err := ReadSidecar(s.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			missing = append(missing, s.Path)
			continue
		case err != nil:
			return nil, nil, err
		case sc.Size != s.Size:
			missing = append(missing, s.Path)
			continue
		}
		if sc.Set != "" {
			sets[sc.Set] = s.Path
		}
		for _, r := range sc.Tensors {
			records[r.Name] = r
		}
	}
	var mixed error
	if len(sets) > 1 {
		// Shards of two runs: the outputs would be trusted as one.
		var names []string
		for _, p := range sets {
			names = append(names, p)
		}
		slices.Sort(names)
		mixed = fmt.Errorf("%w: the input's sidecars name different sets of files (%s): its shards were not written together, so the outputs get no sidecars", ErrMixedSet, strings.Join(names, ", "))
		missing = names
	}
	if len(missing) > 0 {
		for _, out := range outputs {
			switch err := os.Remove(SidecarPath(out)); {
			case err == nil:
				removed = append(removed, SidecarPath(out))
			case !errors.Is(err, os.ErrNotExist):
				return missing, removed, err
			}
		}
		return missing, removed, mixed
	}
	scs := make([]*Sidecar, len(outputs))
	headers := make([]string, len(outputs))
	tensors := make([][]TensorRecord, len(outputs))
	for i, out := range outputs {
		if scs[i], err = carriedSidecar(out, records); err != nil {
			return nil, nil, err
		}
		headers[i], tensors[i] = scs[i].Header, scs[i].Tensors
	}
	set := setIdentity(headers, tensors)
	for i, out := range outputs {
		scs[i].Set = set
		if err := writeSidecar(out, scs[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", SidecarPath(out), err)
		}
	}
	return nil, nil, nil
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
