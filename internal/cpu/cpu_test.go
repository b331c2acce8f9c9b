package cpu

import (
	"os"
	"runtime"
	"slices"
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
	vendor := ""
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "vendor_id" && vendor == "" {
			vendor = strings.TrimSpace(v)
		}
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
	if strings.Contains(os.Getenv("GODEBUG"), "cpu.") {
		t.Skip("GODEBUG switches CPU features off")
	}
	if !X86.HasAVX2 && !X86.HasFMA && !X86.HasF16C {
		t.Skip("purego build or no AVX: nothing to compare")
	}
	if X86.Intel != (vendor == "GenuineIntel") {
		t.Errorf("Intel: cpuid says %v, /proc/cpuinfo's vendor is %q", X86.Intel, vendor)
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

// GODEBUG's cpu options only take features away, with the runtime's names.
func TestApplyGODEBUG(t *testing.T) {
	all := struct{ avx2, fma, f16c, avx512 bool }{true, true, true, true}
	for _, tc := range []struct {
		env                     string
		avx2, fma, f16c, avx512 bool
	}{
		{"", true, true, true, true},
		{"cpu.avx512f=off", true, true, true, false},
		{"gctrace=1,cpu.avx512bw=off", true, true, true, false},
		{"cpu.avx2=off", false, false, false, false},
		{"cpu.all=off", false, false, false, false},
		{"cpu.fma=off", true, false, true, true},
		{"cpu.avx512f=on", true, true, true, true},
		{"cpu.avx512f", true, true, true, true},
		{"cpu.sse3=off,madvdontneed=1", true, true, true, true},
	} {
		saved := X86
		X86.HasAVX2, X86.HasFMA, X86.HasF16C, X86.HasAVX512 = all.avx2, all.fma, all.f16c, all.avx512
		applyGODEBUG(tc.env)
		got := []bool{X86.HasAVX2, X86.HasFMA, X86.HasF16C, X86.HasAVX512}
		X86 = saved
		if want := []bool{tc.avx2, tc.fma, tc.f16c, tc.avx512}; !slices.Equal(got, want) {
			t.Errorf("GODEBUG=%q: AVX2, FMA, F16C, AVX512 = %v, want %v", tc.env, got, want)
		}
	}
}
