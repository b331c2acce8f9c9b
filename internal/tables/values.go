package tables

// MXFP4Values is the fp4 (e2m1) value table of mxfp4, doubled so that every
// entry is an integer; formats.E8M0ToFP32Half supplies the matching half
// scale.
var MXFP4Values = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// KTScaleValues are the non-linear block scales of iq1_kt and iq2_kt (the
// reference's iq4k_values, first half).
var KTScaleValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
