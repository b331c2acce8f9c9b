package pipeline

import (
	"context"
	"sync"
)

// DefaultMemory is the default Options.Memory: the bytes the pieces in
// flight may hold. With the garbage collector's slack (a buffer dropped
// to make room for a larger one is freed at the next collection, which Go
// starts when the heap has grown by as much again as is live) the heap of
// a run stays under about twice this plus the plan, well under 512 MiB.
const DefaultMemory = 128 << 20

// minMemory is the smallest Options.Memory: a copy holds two of its byte
// pieces (of a sixteenth of the budget) while it reads, so they must fit
// beside each other, and pieces smaller than 64 KiB cost more in system
// calls than they save.
const minMemory = 1 << 20

// need is the working memory a piece asks for, in elements of each buffer
// (what grow is called with for it).
type need struct{ raw, f32, out, im int }

// bytes is what new buffers for n hold.
func (n need) bytes() int64 { return (&buffers{}).grownBytes(n) }

// capBytes is what the buffers hold (their capacity).
func (b *buffers) capBytes() int64 {
	return int64(cap(b.raw)) + 4*int64(cap(b.f32)) + int64(cap(b.out)) + 4*int64(cap(b.im))
}

// grownBytes is what the buffers will hold once grown to n (by grow).
func (b *buffers) grownBytes(n need) int64 {
	return grownCap(cap(b.raw), n.raw) + 4*grownCap(cap(b.f32), n.f32) + grownCap(cap(b.out), n.out) + 4*grownCap(cap(b.im), n.im)
}

func grownCap(c, n int) int64 {
	if c >= n {
		return int64(c)
	}
	return int64(sizeClass(n))
}

// memory lends the working memory of the pieces in flight, from the
// moment the reader takes a piece's buffers until the writer has written
// its bytes, and keeps every buffer it made (lent or kept for the next
// piece) within a byte budget, whatever the number of workers: the reader
// waits while the next piece does not fit beside those in flight. Pieces
// are lent in sequence order and the writer gives them back in the same
// order, so the wait always ends. A piece larger than the budget on its
// own (a whole matrix of a call-scoped type on a huge model) is lent
// alone, once every other piece is back.
type memory struct {
	limit  int64
	slots  int // most pieces in flight
	freed  chan struct{}
	report func(inUse, held int64, pieces int) // if set, called on every change (tests)

	mu     sync.Mutex
	held   int64 // capacity of every buffer made and not dropped
	inUse  int64 // of that, what the pieces in flight were lent
	pieces int   // pieces in flight
	free   []*buffers
}

func newMemory(limit int64, slots int, report func(inUse, held int64, pieces int)) *memory {
	return &memory{limit: limit, slots: max(slots, 1), freed: make(chan struct{}, 1), report: report}
}

// acquire lends buffers for a piece that needs n; nil when ctx is done
// first.
func (m *memory) acquire(ctx context.Context, n need) *buffers {
	for {
		m.mu.Lock()
		b := m.take(n)
		m.mu.Unlock()
		if b != nil {
			return b
		}
		select {
		case <-m.freed:
		case <-ctx.Done():
			return nil
		}
	}
}

// take lends buffers for n if they fit now; m.mu is held.
func (m *memory) take(n need) *buffers {
	cost := n.bytes()
	allowed := m.limit
	if m.pieces == 0 {
		allowed = max(m.limit, cost)
	}
	if m.pieces >= m.slots || m.inUse+cost > allowed {
		return nil
	}
	// The kept buffers that grow least, if they fit; else new ones.
	best := -1
	var bestGrowth int64
	for i, b := range m.free {
		g := b.grownBytes(n)
		if m.inUse+g > allowed {
			continue
		}
		if growth := g - b.capBytes(); best < 0 || growth < bestGrowth {
			best, bestGrowth = i, growth
		}
	}
	b := &buffers{}
	if best >= 0 {
		b = m.free[best]
		last := len(m.free) - 1
		m.free[best] = m.free[last]
		m.free[last] = nil
		m.free = m.free[:last]
	}
	size := b.grownBytes(n)
	// Drop kept buffers until the grown ones fit: held stays within the
	// budget (the dropped ones are garbage until the next collection).
	held := m.held - b.capBytes()
	for held+size > allowed && len(m.free) > 0 {
		last := len(m.free) - 1
		held -= m.free[last].capBytes()
		m.free[last] = nil
		m.free = m.free[:last]
	}
	b.lent = size
	m.held = held + size
	m.inUse += size
	m.pieces++
	if m.report != nil {
		m.report(m.inUse, m.held, m.pieces)
	}
	return b
}

// release takes back buffers lent by acquire, to keep for the next piece.
func (m *memory) release(b *buffers) {
	m.mu.Lock()
	// What the piece grew them to is what take counted, unless a piece
	// asked for more than its need said; held then says the truth.
	m.held += b.capBytes() - b.lent
	m.inUse -= b.lent
	m.pieces--
	b.lent = 0
	m.free = append(m.free, b)
	if m.report != nil {
		m.report(m.inUse, m.held, m.pieces)
	}
	m.mu.Unlock()
	select {
	case m.freed <- struct{}{}:
	default:
	}
}
