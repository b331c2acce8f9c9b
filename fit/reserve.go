package fit

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/bytesize"
)

// ErrBadReserve is wrapped by errors parsing a reserve.
var ErrBadReserve = errors.New("fit: bad reserve")

// Reserve is memory a device keeps for something other than weights: a KV
// cache, compute buffers, a margin.
type Reserve struct {
	Device string `json:"device"`
	Text   string `json:"reserve"` // as written ("kv:32768:q8_0", "3GiB")
	Bytes  int64  `json:"bytes"`
	// Why says how a KV cache reserve was computed.
	Why string `json:"why,omitempty"`
}

// ParseReserves reads a --reserve value: DEVICE=SIZE or DEVICE=kv:CTX:TYPE
// items separated by commas. A KV cache is sized from the model's own
// hyper-parameters (see KVBytes).
func ParseReserves(s string, md gguf.Metadata) ([]Reserve, error) {
	var out []Reserve
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		dev, val, ok := strings.Cut(item, "=")
		dev, val = strings.TrimSpace(dev), strings.TrimSpace(val)
		if !ok || dev == "" || val == "" {
			return nil, fmt.Errorf("%w: %q: want DEVICE=SIZE or DEVICE=kv:CTX:TYPE, like GPU=3GiB or GPU=kv:32768:q8_0", ErrBadReserve, item)
		}
		r := Reserve{Device: dev, Text: val}
		if spec, ok := strings.CutPrefix(val, "kv:"); ok {
			ctxText, typText, ok := strings.Cut(spec, ":")
			if !ok {
				return nil, fmt.Errorf("%w: %q: want kv:CTX:TYPE, like kv:32768:q8_0", ErrBadReserve, item)
			}
			ctx, err := strconv.ParseInt(ctxText, 10, 64)
			if err != nil || ctx <= 0 || ctx > 1<<30 {
				return nil, fmt.Errorf("%w: %q: context %q is not a positive number of tokens", ErrBadReserve, item, ctxText)
			}
			typ, err := formats.ParseType(typText)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrBadReserve, item, err)
			}
			if !IsKVCacheType(typ) {
				return nil, fmt.Errorf("%w: %q: %s is no KV cache type: llama.cpp's -ctk and -ctv take %s", ErrBadReserve, item, typ, kvTypeNames())
			}
			r.Bytes, r.Why, err = KVBytes(md, ctx, typ)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrBadReserve, item, err)
			}
		} else {
			// A fraction of a byte is rounded up: a reserve is kept free.
			n, err := bytesize.ParseUp(val)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrBadReserve, item, err)
			}
			r.Bytes = n
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q names no device", ErrBadReserve, s)
	}
	return out, nil
}

// KVCacheTypes are the types the reference's -ctk and -ctv accept
// (kv_cache_type_from_str in ik_llama.cpp's common/common.cpp; any other
// name is "Invalid cache type"), in its order. A reserve for a cache in
// another type sizes a cache no run can make.
var KVCacheTypes = []formats.Type{formats.F32, formats.F16, formats.BF16, formats.Q8_0, formats.Q4_0, formats.Q4_1,
	formats.IQ4_NL, formats.Q5_0, formats.Q5_1, formats.Q6_0, formats.Q8_KV}

// IsKVCacheType reports whether t is one of KVCacheTypes.
func IsKVCacheType(t formats.Type) bool {
	for _, k := range KVCacheTypes {
		if k == t {
			return true
		}
	}
	return false
}

func kvTypeNames() string {
	names := make([]string, len(KVCacheTypes))
	for i, t := range KVCacheTypes {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// maxHyper is the largest hyper-parameter KVBytes accepts, the bound
// recipes.ModelParams puts on the same keys.
const maxHyper = math.MaxInt32

// maxRow is the most values KVBytes sizes as one cache row: RowSize of
// any type stays far inside int64 below it.
const maxRow = 1 << 40

// intKey reads an integer key; ok is false when it is absent or no integer.
func intKey(md gguf.Metadata, key string) (int64, bool) {
	v, found := md.Lookup(key)
	if !found {
		return 0, false
	}
	return v.Int()
}

// mulBytes and addBytes are a*b and a+b for non-negative a and b; ok is
// false when the result is above bytesize.Max.
func mulBytes(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > bytesize.Max {
		return 0, false
	}
	return int64(lo), true
}

func addBytes(a, b int64) (int64, bool) {
	if a > bytesize.Max-b {
		return 0, false
	}
	return a + b, true
}

// KVBytes is the KV cache of ctx tokens in cache type typ, from the model's
// metadata. With multi-head latent attention (a kv_lora_rank key, as in
// DeepSeek V2/V3) the cache holds, per layer and token, the compressed
// latent and the rope part of the key: kv_lora_rank + rope dimension
// values. Otherwise it holds per layer the K and V heads:
// head_count_kv x key_length and head_count_kv x value_length values (the
// head sizes default to embedding_length / head_count; per-layer arrays
// are read layer by layer). Each row is sized as the type stores it.
//
// typ must be one of KVCacheTypes. Every hyper-parameter must lie in
// 0..2^31-1 (block_count in 1..2^31-1), the range recipes.ModelParams
// accepts, and a cache above bytesize.Max is an error: the size never
// wraps. The work is bounded by the lengths
// of the per-layer arrays, not by block_count.
func KVBytes(md gguf.Metadata, ctx int64, typ formats.Type) (int64, string, error) {
	arch, _ := md.Text("general.architecture")
	if arch == "" {
		return 0, "", errors.New("the model names no architecture")
	}
	if ctx <= 0 || ctx > bytesize.Max {
		return 0, "", fmt.Errorf("a context of %d tokens", ctx)
	}
	if !IsKVCacheType(typ) {
		return 0, "", fmt.Errorf("%s is no KV cache type (those are %s)", typ, kvTypeNames())
	}
	key := func(k string) string { return arch + "." + k }
	inRange := func(k string, n int64) error {
		if n < 0 || n > maxHyper {
			return fmt.Errorf("%s is %d, out of range (0 to %d)", k, n, maxHyper)
		}
		return nil
	}
	// hyper reads a scalar key, 0 when absent; ok says whether it is there.
	hyper := func(k string) (int64, bool, error) {
		n, ok := intKey(md, key(k))
		if !ok {
			return 0, false, nil
		}
		return n, true, inRange(key(k), n)
	}
	nLayer, ok := intKey(md, key("block_count"))
	if !ok || nLayer <= 0 {
		return 0, "", fmt.Errorf("the model has no %s", key("block_count"))
	}
	if err := inRange(key("block_count"), nLayer); err != nil {
		return 0, "", err
	}
	tooBig := func() error {
		return fmt.Errorf("the cache of %d layers x %d tokens comes to more than %d bytes", nLayer, ctx, int64(bytesize.Max))
	}
	row := func(n int64) (int64, error) {
		if n > maxRow {
			return 0, fmt.Errorf("a cache row of %d values is more than %d", n, int64(maxRow))
		}
		rs, err := typ.RowSize(n)
		if err != nil {
			return 0, fmt.Errorf("a cache row of %d values as %s: %w", n, typ, err)
		}
		return rs, nil
	}
	lora, _, err := hyper("attention.kv_lora_rank")
	if err != nil {
		return 0, "", err
	}
	if lora > 0 {
		rope, _, err := hyper("rope.dimension_count")
		if err != nil {
			return 0, "", err
		}
		rs, err := row(lora + rope)
		if err != nil {
			return 0, "", err
		}
		total, ok := mulBytes(nLayer, ctx)
		if ok {
			total, ok = mulBytes(total, rs)
		}
		if !ok {
			return 0, "", tooBig()
		}
		return total, fmt.Sprintf("MLA: %d layers x %d tokens x (kv_lora_rank %d + rope %d) as %s", nLayer, ctx, lora, rope, typ), nil
	}
	// span is the number of layers the per-layer arrays describe: every
	// layer from there on reads the same scalars (or an array's absent
	// element), so it is sized once and counted nLayer-span times.
	span := int64(0)
	perLayer := func(k string, l int64) (int64, bool, error) {
		v, ok := md.Lookup(key(k))
		if !ok {
			return 0, false, nil
		}
		name := key(k)
		if v.Type() == gguf.TypeArray {
			if l >= int64(v.Len()) {
				return 0, false, nil
			}
			v = v.Elem(int(l))
			name = fmt.Sprintf("%s[%d]", name, l)
		}
		n, ok := v.Int()
		if !ok {
			return 0, false, nil
		}
		return n, true, inRange(name, n)
	}
	for _, k := range []string{"attention.head_count", "attention.head_count_kv"} {
		if v, ok := md.Lookup(key(k)); ok && v.Type() == gguf.TypeArray {
			span = max(span, min(int64(v.Len()), nLayer))
		}
	}
	embd, _, err := hyper("embedding_length")
	if err != nil {
		return 0, "", err
	}
	kKey, hasK, err := hyper("attention.key_length")
	if err != nil {
		return 0, "", err
	}
	vKey, hasV, err := hyper("attention.value_length")
	if err != nil {
		return 0, "", err
	}
	var first string
	// layer is the cache bytes of one token in layer l.
	layer := func(l int64) (int64, error) {
		nHead, ok, err := perLayer("attention.head_count", l)
		if err != nil {
			return 0, err
		}
		if !ok || nHead <= 0 {
			if l == 0 {
				return 0, fmt.Errorf("the model has no %s", key("attention.head_count"))
			}
			return 0, nil // a layer without attention
		}
		nKV, ok, err := perLayer("attention.head_count_kv", l)
		if err != nil {
			return 0, err
		}
		if !ok {
			nKV = nHead
		}
		if nKV == 0 {
			return 0, nil // no attention in this layer (recurrent)
		}
		kLen, vLen := kKey, vKey
		if !hasK {
			kLen = embd / nHead
		}
		if !hasV {
			vLen = embd / nHead
		}
		// Each factor is at most 2^31-1: the products fit in int64.
		kr, err := row(nKV * kLen)
		if err != nil {
			return 0, err
		}
		vr, err := row(nKV * vLen)
		if err != nil {
			return 0, err
		}
		if first == "" {
			first = fmt.Sprintf("%d KV heads x (K %d + V %d)", nKV, kLen, vLen)
		}
		return kr + vr, nil
	}
	var total int64
	for l := int64(0); l < span; l++ {
		b, err := layer(l)
		if err != nil {
			return 0, "", err
		}
		if total, ok = addBytes(total, b); !ok {
			return 0, "", tooBig()
		}
	}
	if span < nLayer {
		b, err := layer(span)
		if err != nil {
			return 0, "", err
		}
		rest, ok := mulBytes(b, nLayer-span)
		if ok {
			total, ok = addBytes(total, rest)
		}
		if !ok {
			return 0, "", tooBig()
		}
	}
	total, ok = mulBytes(total, ctx)
	if !ok {
		return 0, "", tooBig()
	}
	return total, fmt.Sprintf("%d layers x %d tokens x %s as %s", nLayer, ctx, first, typ), nil
}
