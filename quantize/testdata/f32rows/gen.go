//go:build ignore

// Command gen writes this folder's input rows (input.f32, imatrix.f32) and,
// with -rq, the reference's outputs for them (reference.tsv): one call of
// the reference harness per type gquant writes, without and with the
// importance vector, and the digest of each row group of its output. See
// README.md; from the repository root:
//
//	go run quantize/testdata/f32rows/gen.go -rq /tmp/f32z/rqzen4
//
// Without -rq it only (re)writes the inputs, which come from a fixed seed:
// running it again gives the same bytes.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

const (
	rows, cols = 64, 1024
	dir        = "quantize/testdata/f32rows"
)

func main() {
	rq := flag.String("rq", "", "the reference harness (rq TYPEID COLS IN.f32 OUT.bin [IMAT.f32]); without it only the inputs are written")
	types := flag.String("types", "", "comma-separated types to make (default: every type gquant writes); others are kept from reference.tsv")
	jobs := flag.Int("j", 2, "harness runs at a time")
	flag.Parse()
	x, im := inputs()
	write(filepath.Join(dir, "input.f32"), testrows.Float32Bytes(x))
	write(filepath.Join(dir, "imatrix.f32"), testrows.Float32Bytes(im))
	if *rq == "" {
		return
	}
	if err := reference(*rq, *types, *jobs); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// inputs returns the rows and the importance vector. Every value has a full
// float32 mantissa (none is bf16- or f16-exact, apart from the zeros and the
// integers of the dequantized-looking rows), so that sums of x*x round
// differently fused and unfused. Row r follows recipe r%8:
//
//	0 normal (sigma 0.02)
//	1 Student-t with 3 degrees of freedom (heavy tails)
//	2 normal with an outlier every 97th column
//	3 what a q4_K-like dequantization gives: d*sc*q - dmin*m per 32 values
//	4 blocks of 16 with only two distinct values (exact fits, where the
//	  errors compared are rounding noise)
//	5 normal, sigma 10
//	6 normal, sigma 1e-4
//	7 what an iq4_xs dequantization gives: d*(scale-32)*value per 32
func inputs() (x, im []float32) {
	g := rand.New(rand.NewPCG(0xf32, 0x5eed))
	x = make([]float32, rows*cols)
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		switch r % 8 {
		case 0:
			for i := range row {
				row[i] = float32(0.02 * g.NormFloat64())
			}
		case 1:
			for i := range row {
				chi := 0.0
				for range 3 {
					n := g.NormFloat64()
					chi += n * n
				}
				row[i] = float32(0.01 * g.NormFloat64() / math.Sqrt(chi/3))
			}
		case 2:
			for i := range row {
				row[i] = float32(0.015 * g.NormFloat64())
				if i%97 == 13 {
					row[i] = float32(0.5 + 0.5*g.Float64())
					if g.IntN(2) == 0 {
						row[i] = -row[i]
					}
				}
			}
		case 3:
			for b := 0; b < cols/32; b++ {
				d := f16(float32(0.001 + 0.002*g.Float64()))
				dmin := f16(float32(0.001 + 0.003*g.Float64()))
				sc := float32(1 + g.IntN(63))
				m := float32(g.IntN(64))
				for i := range 32 {
					q := float32(g.IntN(16))
					row[32*b+i] = float32(d*sc*q) - float32(dmin*m)
				}
			}
		case 4:
			for b := 0; b < cols/16; b++ {
				a := float32(0.03 * g.NormFloat64())
				c := float32(0.03 * g.NormFloat64())
				for i := range 16 {
					if g.IntN(2) == 0 {
						row[16*b+i] = a
					} else {
						row[16*b+i] = c
					}
				}
			}
		case 5:
			for i := range row {
				row[i] = float32(10 * g.NormFloat64())
			}
		case 6:
			for i := range row {
				row[i] = float32(1e-4 * g.NormFloat64())
			}
		case 7:
			iq4 := [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
			for b := 0; b < cols/256; b++ {
				d := f16(float32(0.0001 + 0.0002*g.Float64()))
				for ib := range 8 {
					dl := d * float32(g.IntN(64)-32)
					for i := range 32 {
						row[256*b+32*ib+i] = dl * iq4[g.IntN(16)]
					}
				}
			}
		}
	}
	im = make([]float32, cols)
	for i := range im {
		im[i] = float32(math.Exp(g.NormFloat64()))
		if i%61 == 7 {
			im[i] = 0
		}
	}
	return x, im
}

// f16 rounds v to the nearest float16 (v well inside its range).
func f16(v float32) float32 {
	e := math.Floor(math.Log2(math.Abs(float64(v))))
	q := math.Ldexp(1, int(e)-10)
	return float32(math.RoundToEven(float64(v)/q) * q)
}

// A refCase is one harness run.
type refCase struct {
	typ     formats.Type
	imatrix bool
	line    string // the reference.tsv line, or a comment on why there is none
}

func reference(rq, only string, jobs int) error {
	keep := map[string]string{}
	if only != "" {
		old, err := os.ReadFile(filepath.Join(dir, "reference.tsv"))
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(old), "\n") {
			if f := strings.Split(l, "\t"); len(f) == 3 && !strings.HasPrefix(l, "#") {
				keep[f[0]+"\t"+f[1]] = l
			}
		}
	}
	want := map[string]bool{}
	for _, t := range strings.Split(only, ",") {
		want[t] = true
	}
	tmp, err := os.MkdirTemp("", "f32rows")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var cases []*refCase
	for _, t := range quantize.SupportedTypes() {
		info, _ := t.Info()
		for _, imat := range []bool{false, true} {
			if (!imat && info.NeedsImatrix) || (imat && info.ImatrixFails) {
				continue
			}
			c := &refCase{typ: t, imatrix: imat}
			if only != "" && !want[t.String()] {
				c.line = keep[t.String()+"\t"+variant(imat)]
			}
			cases = append(cases, c)
		}
	}
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, c := range cases {
		if c.line != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := filepath.Join(tmp, fmt.Sprintf("%d.bin", i))
			args := []string{fmt.Sprint(uint32(c.typ)), fmt.Sprint(cols), filepath.Join(dir, "input.f32"), out}
			if c.imatrix {
				args = append(args, filepath.Join(dir, "imatrix.f32"))
			}
			cmd := exec.Command(rq, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				c.line = fmt.Sprintf("# %s\t%s\tthe reference fails: %v %s", c.typ, variant(c.imatrix), err, strings.TrimSpace(stderr.String()))
				return
			}
			b, err := os.ReadFile(out)
			rs, _ := c.typ.RowSize(cols)
			if err != nil || len(b) != rows*int(rs) {
				c.line = fmt.Sprintf("# %s\t%s\tthe reference wrote %d bytes, want %d (%v)", c.typ, variant(c.imatrix), len(b), rows*int(rs), err)
				return
			}
			c.line = fmt.Sprintf("%s\t%s\t%s", c.typ, variant(c.imatrix), strings.Join(testrows.GroupDigests(b, rows/c.typ.Interleave()), " "))
		}()
	}
	wg.Wait()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Reference outputs for input.f32 (%d rows of %d) without and with imatrix.f32, made by gen.go\n", rows, cols)
	fmt.Fprintf(&buf, "# (README.md): TYPE, none|imatrix, then the digest (testrows.Digest) of each row group.\n")
	fmt.Fprintf(&buf, "input\t%s\n", testrows.Digest(append(mustRead("input.f32"), mustRead("imatrix.f32")...)))
	for _, c := range cases {
		fmt.Fprintln(&buf, c.line)
	}
	write(filepath.Join(dir, "reference.tsv"), buf.Bytes())
	return nil
}

func variant(imatrix bool) string {
	if imatrix {
		return "imatrix"
	}
	return "none"
}

func mustRead(name string) []byte {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		panic(err)
	}
	return b
}
