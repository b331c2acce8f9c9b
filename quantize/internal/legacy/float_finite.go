package legacy

import (
	"errors"
	"math"

	"github.com/gquant/gquant/formats"
)

// ErrNotFinite is what the kernels listed by ChecksFinite return when their
// input holds an infinity or a NaN. It does not say where: the caller finds
// the value (formats.FirstNonFinite) only then, so finite input, the normal
// case, is read once instead of twice.
var ErrNotFinite = errors.New("legacy: input value is not finite")

// checksFinite lists the kernels that look at every input value's exponent
// anyway (a conversion or a largest-magnitude pass) and so detect
// infinities and NaNs as they go.
var checksFinite = map[formats.Type]bool{
	formats.Q8_0:     true,
	formats.Q8_0_R8:  true,
	formats.F16:      true,
	formats.BF16:     true,
	formats.BF16_R16: true,
	formats.Q8_KV:    true,
	formats.Q8_KV_R8: true,
	formats.Q8_K_R8:  true,
	formats.MXFP4:    true,
	formats.MXFP4_R8: true,
}

// ChecksFinite reports whether t's kernel checks its input for infinities
// and NaNs itself and returns ErrNotFinite if it finds one, so that the
// caller need not scan the input first. Such a kernel may have written part
// of dst when it returns the error.
func ChecksFinite(t formats.Type) bool { return checksFinite[t] }

// finiteBits reports whether a largest magnitude, as a float32 or as the
// bit pattern bits & 0x7fffffff of one, belongs to finite values only: every
// infinity and NaN has a larger pattern than every finite value.
func finiteBits(m uint32) bool { return m < 0x7f800000 }

// finite reports whether a largest magnitude found with max (which keeps a
// NaN) is finite.
func finite(amax float32) bool { return finiteBits(math.Float32bits(amax) & 0x7fffffff) }
