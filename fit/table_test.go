package fit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/recipes"
)

// The measurement table (testdata/medium-measure.tsv) keeps what the
// medium-model tests measured, so the calibration and ranking tests run in
// a second without the 1.9 GB model. TestMedium (build tag medium) writes
// it with -update. Lines, tab-separated:
//
//	model ARCH LAYERS EXPERTS HEADS HEADS_KV VOCAB SIZE FILETYPE
//	tensor NAME SHAPE(ne0xne1x...) SOURCE_TYPE IMATRIX(0/1) [TYPE=ERR/SE ...]
const tablePath = "testdata/medium-measure.tsv"

type table struct {
	m       model
	hasData []bool
	errs    errorTable
	ses     errorTable
}

//lint:ignore U1000 used by medium_test.go (-tags medium)
func writeTable(w io.Writer, tb *table, comment string) error {
	bw := bufio.NewWriter(w)
	for _, l := range strings.Split(comment, "\n") {
		fmt.Fprintf(bw, "# %s\n", l)
	}
	p := tb.m.params
	fmt.Fprintf(bw, "model\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Arch, p.NLayer, p.NExpert, p.NHead, p.NHeadKV, p.NVocab, int(p.Size), uint32(p.FileType))
	for i, t := range tb.m.tensors {
		dims := make([]string, len(t.Shape))
		for k, d := range t.Shape {
			dims[k] = strconv.FormatInt(d, 10)
		}
		fmt.Fprintf(bw, "tensor\t%s\t%s\t%s\t%d", t.Name, strings.Join(dims, "x"), t.Type, btoi(tb.hasData[i]))
		var types []formats.Type
		for ty := range tb.errs[i] {
			types = append(types, ty)
		}
		sort.Slice(types, func(a, b int) bool { return types[a] < types[b] })
		for _, ty := range types {
			fmt.Fprintf(bw, "\t%s=%.6g/%.3g", ty, tb.errs[i][ty], tb.ses[i][ty])
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

func readTable(t testing.TB, path string) *table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb := &table{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	line := 0
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		return n
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") || text == "" {
			continue
		}
		f := strings.Split(text, "\t")
		switch f[0] {
		case "model":
			tb.m.params = recipes.Model{Arch: f[1], NLayer: atoi(f[2]), NExpert: atoi(f[3]), NHead: atoi(f[4]), NHeadKV: atoi(f[5]),
				NVocab: atoi(f[6]), Size: recipes.ModelSize(atoi(f[7])), FileType: recipes.FileType(atoi(f[8]))}
		case "tensor":
			var shape []int64
			for _, d := range strings.Split(f[2], "x") {
				shape = append(shape, int64(atoi(d)))
			}
			src, err := formats.ParseType(f[3])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			tb.m.tensors = append(tb.m.tensors, gguf.TensorInfo{Name: f[1], Shape: shape, Type: src})
			tb.hasData = append(tb.hasData, f[4] == "1")
			errs, ses := map[formats.Type]float64{}, map[formats.Type]float64{}
			for _, kv := range f[5:] {
				name, val, _ := strings.Cut(kv, "=")
				e, s, _ := strings.Cut(val, "/")
				ty, err := formats.ParseType(name)
				if err != nil {
					t.Fatalf("%s:%d: %v", path, line, err)
				}
				if errs[ty], err = strconv.ParseFloat(e, 64); err != nil {
					t.Fatalf("%s:%d: %v", path, line, err)
				}
				if ses[ty], err = strconv.ParseFloat(s, 64); err != nil {
					t.Fatalf("%s:%d: %v", path, line, err)
				}
			}
			tb.errs = append(tb.errs, errs)
			tb.ses = append(tb.ses, ses)
		default:
			t.Fatalf("%s:%d: unknown line kind %q", path, line, f[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tb
}

// mediumDir returns ../shared/models/medium (the medium model's generator,
// importance matrix and measured KL divergences). Like internal/golden, it
// skips the test where the folder is absent and fails it in CI.
func mediumDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "models", "medium")
	if env := os.Getenv("GQUANT_MEDIUM"); env != "" {
		dir = env
	}
	if _, err := os.Stat(filepath.Join(dir, "kld.tsv")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("medium model data missing in CI at %s: %v", dir, err)
		}
		t.Skipf("medium model data not found at %s (it lives beside the repository as ../shared/models/medium; set GQUANT_MEDIUM to point elsewhere)", dir)
	}
	return dir
}

// tableTensors gives the table's model the fit's candidates with the
// measured errors and the gains' losses, every tensor on one device.
func tableTensors(t testing.TB, tb *table, types []formats.Type, g Gains, dev string) []Tensor {
	t.Helper()
	device := make([]string, len(tb.m.tensors))
	for i := range device {
		device[i] = dev
	}
	ts, _, err := candidates(tb.m, tb.hasData, nil, types, device, g)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		tt := &ts[i]
		for k := range tt.Cands {
			c := &tt.Cands[k]
			if tt.Quantized && !exact(tt.Source, c.Type) {
				e, ok := tb.errs[i][measureType(c.Type)]
				if !ok {
					t.Fatalf("%s: no measurement of %s in %s (regenerate it: go test -tags medium -run TestMedium -update ./fit)", tt.Name, c.Type, tablePath)
				}
				c.Err, c.SE = e, tb.ses[i][measureType(c.Type)]
			}
			c.Loss = tt.Gain * (c.Err + g.floor(tt.Source, c.Type))
		}
	}
	return ts
}
