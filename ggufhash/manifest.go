package ggufhash

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Verdict is what a manifest says of one digest.
type Verdict uint8

const (
	NotFound Verdict = iota // no line of that kind and name
	Mismatch                // the first such line has another digest
	OK                      // the first such line has this digest
)

func (v Verdict) String() string {
	switch v {
	case NotFound:
		return "Not Found"
	case Mismatch:
		return "Mismatch"
	case OK:
		return "Ok"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Status is the outcome of a run, with llama-gguf-hash's exit codes.
type Status int

const (
	Success Status = iota
	Failure        // a digest differs from the manifest (also a generic failure)
	// StatusMismatch is defined by llama-gguf-hash but never returned: a
	// mismatch gives Failure.
	StatusMismatch
	MissingEntry  // the manifest has no entry for a file nor any of its tensors
	UnknownHash   // the manifest has no line of a known kind
	ManifestError // the manifest cannot be read
)

var statusNames = [...]string{"Success", "Failure", "Mismatch", "Manifest Missing Entry", "Manifest Unknown Hash", "Manifest File Error"}

// String is llama-gguf-hash's name for s, as in its last line of a check.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// entry is one usable manifest line.
type entry struct {
	kind      string
	sum, name string
}

// Manifest is a manifest as llama-gguf-hash reads it: lines of
// whitespace-separated words KIND SUM NAME, anything after the third word
// ignored (so a check's output is a manifest too).
type Manifest struct {
	entries []entry
	kinds   Kinds
	first   map[[2]string]int // kind and name -> the first entry's index
}

// isSpace is C's isspace in the "C" locale, the separator of
// std::istream's >>.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// words splits line into at most n whitespace-separated words.
func words(line []byte, n int) []string {
	var ws []string
	for len(ws) < n {
		i := 0
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		ws = append(ws, string(line[i:j]))
		line = line[j:]
	}
	return ws
}

// ReadManifest reads a manifest. Lines that are not entries are skipped, as
// llama-gguf-hash skips them; a line's first word alone, if a kind's name,
// counts for Kinds.
func ReadManifest(r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			m.add(bytes.TrimSuffix(line, []byte{'\n'}))
		}
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ggufhash: reading manifest: %w", err)
		}
	}
}

func (m *Manifest) add(line []byte) {
	ws := words(line, 3)
	if len(ws) == 0 {
		return
	}
	if k, ok := ParseKind(ws[0]); ok {
		m.kinds |= 1 << k
	}
	if len(ws) == 3 {
		if m.first == nil {
			m.first = map[[2]string]int{}
		}
		key := [2]string{ws[0], ws[2]}
		if _, dup := m.first[key]; !dup {
			m.first[key] = len(m.entries)
		}
		m.entries = append(m.entries, entry{ws[0], ws[1], ws[2]})
	}
}

// Kinds returns the kinds of digest the manifest names.
func (m *Manifest) Kinds() Kinds { return m.kinds }

// Check looks sum up: the first line with kind k and this name decides.
// (A manifest of a big model has tens of thousands of lines, each looked
// up once: by an index, not a scan.)
func (m *Manifest) Check(k Kind, sum, name string) Verdict {
	i, ok := m.first[[2]string{k.String(), name}]
	switch {
	case !ok:
		return NotFound
	case m.entries[i].sum == sum:
		return OK
	}
	return Mismatch
}

// tally is what llama-gguf-hash records while checking one file.
type tally struct {
	tensorFound, tensorBad, fileFound, fileBad bool
}

func (t *tally) status() Status {
	switch {
	case !t.fileFound && !t.tensorFound:
		return MissingEntry // the wrong manifest?
	case t.tensorBad || t.fileBad:
		return Failure
	}
	// Without a file entry, every tensor entry found and right is enough;
	// with one, missing tensor entries do not matter.
	return Success
}

// Checker checks Results against a Manifest and tallies the verdicts per
// file the way llama-gguf-hash does for its one file. Over several files,
// the worst status wins (Failure, then MissingEntry).
//
// llama-gguf-hash checks a uuid against the manifest's sha256 line of the
// file (it looks it up under the wrong kind), so it can never confirm one;
// Checker compares a uuid with the uuid line.
type Checker struct {
	m     *Manifest
	files map[string]*tally
}

// NewChecker returns a Checker against m.
func NewChecker(m *Manifest) *Checker {
	return &Checker{m: m, files: map[string]*tally{}}
}

// Check returns the verdict on r's digest of kind k and records it.
func (c *Checker) Check(r *Result, k Kind) Verdict {
	v := c.m.Check(k, r.Sums.Text(k), r.Name())
	t := c.files[r.File]
	if t == nil {
		t = &tally{}
		c.files[r.File] = t
	}
	if v != NotFound {
		bad := v == Mismatch
		if r.Tensor != "" {
			t.tensorFound = true
			t.tensorBad = t.tensorBad || bad
		} else {
			t.fileFound = true
			t.fileBad = t.fileBad || bad
		}
	}
	return v
}

// Status returns the outcome over every file checked so far.
func (c *Checker) Status() Status {
	worst := Success
	for _, t := range c.files {
		switch s := t.status(); {
		case s == Failure:
			return Failure
		case s == MissingEntry:
			worst = MissingEntry
		}
	}
	return worst
}
