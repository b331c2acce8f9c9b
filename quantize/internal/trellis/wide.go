package trellis

import (
	"encoding/binary"
	"math"

	"github.com/gquant/gquant/formats"
)

// wideLayout holds a layout of codewords of 4 values (flatLanes or a
// pairLayout) with float32 coordinates in place of fp16: each run of 2*g
// fp16 coordinates (g lanes each: 8 in flatLanes, 16 in a pair of runs)
// then 4*g bytes of indices becomes 4*g float32 then the same indices, and
// the spans' offsets grow with the runs. The AVX2 and AVX-512 scans of
// groups of 4 over it read each coordinate as a memory operand of its
// subtraction: the fp16 layouts' conversions took a quarter of the scans'
// uops on Intel, where VCVTPH2PS is two (one on the shuffle port), and
// iq4_kt's clusters, about 640 KiB so, still fit a core's L2.
type wideLayout struct {
	lanes []byte
	spans []uint32
}

// wide returns cb's wideLayout of flatLanes (groups of 4), built on first
// use; its spans are nil where cb has no flatLanes.
func (cb *codebook) wide() *wideLayout {
	cb.wideOnce.Do(func() {
		if cb.spans != nil && cb.group == 4 {
			cb.wideLanes = widen(cb.flatLanes, cb.spans, 8)
		}
	})
	return &cb.wideLanes
}

// widePairs is wide for cb's pairLayout.
func (cb *codebook) widePairs() *wideLayout {
	cb.widePairOnce.Do(func() {
		if p := cb.pairs(); p.spans != nil && cb.group == 4 {
			cb.widePair = widen(p.lanes, p.spans, 16)
		}
	})
	return &cb.widePair
}

// widen converts a layout of codewords of 4 values whose runs hold lanes
// codewords each (see wideLayout).
func widen(lanes []byte, spans []uint32, nlane int) wideLayout {
	run, wrun := 12*nlane, 20*nlane // 4 fp16 or float32 coordinates, then uint32 indices
	nrun := len(lanes) / run
	if nrun*wrun >= 1<<32 {
		panic("trellis: codebook wide lanes do not fit 32-bit offsets")
	}
	w := wideLayout{lanes: make([]byte, nrun*wrun), spans: make([]uint32, len(spans))}
	for r := 0; r < nrun; r++ {
		src, dst := lanes[r*run:(r+1)*run], w.lanes[r*wrun:(r+1)*wrun]
		for i := 0; i < 4*nlane; i++ {
			v := formats.FP16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
		copy(dst[16*nlane:], src[8*nlane:])
	}
	for c := 0; c < len(spans); c += 2 {
		w.spans[c], w.spans[c+1] = spans[c]/uint32(run)*uint32(wrun), spans[c+1]
	}
	return w
}
