package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/internal/bytesize"
	"github.com/gquant/gquant/splitter"
)

// splitFlags are the shard options shared by split, quantize and repack.
type splitFlags struct {
	maxSize           string
	maxTensors        int
	metadataOnlyFirst bool
	fs                *pflag.FlagSet
}

func (s *splitFlags) register(fs *pflag.FlagSet) {
	s.fs = fs
	fs.StringVar(&s.maxSize, "split-max-size", "", "most tensor data per shard: 2M, 4G (powers of 1000, as gguf-split), 500MiB, or bytes")
	fs.IntVar(&s.maxTensors, "split-max-tensors", 0, fmt.Sprintf("most tensors per shard (%d when only --no-tensor-first-split is given)", splitter.DefaultMaxTensors))
	fs.BoolVar(&s.metadataOnlyFirst, "no-tensor-first-split", false, "put only the metadata in the first shard")
}

// set reports whether any shard option was given.
func (s *splitFlags) set() bool {
	return s.maxSize != "" || s.maxTensors != 0 || s.metadataOnlyFirst || s.changed("split-max-size") || s.changed("split-max-tensors")
}

func (s *splitFlags) changed(name string) bool {
	return s.fs != nil && s.fs.Changed(name)
}

// limits returns the parsed limits (nil when no option was given).
func (s *splitFlags) limits() (*splitter.Limits, error) {
	if !s.set() {
		return nil, nil
	}
	if s.changed("split-max-size") && s.maxSize == "" {
		return nil, fmt.Errorf("--split-max-size: empty size (give bytes, or 2M, 4G, 500MiB)")
	}
	if s.maxTensors < 0 || s.changed("split-max-tensors") && s.maxTensors == 0 {
		return nil, fmt.Errorf("--split-max-tensors must be positive")
	}
	l := &splitter.Limits{MaxTensors: s.maxTensors, MetadataOnlyFirst: s.metadataOnlyFirst}
	if s.maxSize != "" {
		n, err := bytesize.Parse(s.maxSize)
		if err != nil {
			return nil, fmt.Errorf("--split-max-size: %w", err)
		}
		if n < 1 {
			return nil, fmt.Errorf("--split-max-size: %q is less than one byte", s.maxSize)
		}
		l.MaxBytes = n
	}
	return l, nil
}
