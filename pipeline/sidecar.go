package pipeline

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/quantize"
)

// Every output Run writes gets a sidecar beside it, OUT.gguf.gquant.json,
// written once the output is complete: per tensor, what it was made from
// (the xxhash64 of the input tensor's bytes and of its importance data, the
// type, the kernel switches that change its bytes, quantize.KernelVersion)
// and the xxhash64 of the bytes written. A later run trusts an existing
// file only as far as its sidecar and the hashes say: --reuse copies a
// tensor made from the same inputs, --partial-requant keeps a shard made
// from the same inputs and plan. The README documents the schema.

// SidecarSchema names the sidecar's format; a reader refuses other values.
const SidecarSchema = "gquant.sidecar/1"

// ErrSidecar is wrapped by the errors of a sidecar that cannot be used.
var ErrSidecar = errors.New("pipeline: bad sidecar")

// SidecarPath is the sidecar of the output at path.
func SidecarPath(path string) string { return path + ".gquant.json" }

// BesideBytes bounds what a run writes beside output o while it writes it:
// the progress record and the sidecar, a JSON record of each tensor in
// each (about 300 bytes and its name; 1 KiB and the name bounds it) and a
// header, and a file system block for each of the three files. The
// free-space check adds it to the output's size, so that a run that starts
// does not stop on its last record.
func BesideBytes(o Output) int64 {
	n := int64(3 * 64 << 10)
	for _, t := range o.Tensors {
		n += 2 * (1<<10 + int64(len(t.Name)))
	}
	return n
}

// Sidecar describes one output file.
type Sidecar struct {
	Schema string `json:"schema"`
	// File is the base name of the output described, Size its size.
	File string `json:"file"`
	Size int64  `json:"size"`
	// Header is the hash of the file's bytes before its tensor data (the
	// header, metadata and tensor infos, and the padding after them);
	// sidecars of versions before it have none.
	Header string `json:"header_xxh64,omitempty"`
	// Set names the set of files the file was written with: a hash of the
	// Header hashes of all of them in order and of how each tensor was
	// made (setIdentity), so that the sidecars of one set agree and a set
	// mixed from two runs (a commit that failed part way, job-array parts
	// given other importance data or options) shows; sidecars of versions
	// before it have none.
	Set     string         `json:"set_xxh64,omitempty"`
	Tensors []TensorRecord `json:"tensors"`
}

// setIdentity is Sidecar.Set of a set whose files' Header hashes are
// headers, in order, and whose tensors are described by records (per file,
// in file order). Of each record it takes what a plan knows before any
// work, the name and the recipe (input type and shape, importance data,
// type, options, kernels), not offsets or output hashes: a split or merge
// of the set regroups the same records and names the same set of tensors.
// Parts of a job array given other importance data or options write the
// same headers, and only the recipes tell their sets apart.
func setIdentity(headers []string, records [][]TensorRecord) string {
	d := xxhash.New()
	for _, h := range headers {
		d.WriteString(h)
		d.WriteString("\n")
	}
	for _, recs := range records {
		for i := range recs {
			d.WriteString(recs[i].Name)
			d.WriteString(recs[i].recipe())
			d.WriteString("\n")
		}
	}
	return hashString(d.Sum64())
}

// plannedHeader is Sidecar.Header of output o as planned: its header and
// the zeros that pad it to the tensor data at data, the bytes every
// writer of the plan puts there.
func plannedHeader(o Output, data int64) (string, error) {
	hdr, err := gguf.EncodeHeader(o.Metadata, o.Headers())
	if err != nil {
		return "", err
	}
	if int64(len(hdr)) > data {
		return "", fmt.Errorf("%s: a header of %d bytes before tensor data at %d", o.Path, len(hdr), data)
	}
	d := xxhash.New()
	d.Write(hdr)
	d.Write(make([]byte, data-int64(len(hdr))))
	return hashString(d.Sum64()), nil
}

// hashHeader hashes the bytes of the file at path before its tensor data,
// which starts at data (see Sidecar.Header).
func hashHeader(path string, data int64) (string, error) {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := xxhash.New()
	if _, err := io.Copy(d, io.NewSectionReader(f, 0, data)); err != nil {
		return "", err
	}
	return hashString(d.Sum64()), nil
}

// TensorRecord is how one tensor of an output was made. Hashes are xxhash64
// as 16 lower-case hexadecimal digits.
type TensorRecord struct {
	Name  string  `json:"name"`
	Shape []int64 `json:"shape"`
	// InputType is the input tensor's type, Input the hash of its bytes.
	InputType string `json:"input_type"`
	Input     string `json:"input_xxh64"`
	// Imatrix hashes the importance data given to the kernel (ne0 float32
	// per matrix, little-endian); empty for none.
	Imatrix string `json:"imatrix_xxh64,omitempty"`
	Type    string `json:"type"`
	// Copied: the input bytes were copied unchanged (no kernel ran).
	Copied bool `json:"copied,omitempty"`
	// Options are the kernel switches that changed this type's bytes
	// (quantize.Options.Switches).
	Options []string `json:"options,omitempty"`
	// Kernel is quantize.KernelVersion (absent for copies).
	Kernel string `json:"kernel,omitempty"`
	// Offset is the absolute offset of the tensor's data in the file,
	// Size its bytes (without padding), Output their hash.
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Output string `json:"xxh64"`
	// Fallback lists the rows written with a substitute encoding (rows
	// the reference stops on, see Fallback): an outcome of the recipe, not
	// part of it, kept so that a run that resumes or reuses the tensor
	// still warns about them.
	Fallback *FallbackRecord `json:"fallback,omitempty"`
}

// FallbackRecord is a tensor record's Fallback: the rows of the tensor and
// why.
type FallbackRecord struct {
	Rows   []int64 `json:"rows"`
	Reason string  `json:"reason"`
}

// fallbackRecord is f as a record holds it (nil for none).
func fallbackRecord(f *Fallback) *FallbackRecord {
	if f == nil || len(f.Rows) == 0 {
		return nil
	}
	return &FallbackRecord{Rows: slices.Clone(f.Rows), Reason: f.Reason}
}

// fallback is the Fallback a record of a tensor of type typ describes (nil
// for none), for its warning.
func (r *FallbackRecord) fallback(typ formats.Type) *Fallback {
	if r == nil || len(r.Rows) == 0 {
		return nil
	}
	return &Fallback{Type: typ, Rows: slices.Clone(r.Rows), Reason: r.Reason}
}

// recipe is everything that decides the bytes of a tensor, but its input's
// bytes: two records with the same recipe and input hash have the same
// output bytes.
func (r *TensorRecord) recipe() string {
	opts := r.Options
	if len(opts) == 0 {
		opts = nil // absent and [] are the same
	}
	b, _ := json.Marshal([]any{r.InputType, r.Shape, r.Imatrix, r.Type, r.Copied, opts, r.Kernel})
	return string(b)
}

// samePlace reports whether r and s are the same tensor at the same place
// made the same way: the recipe, the name, the offset and the size.
func (r *TensorRecord) samePlace(s *TensorRecord) bool {
	return r.recipe() == s.recipe() && r.Name == s.Name && r.Offset == s.Offset && r.Size == s.Size
}

// differs names the first field of a plan's record p that the record r of
// a file does not have, for messages.
func (r *TensorRecord) differs(p *TensorRecord) string {
	switch {
	case r.Name != p.Name:
		return fmt.Sprintf("it holds %s where the plan has %s", r.Name, p.Name)
	case r.Type != p.Type || r.Copied != p.Copied:
		return fmt.Sprintf("%s is %s, the plan has %s", r.Name, r.Type, p.Type)
	case !slices.Equal(r.Shape, p.Shape) || r.InputType != p.InputType:
		return fmt.Sprintf("%s was made from a %s %v input, the plan has %s %v", r.Name, r.InputType, r.Shape, p.InputType, p.Shape)
	case r.Imatrix != p.Imatrix:
		return fmt.Sprintf("%s was made with other importance data", r.Name)
	case !slices.Equal(r.Options, p.Options):
		return fmt.Sprintf("%s was made with options %v, the plan has %v", r.Name, r.Options, p.Options)
	case r.Kernel != p.Kernel:
		return fmt.Sprintf("%s was made by kernels %s, these are %s", r.Name, r.Kernel, p.Kernel)
	case r.Offset != p.Offset || r.Size != p.Size:
		return fmt.Sprintf("%s is at offset %d (%d bytes), the plan has %d (%d bytes)", r.Name, r.Offset, r.Size, p.Offset, p.Size)
	}
	return ""
}

// hashString formats an xxhash64 as a record holds it.
func hashString(h uint64) string { return fmt.Sprintf("%016x", h) }

// parseHash reads a record's hash; ok is false for a malformed one.
func parseHash(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	h, err := strconv.ParseUint(s, 16, 64)
	return h, err == nil
}

// hashImatrix hashes a tensor's importance data as the records do ("" for
// none).
func hashImatrix(v []float32) string {
	if v == nil {
		return ""
	}
	d := xxhash.New()
	var b [4 << 10]byte
	for len(v) > 0 {
		n := min(len(v), len(b)/4)
		for i, x := range v[:n] {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		d.Write(b[:4*n])
		v = v[n:]
	}
	return hashString(d.Sum64())
}

// planRecords returns the records of output o as the plan makes them,
// without the data hashes, and the file's size.
func planRecords(in *gguf.Model, o Output) ([]TensorRecord, int64, error) {
	infos := o.Headers()
	dataOffset, laid, err := gguf.Layout(o.Metadata, infos)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", o.Path, err)
	}
	size, err := gguf.FileSize(o.Metadata, infos)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", o.Path, err)
	}
	recs := make([]TensorRecord, len(o.Tensors))
	for j, t := range o.Tensors {
		if t.Source < 0 || t.Source >= len(in.Tensors) {
			return nil, 0, fmt.Errorf("%s: tensor %s: no input tensor %d", o.Path, t.Name, t.Source)
		}
		r := TensorRecord{Name: t.Name, Shape: slices.Clone(t.Shape), InputType: in.Tensors[t.Source].Type.String(),
			Type: t.Type.String(), Copied: !t.Convert, Offset: dataOffset + laid[j].Offset, Size: laid[j].Size}
		if t.Convert {
			r.Imatrix = t.imatrixHash()
			r.Options = t.Kernel.Switches(t.Type)
			r.Kernel = quantize.KernelVersion
		}
		recs[j] = r
	}
	return recs, size, nil
}

// ReadSidecar reads the sidecar of the output at path. A missing sidecar is
// an error for which errors.Is(err, os.ErrNotExist) holds.
func ReadSidecar(path string) (*Sidecar, error) {
	b, err := gguf.ReadRegular(SidecarPath(path))
	if err != nil {
		return nil, err
	}
	var sc Sidecar
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrSidecar, SidecarPath(path), err)
	}
	if sc.Schema != SidecarSchema {
		return nil, fmt.Errorf("%w %s: schema %q, this version reads %q", ErrSidecar, SidecarPath(path), sc.Schema, SidecarSchema)
	}
	for i := range sc.Tensors {
		r := &sc.Tensors[i]
		_, okIn := parseHash(r.Input)
		_, okOut := parseHash(r.Output)
		_, okIm := parseHash(r.Imatrix)
		if !okIn || !okOut || (r.Imatrix != "" && !okIm) || r.Offset < 0 || r.Size < 0 {
			return nil, fmt.Errorf("%w %s: tensor %d (%q): malformed record", ErrSidecar, SidecarPath(path), i, r.Name)
		}
	}
	return &sc, nil
}

// sidecarFor writes sc as the sidecar of output path if the file there is
// still file (this run's, as it was staged); a file another process put
// there since gets none (written false).
func sidecarFor(path string, file os.FileInfo, sc *Sidecar) (written bool, err error) {
	if st, err := os.Stat(path); err != nil || !os.SameFile(st, file) {
		return false, nil
	}
	return true, writeSidecar(path, sc)
}

// writeSidecar writes sc beside the output at path, atomically (a
// temporary file renamed into place).
func writeSidecar(path string, sc *Sidecar) error {
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	dst := SidecarPath(path)
	f, err := gguf.CreateTemp(dst)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// planSet is Sidecar.Set of the outputs of a plan, every one of them
// (those kept or written elsewhere too), from their planned headers.
func planSet(in *gguf.Model, outs []Output) (string, error) {
	headers := make([]string, len(outs))
	records := make([][]TensorRecord, len(outs))
	for i, o := range outs {
		recs, size, err := planRecords(in, o)
		if err != nil {
			return "", err
		}
		if headers[i], err = plannedHeader(o, dataOffset(recs, size)); err != nil {
			return "", err
		}
		records[i] = recs
	}
	return setIdentity(headers, records), nil
}

// dataOffset is where the tensor data of a file with records recs and size
// bytes starts: at its first tensor, or at its end when it has none.
func dataOffset(recs []TensorRecord, size int64) int64 {
	if len(recs) > 0 {
		return recs[0].Offset
	}
	return size
}
