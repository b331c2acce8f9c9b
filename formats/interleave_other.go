//go:build !amd64 || purego

package formats

func interleaveRows8SIMD(group, base []byte, rowBytes, nb, hdr, words int) bool { return false }
