package repack

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gquant/gquant/formats"
)

// A row-group conversion of formats.Interleave / Deinterleave is, for every
// type whose layouts only move bits around, a fixed map: each output bit is
// an input bit, possibly flipped, or a constant. The formats converters
// compute it block by block through unpacked values, which is clear but
// costs CPU. A program is the same map compiled once per type, row length
// and direction by probing the formats converter (all zeros, all ones, then
// one probe per bit of the input bit index): each 8-byte output word becomes
// a few masked, byte-wise rotated 8-byte loads of the input. It is checked
// against the formats converter on random groups before use; conversions
// that are not such a map (q8_KV's row sums, the sign tables of iq2_xxs,
// iq2_xs and iq3_xxs) fail the check and keep using the formats converter,
// as does any type where the program is not the faster of the two on this
// CPU. So there is no per-type code here, and a new interleaver in formats
// is picked up the same way. Both paths give the same bytes.
type program struct {
	inSize, outSize int
	words           []word // one per 8 output bytes (the last may be partial)
	ops             []wordOp
	// segments cover words in order. Layouts repeat block after block, so
	// most of a group is a few words repeated with their input moved on by
	// a fixed shift; running the repeats from one template keeps the
	// program that is read per byte converted small (in L1).
	segments []segment
	// minLoad and maxLoad bound the bytes the ops load, relative to the
	// group's start (see runAt).
	minLoad, maxLoad int
}

// segment is words[start:start+period] run count times, the r-th time
// writing period words further on and reading shift*r bytes further on.
type segment struct {
	start, period, count uint32
	shift                int32
}

// word is 8 output bytes: xor, then ops[lo:hi] xor-ed in.
type word struct {
	lo, hi uint32
	xor    uint64
}

// wordOp takes the 8 input bytes at base (little-endian), rotates each byte
// left by rot and keeps the bits of mask: with the rotation split into the
// part shifted up within the byte (maskUp) and the part wrapped around
// (maskDown), it is x<<rot&maskUp | x>>(8-rot)&maskDown.
type wordOp struct {
	base             int32
	rot              uint8
	maskUp, maskDown uint64
}

// apply returns the op's bits of the input at src[base:].
func (op *wordOp) apply(src []byte, base int) uint64 {
	x := binary.LittleEndian.Uint64(src[base+int(op.base):])
	if op.rot == 0 { // whole-byte moves: most ops of most types
		return x & op.maskUp
	}
	return x<<(op.rot&7)&op.maskUp | x>>((8-op.rot)&7)&op.maskDown
}

// run converts one group.
func (p *program) run(dst, src []byte) {
	dst, src = dst[:p.outSize], src[:p.inSize]
	ops := p.ops
	for _, sg := range p.segments {
		template := p.words[sg.start : sg.start+sg.period]
		for r := range int(sg.count) {
			shift := r * int(sg.shift)
			out := 8 * (int(sg.start) + r*int(sg.period))
			for _, wd := range template {
				v := wd.xor
				for _, op := range ops[wd.lo:wd.hi] {
					var x uint64
					if off := int(op.base) + shift; off >= 0 && off <= len(src)-8 {
						x = binary.LittleEndian.Uint64(src[off:])
					} else {
						x = load64(src, off)
					}
					if op.rot == 0 {
						v ^= x & op.maskUp
					} else {
						v ^= x<<op.rot&op.maskUp | x>>(8-op.rot)&op.maskDown
					}
				}
				if out+8 <= len(dst) {
					binary.LittleEndian.PutUint64(dst[out:], v)
				} else {
					var buf [8]byte
					binary.LittleEndian.PutUint64(buf[:], v)
					copy(dst[out:], buf[:])
				}
				out += 8
			}
		}
	}
}

// runAt converts the group at src[at:], reading straight from src: the
// 8-byte loads of the ops may reach up to 7 bytes before and after the
// group (their masks drop those bytes), so the caller makes sure
// at+p.minLoad >= 0 and at+p.maxLoad <= len(src) (fits). Inside a chunk of
// whole groups that holds for all but the first and last group, which use
// run. Without the edge cases no load needs checking for the chunk's ends.
func (p *program) runAt(dst, src []byte, at int) {
	dst = dst[:p.outSize]
	ops := p.ops
	for _, sg := range p.segments {
		template := p.words[sg.start : sg.start+sg.period]
		out := 8 * int(sg.start)
		for r := range int(sg.count) {
			base := at + r*int(sg.shift)
			for _, wd := range template {
				v := wd.xor
				wops := ops[wd.lo:wd.hi]
				// Most words take 2 or 4 ops; straight-line code for
				// those saves the loop's per-op overhead (a modest
				// 0-30 % here: the ops themselves dominate).
				for len(wops) >= 4 {
					v ^= wops[0].apply(src, base) ^ wops[1].apply(src, base) ^ wops[2].apply(src, base) ^ wops[3].apply(src, base)
					wops = wops[4:]
				}
				for len(wops) >= 2 {
					v ^= wops[0].apply(src, base) ^ wops[1].apply(src, base)
					wops = wops[2:]
				}
				if len(wops) == 1 {
					v ^= wops[0].apply(src, base)
				}
				if out+8 <= len(dst) {
					binary.LittleEndian.PutUint64(dst[out:], v)
				} else {
					var buf [8]byte
					binary.LittleEndian.PutUint64(buf[:], v)
					copy(dst[out:], buf[:])
				}
				out += 8
			}
		}
	}
}

// fits reports whether runAt may convert the group at src[at:].
func (p *program) fits(src []byte, at int) bool {
	return at+p.minLoad >= 0 && at+p.maxLoad <= len(src)
}

// sameShifted reports whether words[b:b+n] are words[a:a+n] reading shift
// bytes further on.
func (p *program) sameShifted(a, b, n int, shift int32) bool {
	for t := range n {
		wa, wb := p.words[a+t], p.words[b+t]
		if wa.xor != wb.xor || wa.hi-wa.lo != wb.hi-wb.lo {
			return false
		}
		for i := range int(wa.hi - wa.lo) {
			oa, ob := p.ops[int(wa.lo)+i], p.ops[int(wb.lo)+i]
			if oa.rot != ob.rot || oa.maskUp != ob.maskUp || oa.maskDown != ob.maskDown || oa.base+shift != ob.base {
				return false
			}
		}
	}
	return true
}

// segment covers the words with repeats of the candidate periods (in
// words), greedily taking the longest stretch at each point.
func (p *program) segment(periods []int) {
	n := len(p.words)
	for w := 0; w < n; {
		best := segment{start: uint32(w), period: 1, count: 1}
		for _, period := range periods {
			if period < 1 || w+2*period > n {
				continue
			}
			var shift int32
			for t := range period {
				wa, wb := p.words[w+t], p.words[w+period+t]
				if wa.hi > wa.lo && wb.hi > wb.lo {
					shift = p.ops[wb.lo].base - p.ops[wa.lo].base
					break
				}
			}
			count := 1
			for w+(count+1)*period <= n && p.sameShifted(w, w+count*period, period, int32(count)*shift) {
				count++
			}
			if count > 1 && count*period > int(best.count*best.period) {
				best = segment{start: uint32(w), period: uint32(period), count: uint32(count), shift: shift}
			}
		}
		p.segments = append(p.segments, best)
		w += int(best.count * best.period)
	}
}

// load64 reads 8 bytes at off, zeros outside src (ops only keep bits of
// bytes inside).
func load64(src []byte, off int) uint64 {
	if off >= 0 && off+8 <= len(src) {
		return binary.LittleEndian.Uint64(src[off:])
	}
	var buf [8]byte
	for i := range buf {
		if j := off + i; j >= 0 && j < len(src) {
			buf[i] = src[j]
		}
	}
	return binary.LittleEndian.Uint64(buf[:])
}

// groupConverter converts whole row groups of one tensor.
type groupConverter struct {
	groupIn, groupOut int
	prog              *program // nil: use slow
	slow              func(dst, src []byte) error
}

func (g *groupConverter) convert(dst, src []byte) error {
	if g.prog == nil {
		return g.slow(dst, src)
	}
	for i := 0; i*g.groupIn < len(src); i++ {
		if at := i * g.groupIn; g.prog.fits(src, at) {
			g.prog.runAt(dst[i*g.groupOut:], src, at)
		} else {
			g.prog.run(dst[i*g.groupOut:], src[at:])
		}
	}
	return nil
}

type programKey struct {
	t    formats.Type // the interleaved type
	ne0  int
	undo bool
}

var (
	programsMu sync.Mutex
	programs   = map[programKey]*program{} // nil entries: not compilable
)

// maxProgramGroup bounds the group size compiled into a program (the
// probing costs about 25 formats conversions of a group, and the program
// some 12 bytes per output byte); larger groups use formats directly.
const maxProgramGroup = 1 << 20

// newGroupConverter returns the converter for tensors of interleaved type t
// with rows of ne0 weights, compiling (or fetching) its program.
func newGroupConverter(t formats.Type, ne0 int, undo bool, groupIn, groupOut int) *groupConverter {
	g := &groupConverter{groupIn: groupIn, groupOut: groupOut}
	f := func(dst, src []byte) error { return formats.Interleave(t, ne0, dst, src) }
	if undo {
		f = func(dst, src []byte) error { return formats.Deinterleave(t, ne0, dst, src) }
	}
	g.slow = f
	if groupIn > maxProgramGroup || groupOut > maxProgramGroup {
		return g
	}
	key := programKey{t, ne0, undo}
	programsMu.Lock()
	p, done := programs[key]
	programsMu.Unlock()
	if !done {
		// The interleaved layout repeats every block of all k rows, the base
		// layout every block of one row.
		p = compile(f, groupIn, groupOut, []int{t.TypeSize() * t.Interleave(), t.Base().TypeSize()})
		if p != nil && !p.faster(f) {
			p = nil
		}
		programsMu.Lock()
		programs[key] = p
		programsMu.Unlock()
	}
	g.prog = p
	return g
}

// compile derives the bit map of f (one group of nIn bytes to nOut bytes)
// and returns it as a program, or nil if f is not such a map.
//
// periods are byte sizes the layouts repeat with (block sizes); the program
// runs repeats of whole 8-byte words, so each is rounded up to a multiple of 8.
func compile(f func(dst, src []byte) error, nIn, nOut int, periods []int) *program {
	in := make([]byte, nIn)
	zero := make([]byte, nOut)
	ones := make([]byte, nOut)
	if f(zero, in) != nil {
		return nil
	}
	for i := range in {
		in[i] = 0xff
	}
	if f(ones, in) != nil {
		return nil
	}
	// Output bits that differ between the two follow an input bit; probe
	// p sets the input bits whose index has bit p set, so the outputs
	// spell out each followed bit's index.
	nBits := 8 * nIn
	probes := bits.Len(uint(nBits - 1))
	src := make([]uint32, 8*nOut) // source bit index of each varying output bit
	out := make([]byte, nOut)
	for p := range probes {
		for i := range in {
			var b byte
			for k := range 8 {
				if (8*i+k)>>p&1 != 0 {
					b |= 1 << k
				}
			}
			in[i] = b
		}
		if f(out, in) != nil {
			return nil
		}
		for j := range nOut {
			d := (out[j] ^ zero[j]) & (zero[j] ^ ones[j])
			for d != 0 {
				k := bits.TrailingZeros8(d)
				src[8*j+k] |= 1 << p
				d &= d - 1
			}
		}
	}

	prog := &program{inSize: nIn, outSize: nOut}
	for w := 0; 8*w < nOut; w++ {
		wd := word{lo: uint32(len(prog.ops))}
		for b := 0; b < 8 && 8*w+b < nOut; b++ {
			j := 8*w + b
			wd.xor |= uint64(zero[j]) << (8 * b)
			varying := zero[j] ^ ones[j]
			for k := range 8 {
				if varying>>k&1 == 0 {
					continue
				}
				s := src[8*j+k]
				if int(s) >= nBits {
					return nil
				}
				base := int32(s/8) - int32(b)
				rot := uint8((k - int(s%8)) & 7)
				bit := uint64(1) << (8*b + k)
				i := int(wd.lo)
				for i < len(prog.ops) && (prog.ops[i].base != base || prog.ops[i].rot != rot) {
					i++
				}
				if i == len(prog.ops) {
					prog.ops = append(prog.ops, wordOp{base: base, rot: rot})
				}
				// Bit k of the output byte comes from bit k-rot of the
				// input byte: shifted up if k >= rot, wrapped otherwise.
				if k >= int(rot) {
					prog.ops[i].maskUp |= bit
				} else {
					prog.ops[i].maskDown |= bit
				}
			}
		}
		wd.hi = uint32(len(prog.ops))
		prog.words = append(prog.words, wd)
	}

	for _, op := range prog.ops {
		prog.minLoad = min(prog.minLoad, int(op.base))
		prog.maxLoad = max(prog.maxLoad, int(op.base)+8)
	}

	var words []int
	for _, b := range periods {
		if b > 0 {
			words = append(words, b/gcd(b, 8)) // lcm(b, 8) / 8
		}
	}
	prog.segment(words)

	// Check against f on random groups: a conversion that is not a bit map
	// (one that computes anything) fails here.
	rng := rand.New(rand.NewPCG(uint64(nIn), uint64(nOut)))
	want := make([]byte, nOut)
	for range 4 {
		for i := range in {
			in[i] = byte(rng.Uint32())
		}
		if f(want, in) != nil {
			return nil
		}
		clear(out)
		prog.run(out, in)
		if !bytes.Equal(out, want) {
			return nil
		}
	}
	return prog
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// faster reports whether the program converts groups faster than f here.
// Both give the same bytes; which one runs is only a matter of speed (on
// some types and CPUs the formats converter's straight copies win).
func (p *program) faster(f func(dst, src []byte) error) bool {
	reps := max(1, (128<<10)/p.inSize)
	in, out := make([]byte, reps*p.inSize), make([]byte, reps*p.outSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range in {
		in[i] = byte(rng.Uint32())
	}
	best := [2]time.Duration{1 << 62, 1 << 62}
	for range 3 {
		for which := range 2 {
			start := time.Now()
			for r := range reps {
				if which == 0 {
					p.run(out[r*p.outSize:], in[r*p.inSize:])
				} else if f(out[r*p.outSize:(r+1)*p.outSize], in[r*p.inSize:(r+1)*p.inSize]) != nil {
					return true
				}
			}
			best[which] = min(best[which], time.Since(start))
		}
	}
	return best[0] < best[1]
}
