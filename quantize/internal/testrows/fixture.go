package testrows

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

// A Fixture holds reference outputs for FixtureRows: for each type and
// importance vector, a digest of each row group of the reference's bytes.
// Digests instead of bytes keep it small; a test that finds a different
// digest names the rows of that group.
//
// On disk it is text: comment lines starting with '#', a line
// "input <digest>" (InputDigest when it was made), then one line per case,
// "type imatrix digest...", tab-separated, the digests space-separated;
// imatrix is "none" or the Name of one of Imatrices(FixtureCols).
type Fixture struct {
	Input string
	Cases []FixtureCase
}

// FixtureCase is one reference call over all of FixtureRows.
type FixtureCase struct {
	Type    string   // the reference's type name
	Imatrix string   // "none" or an Imatrix name
	Groups  []string // Digest of each row group, in order
}

// Digest is a short digest of b: the first 8 bytes of its SHA-256, in hex.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// GroupDigests splits out into groups equal row groups and digests each.
func GroupDigests(out []byte, groups int) []string {
	d := make([]string, groups)
	n := len(out) / groups
	for i := range d {
		d[i] = Digest(out[i*n : (i+1)*n])
	}
	return d
}

// Float32Bytes is v as little-endian bytes, as the reference's tools read
// float32 files.
func Float32Bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// InputDigest is the digest of FixtureRows and Imatrices(FixtureCols), so
// that a fixture made from other rows is noticed.
func InputDigest() string {
	var b []byte
	for _, r := range FixtureRows() {
		b = append(b, Float32Bytes(r.X)...)
	}
	for _, im := range Imatrices(FixtureCols) {
		b = append(b, im.Name...)
		b = append(b, Float32Bytes(im.W)...)
	}
	return Digest(b)
}

// ImatrixByName returns the weights of the importance vector name of
// Imatrices(FixtureCols), nil for "none".
func ImatrixByName(name string) ([]float32, error) {
	if name == "none" {
		return nil, nil
	}
	for _, im := range Imatrices(FixtureCols) {
		if im.Name == name {
			return im.W, nil
		}
	}
	return nil, fmt.Errorf("testrows: no importance vector %q", name)
}

// ReadFixture parses a fixture.
func ReadFixture(r io.Reader) (*Fixture, error) {
	f := new(Fixture)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		switch {
		case len(fields) == 2 && fields[0] == "input":
			f.Input = fields[1]
		case len(fields) == 3:
			f.Cases = append(f.Cases, FixtureCase{fields[0], fields[1], strings.Fields(fields[2])})
		default:
			return nil, fmt.Errorf("testrows: fixture line %d: want \"input\\tDIGEST\" or \"TYPE\\tIMATRIX\\tDIGESTS\"", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if f.Input == "" {
		return nil, fmt.Errorf("testrows: fixture has no input line")
	}
	return f, nil
}

// Write writes f in the format ReadFixture reads, after the comment lines
// of header.
func (f *Fixture) Write(w io.Writer, header string) error {
	bw := bufio.NewWriter(w)
	for _, l := range strings.Split(strings.TrimSpace(header), "\n") {
		fmt.Fprintf(bw, "# %s\n", l)
	}
	fmt.Fprintf(bw, "input\t%s\n", f.Input)
	for _, c := range f.Cases {
		fmt.Fprintf(bw, "%s\t%s\t%s\n", c.Type, c.Imatrix, strings.Join(c.Groups, " "))
	}
	return bw.Flush()
}

// QuantizeFunc quantizes nrows rows of cols values (src) to the type named
// typ (the reference's name), with importance weights imatrix or nil.
type QuantizeFunc func(typ string, src []float32, nrows, cols int, imatrix []float32) ([]byte, error)

// CheckFixture runs quantize over FixtureRows for every case of the fixture
// file at path and reports, as errors on t, each row group whose digest
// differs from the reference's, naming its rows.
func CheckFixture(t testing.TB, path string, quantize QuantizeFunc) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f, err := ReadFixture(file)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d := InputDigest(); f.Input != d {
		t.Fatalf("%s was made from other rows (input %s, the rows now give %s): remake it (testdata/README.md)", path, f.Input, d)
	}
	rows := FixtureRows()
	src := make([]float32, 0, len(rows)*FixtureCols)
	for _, r := range rows {
		src = append(src, r.X...)
	}
	for _, c := range f.Cases {
		im, err := ImatrixByName(c.Imatrix)
		if err != nil {
			t.Fatal(err)
		}
		out, err := quantize(c.Type, src, len(rows), FixtureCols, im)
		if err != nil {
			t.Errorf("%s/%s: %v", c.Type, c.Imatrix, err)
			continue
		}
		got := GroupDigests(out, len(c.Groups))
		per := len(rows) / len(c.Groups)
		for g, want := range c.Groups {
			if got[g] != want {
				var names []string
				for _, r := range rows[g*per : (g+1)*per] {
					names = append(names, r.Name)
				}
				which := fmt.Sprintf("row %d", g*per)
				if per > 1 {
					which = fmt.Sprintf("rows %d..%d", g*per, (g+1)*per-1)
				}
				t.Errorf("%s/%s: %s (%s) differ from the reference", c.Type, c.Imatrix, which, strings.Join(names, "; "))
			}
		}
	}
}
