// Command refdiff quantizes rows built to tie with gquant and with the
// reference build's refquant (one ggml_quantize_chunk call per run, see
// /work/refbuild/README) and reports every row that differs: a
// differential check beyond the golden sets, for a machine that has the
// reference built.
//
//	go run ./quantize/internal/testrows/refdiff -refquant /work/refbuild/refquant -seed 1
//
// Six kinds of 64 rows of 512 (grids of eighths, sparse grids of halves,
// small integers times a power of two per block, bf16 normals with and
// without an outlier per row, multiples of 1/128) go through every type
// without importance data and with three vectors (ones, quarters 1/4..2,
// bf16 exponentials). Left out: the types that refquant does not build as
// the golden data was built with an importance vector (iq1_s, iq1_m, iq2_s
// and their r4 forms; see iquant's refquantDiffers), and -nokt leaves out
// the slow trellis types. Expected: iq1_m and iq1_m_r4 can differ in the
// first rows of a call, where the reference reads an uninitialised shift
// (gquant starts from 0).
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize"
)

const rows, cols = 64, 512

func main() {
	refquant := flag.String("refquant", "/work/refbuild/refquant", "the reference's refquant program")
	seed := flag.Uint64("seed", 1, "seed of the rows")
	noKT := flag.Bool("nokt", false, "leave out iq1_kt .. iq4_kt (slow in both tools)")
	only := flag.String("types", "", "comma-separated type names to check (default: all)")
	flag.Parse()
	keep := func(formats.Type) bool { return true }
	if *only != "" {
		want := map[string]bool{}
		for _, name := range strings.Split(*only, ",") {
			want[name] = true
		}
		keep = func(t formats.Type) bool { return want[t.String()] }
	}
	n, bad, err := run(*refquant, *seed, *noKT, keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "refdiff:", err)
		os.Exit(2)
	}
	fmt.Printf("seed %d: %d cases, %d differ\n", *seed, n, bad)
	if bad > 0 {
		os.Exit(1)
	}
}

// bf16 rounds v to the nearest bf16, ties to even.
func bf16(v float32) float32 {
	b := math.Float32bits(v)
	return math.Float32frombits((b + 0x7fff + (b>>16)&1) &^ 0xffff)
}

func rowsOfKind(kind int, rng *rand.Rand) []float32 {
	x := make([]float32, rows*cols)
	for i := range x {
		switch kind {
		case 0:
			x[i] = float32(rng.IntN(33)-16) / 8
		case 1:
			x[i] = bf16(float32(rng.NormFloat64() * 0.02))
		case 2:
			if rng.IntN(8) == 0 {
				x[i] = float32(rng.IntN(9)-4) / 2
			}
		case 3:
			x[i] = float32(rng.IntN(15)-7) * float32(math.Ldexp(1, (i/32)%7-3))
		case 4:
			x[i] = bf16(float32(rng.NormFloat64() * 0.05))
			if i%cols == (i/cols*37)%cols {
				x[i] = bf16(float32(rng.NormFloat64() * 2))
			}
		default:
			x[i] = float32(rng.IntN(257)-128) / 128
		}
	}
	return x
}

func weightsOfKind(kind int, rng *rand.Rand) []float32 {
	if kind == 0 {
		return nil
	}
	w := make([]float32, cols)
	for i := range w {
		switch kind {
		case 1:
			w[i] = 1
		case 2:
			w[i] = float32(rng.IntN(8)+1) / 4
		default:
			w[i] = bf16(float32(rng.ExpFloat64() * 0.1))
		}
	}
	return w
}

func float32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// notGoldenWithImatrix are the types refquant does not build as the golden
// data was built, with an importance vector.
var notGoldenWithImatrix = map[formats.Type]bool{
	formats.IQ1_S: true, formats.IQ1_M: true, formats.IQ1_S_R4: true, formats.IQ1_M_R4: true,
	formats.IQ2_S: true, formats.IQ2_S_R4: true,
}

var trellisTypes = map[formats.Type]bool{formats.IQ1_KT: true, formats.IQ2_KT: true, formats.IQ3_KT: true, formats.IQ4_KT: true}

func run(refquant string, seed uint64, noKT bool, keep func(formats.Type) bool) (cases, bad int, err error) {
	dir, err := os.MkdirTemp("", "refdiff")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(seed, 99))
	in, wpath, out := filepath.Join(dir, "in.f32"), filepath.Join(dir, "w.f32"), filepath.Join(dir, "out.bin")
	for kind := 0; kind < 6; kind++ {
		x := rowsOfKind(kind, rng)
		if err := os.WriteFile(in, float32Bytes(x), 0o644); err != nil {
			return cases, bad, err
		}
		for wk := 0; wk < 4; wk++ {
			w := weightsOfKind(wk, rng)
			arg := "-"
			if w != nil {
				arg = wpath
				if err := os.WriteFile(wpath, float32Bytes(w), 0o644); err != nil {
					return cases, bad, err
				}
			}
			for _, t := range quantize.SupportedTypes() {
				info, _ := t.Info()
				switch {
				case w == nil && info.NeedsImatrix, w != nil && (info.ImatrixFails || notGoldenWithImatrix[t]),
					cols%info.BlockSize != 0, noKT && trellisTypes[t], !keep(t):
					continue
				}
				cases++
				ours, qerr := quantize.QuantizeRows(t, rows, cols, x, w)
				os.Remove(out)
				msg, rerr := exec.Command(refquant, t.String(), fmt.Sprint(rows), fmt.Sprint(cols), in, arg, out).CombinedOutput()
				if rerr != nil || qerr != nil {
					if (rerr != nil) != (qerr != nil) {
						fmt.Printf("kind %d weights %d %s: reference: %v %.80q; gquant: %v\n", kind, wk, t, rerr, msg, qerr)
						bad++
					}
					continue
				}
				ref, err := os.ReadFile(out)
				if err != nil {
					return cases, bad, err
				}
				if bytes.Equal(ref, ours) {
					continue
				}
				bad++
				rs := len(ref) / rows
				var differ []int
				for r := 0; r < rows && len(ref) == len(ours); r++ {
					if !bytes.Equal(ref[r*rs:(r+1)*rs], ours[r*rs:(r+1)*rs]) {
						differ = append(differ, r)
					}
				}
				fmt.Printf("kind %d weights %d %s: %d rows differ, first %v\n", kind, wk, t, len(differ), differ[:min(8, len(differ))])
			}
		}
	}
	return cases, bad, nil
}
