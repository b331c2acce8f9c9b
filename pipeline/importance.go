package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/quantize"
)

// importanceSource makes a tensor's importance data one matrix at a time
// from its entry, when the run reaches the matrix: a plan holds no
// importance vectors, so a run's memory for them is one matrix's per piece
// in flight, whatever the size of the importance matrix (an index,
// imatrix.OpenIndex, is read from its file as the run goes). Matrix s is
// what TensorImportance's Data holds for it, bit for bit.
type importanceSource struct {
	entry     *imatrix.Entry
	ne0, mats int64
	// repeat: the entry is one vector, used for every head (MLA attn_v_b).
	repeat bool
	// fix: an all-zero matrix gets uniform importance
	// (quantize.FailsOnZeroImportance).
	fix bool
	// hash is hashImatrix of the whole data, computed by Build.
	hash string
}

// ImportanceData returns the tensor's whole importance data (ne0 values per
// matrix), nil for none: Imatrix, or for a planned tensor what the run
// makes of its entry a matrix at a time. It is for checks and reports: a
// run never holds it whole.
func (t Tensor) ImportanceData() ([]float32, error) {
	is := t.importance
	if is == nil {
		return t.Imatrix, nil
	}
	out := make([]float32, is.ne0*is.mats)
	for s := int64(0); s < is.mats; s++ {
		if _, err := is.matrix(s, out[s*is.ne0:(s+1)*is.ne0]); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.Name, err)
		}
	}
	return out, nil
}

// first returns the index of the first stored value matrix s is made of.
func (src *importanceSource) first(s int64) int64 {
	if src.repeat {
		return 0
	}
	return s * src.ne0
}

// matrix writes the importance data of matrix s into dst (ne0 values);
// fixed tells that it was all zeros and is uniform instead.
func (src *importanceSource) matrix(s int64, dst []float32) (fixed bool, err error) {
	if err := src.entry.ReadMean(int(src.first(s)), dst); err != nil {
		return false, err
	}
	if src.fix && allZero(dst) {
		for j := range dst {
			dst[j] = 1
		}
		return true, nil
	}
	return false, nil
}

// findImportance finds and checks the importance data of tensor t quantized
// as typ, as TensorImportance describes, and returns where it comes from
// (nil for none) and its description (imp, without Data). It reads the data
// once, a matrix at a time, for the notes about all-zero matrices and the
// hash the records keep.
func findImportance(m *imatrix.Matrix, t gguf.TensorInfo, typ formats.Type) (*importanceSource, Importance, error) {
	var imp Importance
	if m == nil {
		return nil, imp, nil
	}
	e, from, ok := m.Find(t.Name)
	if !ok {
		return nil, imp, nil
	}
	ne0, _, mats := gguf.Dims(t.Shape)
	ne2 := int64(1)
	if len(t.Shape) > 2 {
		ne2 = t.Shape[2]
	}
	n := int64(e.Values())
	src := &importanceSource{entry: e, ne0: ne0, mats: mats}
	switch {
	case n == ne0*ne2 && ne2 == mats:
		if int64(len(e.Counts)) == mats && mats > 1 {
			imp.Counts = append([]float64(nil), e.Counts...)
		}
	case n == ne0 && mats > 1 && from != t.Name && strings.HasSuffix(t.Name, ".attn_v_b.weight"):
		// The same activations feed every head: use the vector for each.
		src.repeat = true
		imp.Note = fmt.Sprintf("importance data of %s used for each of its %d heads", from, mats)
	default:
		if t.Name == "token_embd.weight" {
			return nil, Importance{Ignored: fmt.Sprintf("imatrix size %d is different from tensor size %d", n, ne0*ne2)}, nil
		}
		return nil, imp, fmt.Errorf("tensor %s: importance matrix entry %s has %d values, the tensor needs %d (%d x %d)",
			t.Name, from, n, ne0*mats, ne0, mats)
	}
	imp.From = from
	src.fix = quantize.FailsOnZeroImportance(typ)
	var fixed, risky []int64
	d := xxhash.New()
	buf := make([]float32, ne0)
	raw := make([]byte, 4*ne0)
	for s := int64(0); s < mats; s++ {
		fix, err := src.matrix(s, buf)
		if err != nil {
			return nil, Importance{}, fmt.Errorf("tensor %s: %w", t.Name, err)
		}
		if fix {
			fixed = append(fixed, s)
		}
		if quantize.TinyImportanceNaN(typ) && riskyImportance(buf) {
			risky = append(risky, s)
		}
		for j, v := range buf {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(v))
		}
		d.Write(raw)
	}
	src.hash = hashString(d.Sum64())
	if len(fixed) > 0 {
		n := fmt.Sprintf("%d slice(s) without importance data (matrices %v) use uniform importance for %s", len(fixed), fixed, typ)
		if imp.Note != "" {
			n = imp.Note + "; " + n
		}
		imp.Note = n
	}
	if len(risky) > 0 {
		// What the run finds by reading the output back (checkOutput),
		// said before it: llama-quantize stops on such rows.
		n := fmt.Sprintf("%d matrix(es) (%v) with blocks of zero, tiny or huge importance: rows whose %s encoding is then not finite are written with uniform importance (llama-quantize stops: quantized data validation failed)",
			len(risky), shortList(risky), typ)
		if imp.Note != "" {
			n = imp.Note + "; " + n
		}
		imp.Note = n
	}
	return src, imp, nil
}

// shortList prints the first ten of xs and how many more.
func shortList(xs []int64) string {
	if len(xs) <= 10 {
		return fmt.Sprint(xs)
	}
	return fmt.Sprintf("%v and %d more", xs[:10], len(xs)-10)
}
