package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/gguf"
)

// Every temporary file Run writes has a progress record beside it,
// TEMP.progress (so ".OUT.gguf.tmp-PID-RANDOM.progress", which the stale
// temporary file sweeps of issue 16 recognise as this process's): one JSON
// line naming the output, then one line per complete tensor, the tensor's
// record as the sidecar will hold it. A line is appended only after the
// tensor's bytes are on the disk (fsync), and synced itself, so after a
// crash, a kill -9 or a power loss the record never claims more than the
// file holds; a torn last line is ignored. FindResumable checks it, and
// the bytes it claims, against a new run's plan, and Run continues from
// there (--resume).

// progressSchema names the progress record's format.
const progressSchema = "gquant.progress/1"

// progressHeader is the first line of a progress record.
type progressHeader struct {
	Schema string `json:"schema"`
	File   string `json:"file"` // the output's base name
	Size   int64  `json:"size"` // the output's planned size
}

// journalPath is the progress record of a temporary file.
func journalPath(tmp string) string { return tmp + ".progress" }

// journal appends to a progress record.
type journal struct {
	f    *os.File
	path string
}

// createJournal writes the progress record of tmp, a write of out of size
// bytes, with the records of the tensors already complete in it.
func createJournal(tmp, out string, size int64, done []TensorRecord) (*journal, error) {
	path := journalPath(tmp)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(progressHeader{Schema: progressSchema, File: filepath.Base(out), Size: size})
	for _, r := range done {
		enc.Encode(r)
	}
	if _, err = f.Write(b.Bytes()); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &journal{f: f, path: path}, nil
}

// add records one more complete tensor; the caller synced its bytes.
func (j *journal) add(r TensorRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

// close closes the record and keeps it (for --resume).
func (j *journal) close() {
	if j != nil && j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// remove closes and removes the record.
func (j *journal) remove() {
	if j != nil {
		j.close()
		os.Remove(j.path)
	}
}

// readJournal reads a progress record; a last line cut short (a crash
// while it was written) is ignored.
func readJournal(path string) (progressHeader, []TensorRecord, error) {
	var hdr progressHeader
	f, err := os.Open(path)
	if err != nil {
		return hdr, nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return hdr, nil, fmt.Errorf("%s: no header line", path)
	}
	if err := json.Unmarshal(line, &hdr); err != nil || hdr.Schema != progressSchema {
		return hdr, nil, fmt.Errorf("%s: not a progress record of this version", path)
	}
	var recs []TensorRecord
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break // end, or a torn last line
		}
		var r TensorRecord
		if json.Unmarshal(line, &r) != nil {
			break
		}
		if _, ok := parseHash(r.Input); !ok {
			break
		}
		if _, ok := parseHash(r.Output); !ok {
			break
		}
		recs = append(recs, r)
	}
	return hdr, recs, nil
}

// Resumable is a temporary file of an interrupted run that Run can
// continue (Options.Resume).
type Resumable struct {
	// Temp is the temporary file, Done the count of complete tensors in it.
	Temp string
	Done int
	// Bytes is how many bytes of the output they are.
	Bytes   int64
	records []TensorRecord
}

// ErrNotResumable: --resume found an interrupted run's temporary file for
// an output but none it can continue (another command wrote it, or its
// progress record is damaged). Nothing is removed: hours of work may be in
// it.
var ErrNotResumable = errors.New("pipeline: interrupted run cannot be resumed")

// FindResumable looks for the temporary files that interrupted runs left
// for the outputs to write (not Skip) and returns, per output, the one Run
// continues (nil: none). A file qualifies if its progress record names the
// output with this plan's size and header and its complete tensors have
// the plan's records; then the bytes of those tensors, and the input
// tensors they were made from, are read and must hash to the recorded
// values (the first that does not is written again, and everything after
// it). Other stale temporary files of the outputs (not locked, their
// process gone) are removed. If an output has such files and none
// qualifies, FindResumable fails with ErrNotResumable and removes nothing.
// notes receives a line per file found, used or removed.
func FindResumable(ctx context.Context, in *gguf.Model, outs []Output, notes func(string)) ([]*Resumable, error) {
	note := func(format string, args ...any) {
		if notes != nil {
			notes(fmt.Sprintf(format, args...))
		}
	}
	res := make([]*Resumable, len(outs))
	buf := make([]byte, 8<<20)
	for i, o := range outs {
		if o.Skip {
			if !o.Elsewhere {
				removeOrphanRecords(o.Path)
			}
			continue
		}
		plan, size, err := planRecords(in, o)
		if err != nil {
			return nil, err
		}
		infos := o.Headers()
		header, err := gguf.EncodeHeader(o.Metadata, infos)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Path, err)
		}
		temps, err := gguf.TempFiles(o.Path)
		if err != nil {
			continue
		}
		// A complete output a failed commit kept under its temporary name
		// may be this run's input: it is neither continued nor removed.
		temps = slices.DeleteFunc(temps, func(t gguf.TempFile) bool { return isInputShard(in, strings.TrimSuffix(t.Path, ".progress")) })
		if testHookTempsListed != nil {
			testHookTempsListed()
		}
		kept, err := keepPlaced(ctx, in, outs, i, size, header, plan, temps, buf, note)
		if err != nil {
			return nil, err
		}
		if kept {
			continue
		}
		var cands []*Resumable
		var refused []string
		for _, t := range temps {
			if !stale(t) || strings.HasSuffix(t.Path, ".progress") {
				continue
			}
			r, why := resumable(t.Path, o.Path, size, header, plan)
			if r == nil && gone(t.Path) {
				// Taken over since it was listed: another run of the same
				// output with --resume renamed it to a name of its own (and
				// this run stops at that one, being written), or removed
				// it. Not a file this run could not continue.
				note("%s is gone: another run took it over or removed it", t.Path)
				continue
			}
			if r == nil {
				note("%s cannot be resumed for %s: %s", t.Path, o.Path, why)
				refused = append(refused, fmt.Sprintf("%s (%s)", t.Path, why))
				continue
			}
			cands = append(cands, r)
		}
		if len(cands) == 0 && len(refused) > 0 {
			return nil, fmt.Errorf("%w: %s: %s", ErrNotResumable, o.Path, strings.Join(refused, "; "))
		}
		var best *Resumable
		for _, c := range cands {
			if best == nil || c.Done > best.Done {
				best = c
			}
		}
		if best != nil {
			if err := verifyDone(ctx, in, o, best, buf, note); err != nil {
				return nil, err
			}
			res[i] = best
			note("resuming %s from %s: %d of %d tensors (%s of %s) are complete", o.Path, best.Temp, best.Done, len(o.Tensors),
				humanBytes(best.Bytes), humanBytes(size))
		}
		// Everything else of the outputs' stale temporary files goes.
		for _, t := range temps {
			if !stale(t) || best != nil && (t.Path == best.Temp || t.Path == journalPath(best.Temp)) {
				continue
			}
			if err := os.Remove(t.Path); err == nil && !strings.HasSuffix(t.Path, ".progress") {
				note("removed %s (%s), a temporary file of an interrupted run for %s not resumed", t.Path, humanBytes(t.Size), o.Path)
			}
		}
	}
	return res, nil
}

// testHookTempsListed, when set by a test, runs after FindResumable lists
// an output's temporary files: another process may act in between.
var testHookTempsListed func()

// gone reports whether nothing is at path any more.
func gone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, os.ErrNotExist)
}

// isInputShard reports whether path is a file of the model in.
func isInputShard(in *gguf.Model, path string) bool {
	for _, s := range in.Shards {
		if same, _ := gguf.SameFile(path, s.Path); same {
			return true
		}
	}
	return false
}

// stale reports whether t is a temporary file (or progress record) of this
// version that no writer holds: it is another process's that is gone and
// holds no lock, or it is this process's and no longer locked (a Run that
// was stopped with Keep).
func stale(t gguf.TempFile) bool {
	if t.PID == 0 {
		return false
	}
	if t.Own {
		return !gguf.Locked(strings.TrimSuffix(t.Path, ".progress"))
	}
	return !t.Live
}

// resumable reads tmp's progress record and matches it with the plan's
// records; it returns nil and the reason when the file is of no use.
func resumable(tmp, out string, size int64, header []byte, plan []TensorRecord) (*Resumable, string) {
	hdr, recs, err := readJournal(journalPath(tmp))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "it has no progress record"
	}
	if err != nil {
		return nil, err.Error()
	}
	if hdr.File != filepath.Base(out) || hdr.Size != size {
		return nil, fmt.Sprintf("it is a write of %s of %d bytes, the plan writes %s of %d bytes", hdr.File, hdr.Size, filepath.Base(out), size)
	}
	return resumableFrom(tmp, recs, header, plan)
}

// resumableFrom is resumable for the file at tmp with the records recs of
// its progress record.
func resumableFrom(tmp string, recs []TensorRecord, header []byte, plan []TensorRecord) (*Resumable, string) {
	f, err := os.Open(tmp)
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	got := make([]byte, len(header))
	if _, err := io.ReadFull(f, got); err != nil || !bytes.Equal(got, header) {
		return nil, "its header is not this plan's (other types, metadata or tensors, or a damaged file)"
	}
	done := 0
	for done < len(recs) && done < len(plan) && recs[done].samePlace(&plan[done]) {
		done++
	}
	if done < len(recs) && done < len(plan) {
		// A tensor the file holds was made otherwise than this plan makes
		// it (other importance data, options or kernels behind the same
		// header): the command differs from the one that wrote the file.
		why := recs[done].differs(&plan[done])
		if why == "" {
			why = recs[done].Name + " was made otherwise"
		}
		return nil, "its progress record says " + why
	}
	r := &Resumable{Temp: tmp, Done: done, records: recs[:done]}
	if done > 0 {
		last := recs[done-1]
		r.Bytes = last.Offset + last.Size
	}
	return r, ""
}

// verifyDone hashes the complete tensors of r, as written and as read from
// the input, and cuts r at the first that differs from its record.
func verifyDone(ctx context.Context, in *gguf.Model, o Output, r *Resumable, buf []byte, note func(string, ...any)) error {
	f, err := os.Open(r.Temp)
	if err != nil {
		return err
	}
	defer f.Close()
	for k := 0; k < r.Done; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := &r.records[k]
		d := xxhash.New()
		if _, err := io.CopyBuffer(d, io.NewSectionReader(f, rec.Offset, rec.Size), buf); err != nil {
			return fmt.Errorf("%s: %w", r.Temp, err)
		}
		why := ""
		if hashString(d.Sum64()) != rec.Output {
			why = "its bytes in the temporary file are not the recorded ones"
		} else if sum, err := hashTensor(in, o.Tensors[k].Source, buf); err != nil {
			return fmt.Errorf("reading %s: %w", o.Tensors[k].Name, err)
		} else if hashString(sum) != rec.Input {
			why = "the input tensor changed since it was written"
		}
		if why != "" {
			note("%s: %s: %s; written again from there", r.Temp, rec.Name, why)
			r.Done, r.records = k, r.records[:k]
			r.Bytes = 0
			if k > 0 {
				r.Bytes = r.records[k-1].Offset + r.records[k-1].Size
			}
			return nil
		}
	}
	return nil
}

// humanBytes formats n in binary units for notes.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "KMGTPE"
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.2f %ciB", v, suffix[i])
}

// keepPlaced handles an output a run put in place and was killed before it
// wrote its sidecar: the file is there without one, and the progress record
// of the temporary file it was renamed from is still there alone. If that
// record covers every tensor, the file's header is the plan's and its bytes
// hash to the records, the output is kept (Skip), with the sidecar it
// lacked, and the record goes.
func keepPlaced(ctx context.Context, in *gguf.Model, outs []Output, i int, size int64, header []byte, plan []TensorRecord,
	temps []gguf.TempFile, buf []byte, note func(string, ...any)) (bool, error) {
	o := &outs[i]
	if _, err := os.Stat(SidecarPath(o.Path)); !errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if st, err := os.Stat(o.Path); err != nil || st.Size() != size {
		return false, nil
	}
	for _, t := range temps {
		tmp, ok := strings.CutSuffix(t.Path, ".progress")
		if !ok || !stale(t) {
			continue
		}
		if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
			continue // its temporary file is there: an ordinary resume
		}
		hdr, recs, err := readJournal(t.Path)
		if err != nil || hdr.File != filepath.Base(o.Path) || hdr.Size != size || len(recs) != len(plan) {
			continue
		}
		r, _ := resumableFrom(o.Path, recs, header, plan)
		if r == nil || r.Done != len(plan) {
			continue
		}
		if err := verifyDone(ctx, in, *o, r, buf, note); err != nil {
			return false, err
		}
		if r.Done != len(plan) {
			continue
		}
		set, err := planSet(in, outs)
		if err != nil {
			return false, err
		}
		hh, err := hashHeader(o.Path, dataOffset(recs, size))
		if err != nil {
			return false, err
		}
		sc := &Sidecar{Schema: SidecarSchema, File: filepath.Base(o.Path), Size: size, Tensors: r.records, Header: hh, Set: set}
		if err := writeSidecar(o.Path, sc); err != nil {
			return false, err
		}
		os.Remove(t.Path)
		// The sidecar the run was renaming when it was killed.
		if ts, err := gguf.TempFiles(SidecarPath(o.Path)); err == nil {
			for _, st := range ts {
				if stale(st) {
					os.Remove(st.Path)
				}
			}
		}
		o.Skip = true
		note("kept %s: complete, put in place by the interrupted run before it wrote the sidecar (now written)", o.Path)
		return true, nil
	}
	return false, nil
}

// removeOrphanRecords removes the stale progress records of path's
// temporary files that are gone: a run killed after it put the file in
// place and wrote its sidecar, before it removed the record.
func removeOrphanRecords(path string) {
	temps, err := gguf.TempFiles(path)
	if err != nil {
		return
	}
	for _, t := range temps {
		tmp, ok := strings.CutSuffix(t.Path, ".progress")
		if !ok || !stale(t) {
			continue
		}
		if _, err := os.Lstat(tmp); errors.Is(err, os.ErrNotExist) {
			os.Remove(t.Path)
		}
	}
}
