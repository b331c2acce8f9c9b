package stressrows

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
)

// ReadTSV returns the tab-separated fields of the lines of the file at path
// that are neither empty nor comments (starting with '#'); each must have
// fields fields.
func ReadTSV(path string, fields int) ([][]string, error) {
	var out [][]string
	err := scanTSV(path, fields, func(_ int, f []string) error {
		out = append(out, f)
		return nil
	})
	return out, err
}

// A Case is one line of a reference set's manifest.tsv.
type Case struct {
	Type   formats.Type // the line's first field
	Row    int          // the first row of the group the line's hash covers
	Fields []string     // all the line's fields
}

// ReadManifest reads a manifest whose lines have fields fields (see
// ReadTSV), the first a type and the one at index row a row number.
func ReadManifest(path string, fields, row int) ([]Case, error) {
	var cases []Case
	err := scanTSV(path, fields, func(n int, f []string) error {
		typ, err := formats.ParseType(f[0])
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		r, err := strconv.Atoi(f[row])
		if err != nil {
			return fmt.Errorf("%s:%d: row: %w", path, n, err)
		}
		cases = append(cases, Case{Type: typ, Row: r, Fields: f})
		return nil
	})
	return cases, err
}

// scanTSV calls line with the number and the fields of each line that
// ReadTSV returns.
func scanTSV(path string, fields int, line func(n int, f []string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.Split(s, "\t")
		if len(f) != fields {
			return fmt.Errorf("%s:%d: %d fields, want %d", path, n, len(f), fields)
		}
		if err := line(n, f); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadF32 returns the little-endian float32 values of the file at path (a
// set's input.f32 or imatrix.f32), failing t where it cannot be read.
func ReadF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return golden.F32(b)
}

// WriteF32 writes v to the file at path as little-endian float32 values.
func WriteF32(path string, v []float32) error {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return os.WriteFile(path, b, 0o644)
}
