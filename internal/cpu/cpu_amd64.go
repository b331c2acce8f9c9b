//go:build amd64 && !purego

package cpu

import "os"

func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)
func xgetbv0() (eax, edx uint32)

func init() {
	maxLeaf, ebx0, ecx0, edx0 := cpuid(0, 0)
	X86.Intel = ebx0 == 0x756e6547 && edx0 == 0x49656e69 && ecx0 == 0x6c65746e // "Genu" "ineI" "ntel"
	if maxLeaf < 7 {
		return
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
		f16c    = 1 << 29
	)
	if ecx1&(osxsave|avx) != osxsave|avx {
		return
	}
	// The OS must save the XMM and YMM registers (XCR0 bits 1 and 2).
	xcr0, _ := xgetbv0()
	if xcr0&6 != 6 {
		return
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const (
		avx2     = 1 << 5
		avx512f  = 1 << 16
		avx512dq = 1 << 17
		avx512bw = 1 << 30
		avx512vl = 1 << 31
		avx512   = avx512f | avx512dq | avx512bw | avx512vl
	)
	X86.HasAVX2 = ebx7&avx2 != 0
	// AVX-512 also needs the opmask and both halves of the ZMM state
	// saved (XCR0 bits 5, 6 and 7).
	X86.HasAVX512 = ebx7&avx512 == avx512 && xcr0&0xe0 == 0xe0
	X86.HasFMA = ecx1&fma != 0
	X86.HasF16C = ecx1&f16c != 0
	applyGODEBUG(os.Getenv("GODEBUG"))
}
