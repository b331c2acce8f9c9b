package pipeline

import (
	"context"
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

// Checking a set of outputs written by several runs (issue 22): every
// shard present, their split keys consistent, each shard's header the
// plan's when the plan is known, and the tensor bytes those the sidecars
// recorded, where there are sidecars.

// SetCheck is the verdict of VerifySet on a file or a set of shards.
type SetCheck struct {
	// Count is the number of files of the set; Files lists them in order.
	Count int
	Files []FileCheck
	// Tensors counts the tensors of the files present.
	Tensors int
	// Problems are the set's own (not one file's); Notes say what was not
	// checked or is worth knowing.
	Problems []string
	Notes    []string
}

// OK reports whether the set and every file passed.
func (c *SetCheck) OK() bool {
	if len(c.Problems) > 0 {
		return false
	}
	for _, f := range c.Files {
		if len(f.Problems) > 0 {
			return false
		}
	}
	return true
}

// FileCheck is the verdict on one file of a set.
type FileCheck struct {
	// Path is the file, Index its number in the set from 1.
	Path  string
	Index int
	// Present: the file exists; Bytes and Tensors are its size and tensor
	// count (zero when absent or unreadable).
	Present bool
	Bytes   int64
	Tensors int
	// Header is "ok" when the header is the plan's byte for byte (or,
	// without a plan, hashes to its sidecar's record), "differs" when it is
	// not, "" when neither was there to check it against.
	Header string
	// Sidecar is "ok" when the sidecar agrees with the file and every
	// tensor's bytes hash to its record, "absent", or "differs".
	Sidecar string
	// Hashed is the count of tensors whose bytes were hashed and matched.
	Hashed int
	// InputsHashed counts the input tensors re-hashed as recorded
	// (VerifyOptions.Inputs).
	InputsHashed int
	Problems     []string
	Notes        []string

	set string // its sidecar's Set, "" when it has none
	// notPlans: its header or its sidecar's records are not the plan's,
	// which makes the set its sidecar names another than the plan's.
	notPlans bool
}

func (f *FileCheck) problem(format string, args ...any) {
	f.Problems = append(f.Problems, fmt.Sprintf(format, args...))
}

// VerifySet checks a file or a set of shards. Without a plan, path names
// the file or any shard of the set (NAME-0000K-of-0000N.gguf), and the set
// is checked as such: every shard present and readable, split keys that
// agree with the names and each other, no tensor twice, sizes that match
// the headers, and each sidecar present against its file, re-hashing the
// tensor bytes. With a plan (of the model in, the input of the run that
// wrote the set), the files are the plan's outputs, those it leaves to
// other runs (Output.Elsewhere) excepted, and each must also have exactly
// the plan's header and size, and a sidecar, where there is one, the
// plan's records. The returned error is only ctx's; everything found is
// in the SetCheck.
func VerifySet(ctx context.Context, path string, in *gguf.Model, plan *Plan) (*SetCheck, error) {
	return VerifySetWith(ctx, path, in, plan, VerifyOptions{})
}

// VerifyOptions adds checks to VerifySetWith.
type VerifyOptions struct {
	// Inputs, with a plan, also re-hashes each input tensor a sidecar
	// records and compares it with the record's input hash: a file made
	// from other input data (a machine's damaged copy of the model) is
	// caught even where its bytes are the ones its sidecar records. It
	// reads the input tensors the checked files were made from.
	Inputs bool
}

// VerifySetWith is VerifySet with the checks of opts.
func VerifySetWith(ctx context.Context, path string, in *gguf.Model, plan *Plan, opts VerifyOptions) (*SetCheck, error) {
	c := &SetCheck{}
	var paths []string
	var outs []int // plan outputs, by file
	if plan != nil {
		c.Count = len(plan.Outputs)
		for i, o := range plan.Outputs {
			if !o.Elsewhere {
				paths = append(paths, o.Path)
				outs = append(outs, i)
			}
		}
		if len(paths) < c.Count {
			c.Notes = append(c.Notes, fmt.Sprintf("%d of %d files checked (the others are other parts')", len(paths), c.Count))
		}
	} else if prefix, _, n, ok := gguf.ParseShardPath(path); ok {
		c.Count = n
		for i := range n {
			paths = append(paths, gguf.ShardPath(prefix, i, n))
		}
	} else {
		c.Count = 1
		paths = []string{path}
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			// The OUT a split run was given names no file: its shards do.
			shards, _ := filepath.Glob(strings.TrimSuffix(path, ".gguf") + "-[0-9]*-of-[0-9]*.gguf")
			if len(shards) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%s does not exist, but %s does: give a shard to check a set", path, shards[0]))
			}
		}
	}
	seen := map[string]string{} // tensor name -> file
	splitTensors := map[int64][]string{}
	unread := 0 // files present whose header could not be read
	buf := make([]byte, 8<<20)
	for k, p := range paths {
		fc := FileCheck{Path: p, Index: k + 1}
		if plan != nil {
			fc.Index = outs[k] + 1
		}
		var o *Output
		var size int64
		if plan != nil {
			o, size = &plan.Outputs[outs[k]], plan.Sizes[outs[k]]
		}
		h, err := checkFile(&fc, c.Count, o, size)
		if err == nil && h == nil && fc.Present {
			unread++
		}
		if err == nil && h != nil {
			c.Tensors += len(h.Tensors)
			for _, t := range h.Tensors {
				if other, dup := seen[t.Name]; dup {
					fc.problem("tensor %s is in %s too", t.Name, other)
				}
				seen[t.Name] = p
			}
			if n, present, err := h.Metadata.LookupInt(gguf.KeySplitTensorsCount); err == nil && present {
				splitTensors[n] = append(splitTensors[n], p)
			}
			err = checkSidecar(ctx, &fc, h, in, o, buf, opts)
		}
		if err != nil {
			return nil, err
		}
		c.Files = append(c.Files, fc)
	}
	want := ""
	if plan != nil && in != nil {
		var err error
		if want, err = planSet(in, plan.Outputs); err != nil {
			return nil, err
		}
	}
	checkSets(c, want)
	if len(splitTensors) > 1 {
		c.Problems = append(c.Problems, fmt.Sprintf("the shards disagree on %s: %v", gguf.KeySplitTensorsCount, splitTensors))
	} else if c.Count > 1 && len(c.Files) == c.Count && allPresent(c.Files) && unread == 0 {
		// A file whose header could not be read (cut short) counts no
		// tensors: its own problem says so, and the sum would only repeat it.
		for n := range splitTensors {
			if n != int64(c.Tensors) {
				c.Problems = append(c.Problems, fmt.Sprintf("%s is %d, the shards hold %d tensors", gguf.KeySplitTensorsCount, n, c.Tensors))
			}
		}
	}
	if len(paths) > 0 {
		if prefix, _, n, ok := gguf.ParseShardPath(paths[0]); ok {
			if other := shardsOfOtherCounts(prefix, n); len(other) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%d file(s) with the same prefix belong to a set of another size: %v", len(other), other))
			}
		}
	}
	return c, nil
}

func allPresent(files []FileCheck) bool {
	for _, f := range files {
		if !f.Present {
			return false
		}
	}
	return true
}

// checkFile reads the header of the file of fc and checks its split keys,
// its size and, given the plan's output o of size bytes, that it is the
// plan's header byte for byte. It returns the header, nil when the file is
// missing or unreadable (a problem says so).
func checkFile(fc *FileCheck, count int, o *Output, size int64) (*gguf.File, error) {
	// Temporary files beside it, present or not, tell of a run that
	// stopped (or still writes): a complete one may be its new file.
	if temps, err := gguf.TempFiles(fc.Path); err == nil {
		for _, t := range temps {
			state := "left by an interrupted run"
			if t.Live {
				state = "still being written"
			}
			fc.Notes = append(fc.Notes, fmt.Sprintf("%s (%d bytes) is %s", t.Path, t.Size, state))
		}
	}
	f, fileSize, err := gguf.OpenRegular(fc.Path)
	if errors.Is(err, os.ErrNotExist) {
		fc.problem("missing")
		return nil, nil
	}
	if err != nil {
		fc.problem("%v", err)
		return nil, nil
	}
	defer f.Close()
	fc.Present, fc.Bytes = true, fileSize
	h, err := gguf.Read(f, fileSize)
	if err != nil {
		fc.problem("%v", err)
		return nil, nil
	}
	fc.Tensors = len(h.Tensors)
	if n := len(h.Tensors); n > 0 {
		last := h.Tensors[n-1]
		for _, t := range h.Tensors {
			if t.Offset > last.Offset {
				last = t
			}
		}
		if end := h.DataOffset + last.Offset + alignUp(last.Size, h.Alignment); end != fileSize {
			fc.problem("%d bytes, its header describes %d", fileSize, end)
		}
	}
	checkSplitKeys(fc, h.Metadata, count)
	if o == nil {
		return h, nil
	}
	infos := o.Headers()
	want, err := gguf.EncodeHeader(o.Metadata, infos)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
		fc.problem("%v", err)
		return h, nil
	}
	fc.Header = "ok"
	if fileSize != size || !slices.Equal(got, want) {
		fc.Header = "differs"
		fc.notPlans = true
		why := CheckExisting(fc.Path, *o, size)
		if why == nil {
			why = errors.New("it changed while it was read")
		}
		fc.problem("not the plan's header: %v", why)
	}
	return h, nil
}

// checkSplitKeys checks a file's split keys against its place in a set of
// count files.
func checkSplitKeys(fc *FileCheck, md gguf.Metadata, count int) {
	no, hasNo, err1 := md.LookupUint(gguf.KeySplitNo)
	n, hasCount, err2 := md.LookupUint(gguf.KeySplitCount)
	if err := errors.Join(err1, err2); err != nil {
		fc.problem("%v", err)
		return
	}
	switch {
	case count == 1 && !hasCount:
	case count == 1 && n <= 1 && (!hasNo || no == 0):
	case count == 1:
		fc.problem("%s is %d for a single file", gguf.KeySplitCount, n)
	case !hasCount || !hasNo:
		fc.problem("no split keys (%s, %s) in a shard of %d", gguf.KeySplitNo, gguf.KeySplitCount, count)
	case n != uint64(count):
		fc.problem("%s is %d, the set has %d files", gguf.KeySplitCount, n, count)
	case no != uint64(fc.Index-1):
		fc.problem("%s is %d (shard %d; it counts from 0), where shard %d of the set has %d", gguf.KeySplitNo, no, no+1, fc.Index, fc.Index-1)
	}
}

// checkSidecar checks the sidecar of the file of fc, whose header is h:
// it must describe this file (name, size, tensors at their offsets), with
// the plan's records for output o when given, and every tensor's bytes
// must hash to its record.
func checkSidecar(ctx context.Context, fc *FileCheck, h *gguf.File, in *gguf.Model, o *Output, buf []byte, opts VerifyOptions) error {
	sc, err := ReadSidecar(fc.Path)
	if errors.Is(err, os.ErrNotExist) {
		fc.Sidecar = "absent"
		if opts.Inputs {
			fc.Notes = append(fc.Notes, "no sidecar: neither the tensor bytes nor the input tensors (--inputs) are checked")
		} else {
			fc.Notes = append(fc.Notes, "no sidecar: the tensor bytes are not checked")
		}
		return nil
	}
	fc.Sidecar = "differs"
	if err != nil {
		fc.problem("%v", err)
		return nil
	}
	fc.set = sc.Set
	switch {
	case sc.File != filepath.Base(fc.Path):
		fc.problem("its sidecar describes %s", sc.File)
		return nil
	case sc.Size != fc.Bytes:
		fc.problem("its sidecar describes %d bytes, the file has %d", sc.Size, fc.Bytes)
		return nil
	case len(sc.Tensors) != len(h.Tensors):
		fc.problem("its sidecar describes %d tensors, the file has %d", len(sc.Tensors), len(h.Tensors))
		return nil
	}
	for i, t := range h.Tensors {
		r := sc.Tensors[i]
		if r.Name != t.Name || r.Offset != h.DataOffset+t.Offset || r.Size != t.Size {
			fc.problem("its sidecar has %s at %d (%d bytes) where the file has %s at %d (%d bytes)",
				r.Name, r.Offset, r.Size, t.Name, h.DataOffset+t.Offset, t.Size)
			return nil
		}
	}
	if o != nil && in != nil {
		recs, _, err := planRecords(in, *o)
		if err != nil {
			return err
		}
		for i := range recs {
			if why := sc.Tensors[i].differs(&recs[i]); why != "" {
				fc.notPlans = true
				fc.problem("its sidecar says %s", why)
				return nil
			}
		}
	}
	if sc.Header != "" {
		switch hh, err := hashHeader(fc.Path, h.DataOffset); {
		case err != nil:
			fc.problem("%v", err)
			return nil
		case hh != sc.Header:
			fc.Header = "differs"
			fc.problem("its header (metadata and tensor infos) is not the one its sidecar recorded")
			return nil
		case fc.Header == "":
			fc.Header = "ok"
		}
	}
	f, _, err := gguf.OpenRegular(fc.Path)
	if err != nil {
		fc.problem("%v", err)
		return nil
	}
	defer f.Close()
	for _, r := range sc.Tensors {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := xxhash.New()
		if _, err := io.CopyBuffer(d, io.NewSectionReader(f, r.Offset, r.Size), buf); err != nil {
			fc.problem("reading %s: %v", r.Name, err)
			return nil
		}
		if hashString(d.Sum64()) != r.Output {
			fc.problem("the bytes of %s are not the ones its sidecar recorded", r.Name)
			return nil
		}
		fc.Hashed++
	}
	if opts.Inputs && o != nil && in != nil {
		for i, r := range sc.Tensors {
			if err := ctx.Err(); err != nil {
				return err
			}
			sum, err := hashTensor(in, o.Tensors[i].Source, buf)
			if err != nil {
				fc.problem("reading the input tensor of %s: %v", r.Name, err)
				return nil
			}
			if hashString(sum) != r.Input {
				fc.problem("%s was made from other input data than the input's %s holds (input_xxh64 %s, it hashes to %s)", r.Name, in.Tensors[o.Tensors[i].Source].Name, r.Input, hashString(sum))
				return nil
			}
			fc.InputsHashed++
		}
	}
	fc.Sidecar = "ok"
	return nil
}

func alignUp(n, a int64) int64 {
	if a <= 0 {
		return n
	}
	return (n + a - 1) / a * a
}

// writtenTogether handles, for checkSets with a plan whose set is want, the
// files whose sidecars all name one set, not the plan's, where some of them
// differ from the plan by themselves (a header, a sidecar's records, which
// the set's hash covers; not bytes changed since): their
// set is another because those files are, as when one machine of a job
// array spelt the importance matrix's path otherwise, which only the first
// shard's header records. Those files' own problems say what differs; the
// others, the plan's to the byte, were written with them, by the same run,
// and get a note, not the problem "a file of another run", which named
// every file of the set for one key of one header. It reports whether it
// handled the set.
func writtenTogether(c *SetCheck, want string) bool {
	set, failing := "", ""
	for _, f := range c.Files {
		switch {
		case f.set == "":
			continue
		case set == "":
			set = f.set
		case f.set != set:
			return false // files of two runs: checkSets says so
		}
		if f.notPlans && failing == "" {
			failing = f.Path
		}
	}
	if set == "" || set == want || failing == "" {
		return false
	}
	for i := range c.Files {
		if f := &c.Files[i]; f.set != "" && len(f.Problems) == 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("its sidecar names the set of files it was written with, which is not this plan's because %s is not the plan's (see there)", failing))
		}
	}
	return true
}

// shardsOfOtherCounts lists the files of prefix's directory that are shards
// of prefix with another count than n.
func shardsOfOtherCounts(prefix string, n int) []string {
	entries, err := os.ReadDir(filepath.Dir(prefix))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		path := filepath.Join(filepath.Dir(prefix), e.Name())
		if p, _, m, ok := gguf.ParseShardPath(path); ok && p == prefix && m != n {
			out = append(out, path)
		}
	}
	return out
}

// checkSets adds problems when the files may not belong together, though
// each looks consistent by itself (files of two runs, as a set whose commit
// stopped part way under --force leaves): their sidecars name different
// sets (Sidecar.Set), or not the plan's (want, "" without a plan), or,
// without a plan, one file has no sidecar while others name a set (a run
// killed while putting its files in place removes a file's old sidecar
// before replacing it).
func checkSets(c *SetCheck, want string) {
	if want != "" && writtenTogether(c, want) {
		return
	}
	first := -1
	for i := range c.Files {
		f := &c.Files[i]
		switch {
		case f.set == "":
		case want != "" && f.set != want:
			f.problem("its sidecar names another set of files than this plan's: a file of another run")
		case first < 0:
			first = i
		case f.set != c.Files[first].set:
			c.Problems = append(c.Problems, fmt.Sprintf("%s and %s were not written together (their sidecars name different sets of files): the set mixes files of two runs",
				c.Files[first].Path, f.Path))
			return
		}
	}
	if first < 0 || want != "" {
		return // with a plan, each header was checked against it
	}
	for i := range c.Files {
		if f := &c.Files[i]; f.Present && f.Sidecar == "absent" {
			f.problem("it has no sidecar where the set's others name their set: it may be a file of another run (a run killed while putting files in place?)")
		}
	}
}
