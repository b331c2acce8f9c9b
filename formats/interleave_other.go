//go:build !amd64 || purego

package formats

func interleaveRows8SIMD(group, base []byte, nb, hdr, words int) bool { return false }
