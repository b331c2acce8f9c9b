package imatrix

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

func TestGGUFRoundTrip(t *testing.T) {
	dat, err := Open(golden.Path(t, "e2e", "tiny-ds2.imatrix.dat"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "im.gguf")
	nmat := map[string]int{}
	for _, e := range dat.Entries {
		if len(e.Sums) == 2048 {
			nmat[e.Name] = 8 // the expert tensors: 8 experts of 256 columns
		}
	}
	if err := WriteGGUF(path, dat, nmat, 512, true); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Format != FormatGGUF || g.Chunks != dat.Chunks || len(g.Datasets) != 1 || g.Datasets[0] != dat.Datasets[0] || g.Len() != dat.Len() {
		t.Fatalf("GGUF copy: format %s chunks %d datasets %q entries %d", g.Format, g.Chunks, g.Datasets, g.Len())
	}
	for _, e := range dat.Entries {
		ge, ok := g.Lookup(e.Name)
		if !ok {
			t.Fatalf("%s missing", e.Name)
		}
		a, b := e.Mean(), ge.Mean()
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: mean %v after the round trip, %v before", e.Name, i, b[i], a[i])
			}
		}
	}
	if _, err := Open(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf")); !errors.Is(err, ErrNotImatrix) {
		t.Errorf("a model read as an imatrix: %v", err)
	}
}
