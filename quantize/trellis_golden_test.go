package quantize_test

import "testing"

// trellisTypes are the types of quantize/trellis with the share of identical
// rows each reaches against ../shared/golden/kernels (see its README.md), per
// imatrix variant. 1 means byte for byte.
var trellisTypes = map[string]struct{ plain, imat float64 }{
	"iq1_kt": {1, 1},
	"iq2_kt": {1, 1},
	"iq3_kt": {1, 1},
	"iq4_kt": {1, 1},
}

func TestTrellisGolden(t *testing.T) {
	runRowScaledGolden(t, trellisTypes)
}
