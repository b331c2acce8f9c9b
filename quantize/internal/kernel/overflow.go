package kernel

// OverflowError is what a kernel returns for a call whose values are so
// large that the reference's float32 search overflows: every candidate is
// at an infinite distance (from about 1e16 on), where the reference stops
// on an assertion. Cause says which search found nothing. The searches
// report the failure to their kernel (a bool beside their result), which
// stops the call and returns one of these; quantize.QuantizeRows turns it
// into a quantize.OverflowError locating the largest value of the call.
type OverflowError struct {
	Cause string
}

func (e *OverflowError) Error() string { return e.Cause }
