package cpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// The flags agree with what the kernel reports in /proc/cpuinfo.
func TestAgainstProcCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("no /proc/cpuinfo on amd64 here")
	}
	var flags map[string]bool
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = map[string]bool{}
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	if flags == nil {
		t.Skip("no flags line")
	}
	if !X86.HasAVX2 && !X86.HasFMA && !X86.HasF16C {
		t.Skip("purego build or no AVX: nothing to compare")
	}
	for _, tc := range []struct {
		name string
		have bool
	}{{"avx2", X86.HasAVX2}, {"fma", X86.HasFMA}, {"f16c", X86.HasF16C}, {"avx512", X86.HasAVX512}} {
		if tc.name == "avx512" {
			// The kernel lists the subsets; the OS state is implied.
			flags["avx512"] = flags["avx512f"] && flags["avx512dq"] && flags["avx512bw"] && flags["avx512vl"]
		}
		if tc.have != flags[tc.name] {
			t.Errorf("%s: cpuid says %v, /proc/cpuinfo says %v", tc.name, tc.have, flags[tc.name])
		}
	}
}
