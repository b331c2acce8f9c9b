//go:build !amd64 || purego

package formats

// useAVX2F16C is false without assembly: every value takes the portable
// path.
var useAVX2F16C = false

// useAVX512 is false without assembly.
var useAVX512 = false

// intelKernels has nothing to select without assembly.
var intelKernels = false

func putFP16RowSIMD(dst []byte, src []float32) (int, bool) { return 0, true }
func putBF16RowSIMD(dst []byte, src []float32) (int, bool) { return 0, true }

func anyNonFiniteSIMD(x []float32) (int, bool) { return 0, false }

func maxBitsSIMD(x []float32) (int, uint32) { return 0, 0 }

func bf16RowToFP32SIMD(dst []float32, src []byte) int { return 0 }

func bf16RowToFP32MaxSIMD(dst []float32, src []byte) (int, uint16) { return 0, 0 }

func bf16RowToFP16MaxSIMD(dst, src []byte) (int, uint16) { return 0, 0 }

func bf16MaxSIMD(src []byte) (int, uint16) { return 0, 0 }
