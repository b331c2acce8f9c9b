package testrows

import (
	"fmt"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/kernel"
)

// Family is what the comparisons below need of a family package: its
// kernels for given options (with Portable, those calling package kernel's
// portable searches), and a switch that turns off the family's own assembly
// until the returned function restores it.
type Family struct {
	Kernels     func(kernel.Options) kernel.Set
	Portable    func() (restore func())
	HasAssembly bool // whether there is assembly to compare on this CPU and build
}

// Quantize runs the family's kernel for the type named typ (the reference's
// name) over nrows rows of cols values, with the assembly or, with
// portable, without.
func (f Family) Quantize(typ string, src []float32, nrows, cols int, imatrix []float32, portable bool) ([]byte, error) {
	ty, err := formats.ParseType(typ)
	if err != nil {
		return nil, err
	}
	k := f.Kernels(kernel.Options{Portable: portable})[ty]
	if k == nil {
		return nil, fmt.Errorf("testrows: no kernel for %s", typ)
	}
	rs, err := ty.RowSize(int64(cols))
	if err != nil {
		return nil, err
	}
	if portable {
		defer f.Portable()()
	}
	dst := make([]byte, nrows*int(rs))
	return dst, k(dst, src, nrows, cols, imatrix)
}

// CheckFixture checks the family's kernels against the fixture of reference
// outputs at path (see CheckFixture), with the assembly and without.
func (f Family) CheckFixture(t *testing.T, path string) {
	for _, portable := range []bool{false, true} {
		t.Run(fmt.Sprintf("portable=%v", portable), func(t *testing.T) {
			CheckFixture(t, path, func(typ string, src []float32, nrows, cols int, imatrix []float32) ([]byte, error) {
				return f.Quantize(typ, src, nrows, cols, imatrix, portable)
			})
		})
	}
}

// CheckAssemblyMatchesPortable runs PropertyRows(seed, n, 512) through every
// kernel of the family, without an importance vector, with each of
// Imatrices and with two random ones (Weights), once with the assembly and
// once without, and reports each row group where the two differ in any bit.
func (f Family) CheckAssemblyMatchesPortable(t *testing.T, seed uint64, n int) {
	if !f.HasAssembly {
		t.Skip("no assembly on this CPU or build")
	}
	const cols = 512
	rows := PropertyRows(seed, n, cols)
	src := make([]float32, 0, len(rows)*cols)
	for _, r := range rows {
		src = append(src, r.X...)
	}
	imatrices := append([]Imatrix{{Name: "none"}}, Imatrices(cols)...)
	g := New(seed + 1)
	for i := 0; i < 2; i++ {
		w := make([]float32, cols)
		g.Weights(w)
		imatrices = append(imatrices, Imatrix{Name: fmt.Sprintf("random%d", i), W: w})
	}
	for ty := range f.Kernels(kernel.Options{}) {
		for _, im := range imatrices {
			asm, err := f.Quantize(ty.String(), src, len(rows), cols, im.W, false)
			if err != nil {
				t.Fatalf("%s/%s: %v", ty, im.Name, err)
			}
			portable, err := f.Quantize(ty.String(), src, len(rows), cols, im.W, true)
			if err != nil {
				t.Fatalf("%s/%s portable: %v", ty, im.Name, err)
			}
			group := len(asm) / len(rows) * ty.Interleave()
			for off := 0; off < len(asm); off += group {
				if string(asm[off:off+group]) != string(portable[off:off+group]) {
					r := off / group * ty.Interleave()
					t.Errorf("%s/%s: row group from row %d (%s) differs between assembly and portable", ty, im.Name, r, rows[r].Name)
				}
			}
		}
	}
}
