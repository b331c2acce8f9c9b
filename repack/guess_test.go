package repack

import (
	"testing"

	"github.com/gquant/gquant/formats"
)

// TestGuessedFileTypes checks the loader's guess against the file types and
// the type descriptors: each type maps to a file type whose default type it
// is (where a family shares one, the loader names one of them: q3_K ->
// Q3_K_M), and a file type of the repacked range exactly for the
// row-interleaved types, but for the ARM repacks of q4_0, older than that
// range and outside it.
func TestGuessedFileTypes(t *testing.T) {
	arm := map[formats.Type]bool{formats.Q4_0_4X4: true, formats.Q4_0_4X8: true, formats.Q4_0_8X8: true}
	for typ, ft := range guessedFileTypes {
		if !typ.Known() {
			t.Errorf("unknown type %s", typ)
		}
		d, err := ft.DefaultType()
		if err != nil {
			t.Errorf("%s -> %s: %v", typ, ft, err)
			continue
		}
		if d != typ {
			t.Errorf("%s -> %s, whose default type is %s", typ, ft, d)
		}
		if IsRepackedFileType(ft) != (typ.IsInterleaved() && !arm[typ]) {
			t.Errorf("%s -> %s: repacked file type %v, row-interleaved type %v", typ, ft, IsRepackedFileType(ft), typ.IsInterleaved())
		}
	}
}
