//go:build amd64 && !purego

package cpu

func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)
func xgetbv0() (eax, edx uint32)

func init() {
	maxLeaf, _, _, _ := cpuid(0, 0)
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
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 {
		return
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	X86.HasAVX2 = ebx7&avx2 != 0
	X86.HasFMA = ecx1&fma != 0
	X86.HasF16C = ecx1&f16c != 0
}
