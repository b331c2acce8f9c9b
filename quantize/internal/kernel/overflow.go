package kernel

// overflow is the value a kernel panics with where its float32 search
// overflows. Its type is unexported, so only Overflow makes one and a
// recovered overflow is told apart from every other panic (an index out of
// range, a nil map: a bug, whose stack must not be lost).
type overflow struct{ what string }

// Overflow stops a kernel call whose values are so large that the
// reference's float32 search overflows: every candidate is at an infinite
// distance (from about 1e16 on), where the reference stops on an assertion.
// what says which search found nothing. quantize.QuantizeRows recovers it
// as an *OverflowError; it recovers no other panic.
func Overflow(what string) {
	panic(overflow{what})
}

// AsOverflow reports whether r, a value recovered from a kernel call, is
// the panic of Overflow, and what it said.
func AsOverflow(r any) (what string, ok bool) {
	o, ok := r.(overflow)
	return o.what, ok
}
