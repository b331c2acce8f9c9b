package splitter

import (
	"fmt"
	"strings"

	"github.com/gquant/gquant/gguf"
)

// DefaultMaxTensors is the tensors-per-shard limit used when Limits sets
// neither limit, as the reference's gguf-split does.
const DefaultMaxTensors = 128

// MaxLoadableShards is the most shards llama.cpp builds load; a plan with
// more gets a warning (the files are still valid GGUF).
const MaxLoadableShards = 64

// limitAlignment is the padding the size limit counts each tensor with. The
// reference always pads with GGUF's default alignment here, whatever the
// file's general.alignment says, so the shard boundaries match its own.
const limitAlignment = 32

// Limits says where one shard ends and the next begins. A tensor never
// spans two shards. When both limits are set a shard ends at whichever is
// reached first; when neither is, MaxTensors is DefaultMaxTensors.
type Limits struct {
	// MaxTensors is the most tensors in one shard (0: no limit).
	MaxTensors int
	// MaxBytes is the most tensor data in one shard, each tensor counted
	// with its size padded to 32 bytes; the header is not counted (0: no
	// limit). A tensor larger than MaxBytes goes alone in its shard.
	MaxBytes int64
	// MetadataOnlyFirst puts only the metadata in the first shard and starts
	// the tensors in the second (gguf-split's --no-tensor-first-split), so
	// the metadata can be read or replaced without touching the weights.
	MetadataOnlyFirst bool
}

// Shard is one planned output file.
type Shard struct {
	// Index is the 0-based shard number (split.no).
	Index int
	// Metadata is what the shard's header holds: the model's keys then the
	// split keys for the first shard, only the split keys for the others.
	Metadata gguf.Metadata
	// Tensors are the shard's tensors in file order, with Size and Offset
	// (relative to the shard's data section) as they will be written.
	Tensors []gguf.TensorInfo
	// Source gives, for each of Tensors, its index in the tensor list the
	// plan was made from.
	Source []int
	// DataBytes is the tensor data counted the way Limits.MaxBytes counts it
	// (each tensor padded to 32 bytes).
	DataBytes int64
	// FileSize is the exact size of the shard file.
	FileSize int64
}

// Plan is the layout of a shard set.
type Plan struct {
	Shards []Shard
	// Warnings are things the user should hear about before writing: more
	// shards than llama.cpp loads, tensors larger than the size limit.
	Warnings []string
}

// TotalSize is the size of all the shard files together.
func (p Plan) TotalSize() int64 {
	var n int64
	for _, s := range p.Shards {
		n += s.FileSize
	}
	return n
}

// Paths returns the file name of each shard for an output prefix, as the
// reference spells them (PREFIX-00001-of-00003.gguf); a ".gguf" ending of
// prefix is dropped first, as gguf-split does.
func (p Plan) Paths(prefix string) []string {
	prefix = TrimPrefix(prefix)
	paths := make([]string, len(p.Shards))
	for i := range p.Shards {
		paths[i] = gguf.ShardPath(prefix, i, len(p.Shards))
	}
	return paths
}

// TrimPrefix drops a ".gguf" ending from an output prefix, so that
// "out.gguf" and "out" name the same shards (out-00001-of-0000N.gguf).
func TrimPrefix(prefix string) string {
	return strings.TrimSuffix(prefix, ".gguf")
}

// IsSplitKey reports whether key is one of the three keys that describe a
// shard set (split.no, split.count, split.tensors.count).
func IsSplitKey(key string) bool {
	return key == gguf.KeySplitNo || key == gguf.KeySplitCount || key == gguf.KeySplitTensorsCount
}

// StripSplitKeys returns md without the split keys, keeping the order of the
// others: the metadata of the model the shards were cut from.
func StripSplitKeys(md gguf.Metadata) gguf.Metadata {
	out := make(gguf.Metadata, 0, len(md))
	for _, kv := range md {
		if !IsSplitKey(kv.Key) {
			out = append(out, kv)
		}
	}
	return out
}

// PlanShards decides which tensors go in which shard and what each shard's
// header holds, the way llama-gguf-split --split does, without touching any
// file: md and tensors are the unsplit model's metadata and tensors in file
// order (Size may be left 0; it is computed from Shape and Type). Split keys
// already in md (a shard set being re-split) are dropped first, so the plan
// is the same as for the merged model.
//
// It fails only on bad limits or bad tensor infos; oversized tensors and
// large shard counts are reported in Plan.Warnings.
func PlanShards(md gguf.Metadata, tensors []gguf.TensorInfo, limits Limits) (Plan, error) {
	if limits.MaxTensors < 0 || limits.MaxBytes < 0 {
		return Plan{}, fmt.Errorf("%w: negative limit (%d tensors, %d bytes)", ErrLimits, limits.MaxTensors, limits.MaxBytes)
	}
	if limits.MaxTensors == 0 && limits.MaxBytes == 0 {
		limits.MaxTensors = DefaultMaxTensors
	}
	sizes, err := tensorSizes(tensors)
	if err != nil {
		return Plan{}, err
	}
	var warnings []string
	shardOf := make([]int, len(tensors))
	cur, count, bytes := 0, 0, int64(0)
	if limits.MetadataOnlyFirst && len(tensors) > 0 {
		cur = 1
	}
	for i, size := range sizes {
		padded := alignUp(size, limitAlignment)
		full := (limits.MaxTensors > 0 && count >= limits.MaxTensors) ||
			(limits.MaxBytes > 0 && bytes+padded > limits.MaxBytes)
		// The reference starts a new shard even when the current one is
		// still empty (and then refuses the empty shard); a tensor too big
		// for any shard goes alone in its own instead.
		if full && count > 0 {
			cur, count, bytes = cur+1, 0, 0
		}
		if limits.MaxBytes > 0 && padded > limits.MaxBytes {
			warnings = append(warnings, fmt.Sprintf("tensor %q is %d bytes, more than the %d-byte shard limit: it goes alone in shard %d", tensors[i].Name, size, limits.MaxBytes, cur+1))
		}
		shardOf[i] = cur
		count++
		bytes += padded
	}
	plan, err := planAssigned(md, tensors, sizes, shardOf, cur+1)
	if err != nil {
		return Plan{}, err
	}
	plan.Warnings = append(warnings, plan.Warnings...)
	return plan, nil
}

// PlanAssigned lays out a shard set whose tensor-to-shard assignment is
// already decided: shardOf[i] is the 0-based shard of tensors[i], and every
// shard from 0 to the largest index must get at least one tensor except
// shard 0, which may hold only metadata. Tensors keep their relative order
// within a shard. This is the layout llama-quantize --keep-split writes
// (each output tensor in its input tensor's shard): the first shard carries
// md then the split keys, the others only the split keys.
//
// With a single shard the split keys are still written, as gguf-split does;
// llama-quantize --keep-split of an unsplit input writes none, so callers
// reproducing it write md as it is when there is one shard.
//
// The quantize pipeline writes shards with it: for each shard,
// gguf.Create(plan.Paths(prefix)[s], shard.Metadata, shard.Tensors, ...),
// then the data of shard.Tensors in order.
func PlanAssigned(md gguf.Metadata, tensors []gguf.TensorInfo, shardOf []int) (Plan, error) {
	if len(shardOf) != len(tensors) {
		return Plan{}, fmt.Errorf("%w: %d shard numbers for %d tensors", ErrLimits, len(shardOf), len(tensors))
	}
	sizes, err := tensorSizes(tensors)
	if err != nil {
		return Plan{}, err
	}
	n := 1
	for i, s := range shardOf {
		if s < 0 {
			return Plan{}, fmt.Errorf("%w: tensor %q assigned to shard %d", ErrLimits, tensors[i].Name, s)
		}
		n = max(n, s+1)
	}
	return planAssigned(md, tensors, sizes, shardOf, n)
}

func planAssigned(md gguf.Metadata, tensors []gguf.TensorInfo, sizes []int64, shardOf []int, n int) (Plan, error) {
	if n > 0xFFFF {
		return Plan{}, fmt.Errorf("%w: %d shards, split.count holds at most 65535", ErrLimits, n)
	}
	if int64(len(tensors)) > 0x7FFFFFFF {
		return Plan{}, fmt.Errorf("%w: %d tensors, split.tensors.count holds at most 2^31-1", ErrLimits, len(tensors))
	}
	plan := Plan{Shards: make([]Shard, n)}
	base := StripSplitKeys(md)
	for s := range plan.Shards {
		var smd gguf.Metadata
		if s == 0 {
			smd = base.Clone()
		}
		smd.Set(gguf.KeySplitNo, gguf.Uint16Value(uint16(s)))
		smd.Set(gguf.KeySplitCount, gguf.Uint16Value(uint16(n)))
		smd.Set(gguf.KeySplitTensorsCount, gguf.Int32Value(int32(len(tensors))))
		plan.Shards[s] = Shard{Index: s, Metadata: smd}
	}
	for i, t := range tensors {
		sh := &plan.Shards[shardOf[i]]
		t.Size, t.Offset = sizes[i], 0
		t.Shape = append([]int64(nil), t.Shape...)
		sh.Tensors = append(sh.Tensors, t)
		sh.Source = append(sh.Source, i)
		sh.DataBytes += alignUp(sizes[i], limitAlignment)
	}
	for s := range plan.Shards {
		sh := &plan.Shards[s]
		if s > 0 && len(sh.Tensors) == 0 {
			return Plan{}, fmt.Errorf("%w: shard %d of %d would hold no tensors", ErrLimits, s+1, n)
		}
		// FileSize checks the header (alignment included) before the
		// offsets are worked out from it.
		size, err := gguf.FileSize(sh.Metadata, sh.Tensors)
		if err != nil {
			return Plan{}, fmt.Errorf("splitter: shard %d: %w", s+1, err)
		}
		sh.FileSize = size
		a := alignmentOf(sh.Metadata)
		off := int64(0)
		for j := range sh.Tensors {
			sh.Tensors[j].Offset = off
			off += alignUp(sh.Tensors[j].Size, a)
		}
	}
	if n > MaxLoadableShards {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%d shards: llama.cpp builds load at most %d; raise the limits", n, MaxLoadableShards))
	}
	return plan, nil
}

// tensorSizes returns each tensor's data size, checking it against Size
// where Size is set.
func tensorSizes(tensors []gguf.TensorInfo) ([]int64, error) {
	sizes := make([]int64, len(tensors))
	for i, t := range tensors {
		size, err := t.Type.TensorSize(t.Shape)
		if err != nil {
			return nil, fmt.Errorf("splitter: tensor %q: %w", t.Name, err)
		}
		if t.Size != 0 && t.Size != size {
			return nil, fmt.Errorf("splitter: tensor %q: Size %d, but a %s tensor of shape %v takes %d bytes", t.Name, t.Size, t.Type, t.Shape, size)
		}
		sizes[i] = size
	}
	return sizes, nil
}

// alignmentOf returns the data alignment of a file with metadata md, which
// gguf.FileSize has already checked.
func alignmentOf(md gguf.Metadata) int64 {
	if a, ok := md.Uint(gguf.KeyAlignment); ok && a > 0 {
		return int64(a)
	}
	return gguf.DefaultAlignment
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
