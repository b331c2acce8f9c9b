package tables

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"
)

// TestIQTablesAreTheReferences pins every table of iq_tables.go (seeds,
// ported) and iq_grids.go (generated from them) to the reference's: the
// SHA-256 of the table as little-endian values (first 12 bytes, in hex) and
// one entry from the middle, both taken from the reference's source at commit
// 8337e4cd (ggml-quants.c: kgrid_2bit_256, kgrid_2bit_512, kgrid_2bit_1024,
// kgrid_1bit_2048, kgrid_256, kgrid_512, kvalues_iq4nl, iq4nl_index;
// ggml-common.h: ksigns_iq2xs, iq2xxs_grid, iq2xs_grid, iq2s_grid,
// iq3xxs_grid, iq3s_grid, iq1s_grid; iqk_quantize.cpp: scrambled_sign's
// k_table). TestIQGridTables checks the grids against each other.
func TestIQTablesAreTheReferences(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table any
		sha   string
		at    int
		value uint64
	}{
		{"KGrid2Bit256", KGrid2Bit256, "915952ebc4af8ddba8113583", 100, 6148},
		{"KGrid2Bit512", KGrid2Bit512, "f66435966ca8d64e9e4a6e3c", 300, 17428},
		{"KGrid2Bit1024", KGrid2Bit1024, "e6e75e121b65e8afa5c1f92b", 700, 21120},
		{"KGrid1Bit2048", KGrid1Bit2048, "e9ffebfc997ad6023063a667", 1500, 33857},
		{"KGrid3Bit256", KGrid3Bit256, "c9678803c61b2210fbd8cbbb", 200, 2616},
		{"KGrid3Bit512", KGrid3Bit512, "353274c58dd7d8dc5ee960dc", 400, 2531},
		{"KValuesIQ4NL", KValuesIQ4NL, "61aa47540aa024b5d6ddaa83", 9, 13},
		{"IQ4NLIndex", IQ4NLIndex, "25012536e6b65bb129f63a38", 98, 21},
		{"KSignsIQ2XS", KSignsIQ2XS, "a76742a603f8beca5212ecce", 77, 77},
		{"IQ2XXSGrid", IQ2XXSGrid, "05826b5d3e472a3a78f196be", 100, 0x08192b0808081908},
		{"IQ2XSGrid", IQ2XSGrid, "06e47aaca60b4dc1d9b5a3f3", 300, 0x1908190808191908},
		{"IQ2SGrid", IQ2SGrid, "e1aa1473412b0552c2174c30", 700, 0x1919082b2b080808},
		{"IQ3XXSGrid", IQ3XXSGrid, "46e35f5a997efdee6c99ce57", 200, 0x2c043e04},
		{"IQ3SGrid", IQ3SGrid, "bd1af4945a1717c65610b028", 400, 0x090f0907},
		{"IQ1SGrid", IQ1SGrid, "07540ffc1aeaf6ad4d97e96b", 1500, 0x01ff00ff00ffff00},
		{"ScrambledSign", ScrambledSign, "8dbe7392f6c173a0ab3997a2", 77, 59},
	} {
		h := sha256.New()
		if err := binary.Write(h, binary.LittleEndian, tc.table); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)[:12]); got != tc.sha {
			t.Errorf("%s: sha256 %s, the reference's table %s", tc.name, got, tc.sha)
		}
		var v uint64
		switch tab := tc.table.(type) {
		case [256]uint16:
			v = uint64(tab[tc.at])
		case [512]uint16:
			v = uint64(tab[tc.at])
		case [1024]uint16:
			v = uint64(tab[tc.at])
		case [2048]uint16:
			v = uint64(tab[tc.at])
		case [16]int8:
			v = uint64(tab[tc.at])
		case [241]int8:
			v = uint64(tab[tc.at])
		case [128]uint8:
			v = uint64(tab[tc.at])
		case [256]uint64:
			v = tab[tc.at]
		case [512]uint64:
			v = tab[tc.at]
		case [1024]uint64:
			v = tab[tc.at]
		case [2048]uint64:
			v = tab[tc.at]
		case [256]uint32:
			v = uint64(tab[tc.at])
		case [512]uint32:
			v = uint64(tab[tc.at])
		default:
			t.Fatalf("%s: table of type %T", tc.name, tc.table)
		}
		if v != tc.value {
			t.Errorf("%s[%d] = %#x, the reference's %#x", tc.name, tc.at, v, tc.value)
		}
	}
	// One lookup table, IQ4NLIndex, serves three tables of values that are
	// the same 16 levels.
	if KTScaleValues != KValuesIQ4NL || [16]int8(IQ4KValues[:16]) != KValuesIQ4NL {
		t.Error("KTScaleValues, IQ4KValues[:16] and KValuesIQ4NL differ: IQ4NLIndex does not fit them all")
	}
}
