package fit

import (
	"errors"
	"fmt"
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
	Device string
	Text   string // as written ("kv:32768:q8_0", "3GiB")
	Bytes  int64
	// Why says how a KV cache reserve was computed.
	Why string
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
			r.Bytes, r.Why, err = KVBytes(md, ctx, typ)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %w", ErrBadReserve, item, err)
			}
		} else {
			n, err := bytesize.Parse(val)
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

// intKey reads an integer key; ok is false when it is absent or no integer.
func intKey(md gguf.Metadata, key string) (int64, bool) {
	v, found := md.Lookup(key)
	if !found {
		return 0, false
	}
	return v.Int()
}

// KVBytes is the KV cache of ctx tokens in cache type typ, from the model's
// metadata. With multi-head latent attention (a kv_lora_rank key, as in
// DeepSeek V2/V3) the cache holds, per layer and token, the compressed
// latent and the rope part of the key: kv_lora_rank + rope dimension
// values. Otherwise it holds per layer the K and V heads:
// head_count_kv x key_length and head_count_kv x value_length values (the
// head sizes default to embedding_length / head_count; per-layer arrays
// are read layer by layer). Each row is sized as the type stores it.
func KVBytes(md gguf.Metadata, ctx int64, typ formats.Type) (int64, string, error) {
	arch, _ := md.Text("general.architecture")
	if arch == "" {
		return 0, "", errors.New("the model names no architecture")
	}
	key := func(k string) string { return arch + "." + k }
	nLayer, ok := intKey(md, key("block_count"))
	if !ok || nLayer <= 0 {
		return 0, "", fmt.Errorf("the model has no %s", key("block_count"))
	}
	row := func(n int64) (int64, error) {
		rs, err := typ.RowSize(n)
		if err != nil {
			return 0, fmt.Errorf("a cache row of %d values as %s: %w", n, typ, err)
		}
		return rs, nil
	}
	if lora, ok := intKey(md, key("attention.kv_lora_rank")); ok && lora > 0 {
		rope, _ := intKey(md, key("rope.dimension_count"))
		rs, err := row(lora + rope)
		if err != nil {
			return 0, "", err
		}
		return nLayer * ctx * rs, fmt.Sprintf("MLA: %d layers x %d tokens x (kv_lora_rank %d + rope %d) as %s", nLayer, ctx, lora, rope, typ), nil
	}
	perLayer := func(k string, l int64) (int64, bool) {
		v, ok := md.Lookup(key(k))
		if !ok {
			return 0, false
		}
		if v.Type() == gguf.TypeArray {
			if l >= int64(v.Len()) {
				return 0, false
			}
			return v.Elem(int(l)).Int()
		}
		return v.Int()
	}
	embd, _ := intKey(md, key("embedding_length"))
	var total int64
	var first string
	for l := int64(0); l < nLayer; l++ {
		nHead, ok := perLayer("attention.head_count", l)
		if !ok || nHead <= 0 {
			if l == 0 {
				return 0, "", fmt.Errorf("the model has no %s", key("attention.head_count"))
			}
			continue // a layer without attention
		}
		nKV, ok := perLayer("attention.head_count_kv", l)
		if !ok {
			nKV = nHead
		}
		if nKV == 0 {
			continue // no attention in this layer (recurrent)
		}
		kLen, ok := intKey(md, key("attention.key_length"))
		if !ok {
			kLen = embd / nHead
		}
		vLen, ok := intKey(md, key("attention.value_length"))
		if !ok {
			vLen = embd / nHead
		}
		kr, err := row(nKV * kLen)
		if err != nil {
			return 0, "", err
		}
		vr, err := row(nKV * vLen)
		if err != nil {
			return 0, "", err
		}
		total += ctx * (kr + vr)
		if first == "" {
			first = fmt.Sprintf("%d KV heads x (K %d + V %d)", nKV, kLen, vLen)
		}
	}
	return total, fmt.Sprintf("%d layers x %d tokens x %s as %s", nLayer, ctx, first, typ), nil
}
