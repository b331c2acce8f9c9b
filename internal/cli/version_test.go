package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/cpu"
)

func TestBuildFactsString(t *testing.T) {
	f := BuildFacts{Module: "v1.2.3", Revision: "0123456789abcdef0123", Time: "2025-01-02T03:04:05Z", Modified: true,
		Go: "go1.26.8", Platform: "linux/amd64", Kernels: "amd64 AVX2 FMA F16C"}
	want := "v1.2.3, revision 0123456789ab+dirty of 2025-01-02T03:04:05Z, go1.26.8 linux/amd64, kernels: amd64 AVX2 FMA F16C"
	if got := f.String(); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	f = BuildFacts{Module: "(devel)", Go: "go1.26.8", Platform: "linux/arm64", Kernels: "portable Go"}
	if got := f.String(); got != "(devel), unknown revision, go1.26.8 linux/arm64, kernels: portable Go" {
		t.Errorf("%q", got)
	}
}

func TestKernelFeatures(t *testing.T) {
	if got := kernelFeatures("netgo,purego"); got != "portable Go (purego build)" {
		t.Errorf("purego: %q", got)
	}
	got := kernelFeatures("")
	switch {
	case runtime.GOARCH != "amd64":
		if got != "portable Go" {
			t.Errorf("%s: %q", runtime.GOARCH, got)
		}
	case !cpu.X86.HasAVX2:
		if !strings.HasPrefix(got, "portable Go") {
			t.Errorf("without AVX2: %q", got)
		}
	default:
		if !strings.HasPrefix(got, "amd64 AVX2") || strings.Contains(got, "FMA") != cpu.X86.HasFMA || strings.Contains(got, "F16C") != cpu.X86.HasF16C {
			t.Errorf("%q for %+v", got, cpu.X86)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	s := &Set{Program: "prog"}
	s.Register(VersionCommand("prog"))
	var out, errOut bytes.Buffer
	if code := s.Run([]string{"version"}, &out, &errOut); code != 0 || errOut.Len() > 0 ||
		out.String() != Version("prog")+"\n" || strings.Count(out.String(), "\n") != 1 || !strings.HasPrefix(out.String(), "prog ") {
		t.Errorf("version: exit %d, %q, %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := s.Run([]string{"version", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("version --json: exit %d", code)
	}
	var doc struct {
		Schema, Program, Version, Go, Kernels string
		Warnings                              []Warning
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Schema != "gquant.version/1" || doc.Program != "prog" ||
		doc.Version != Version("prog") || doc.Go != runtime.Version() || doc.Kernels == "" || doc.Warnings == nil {
		t.Errorf("version --json: %v %+v", err, doc)
	}
	if code := s.Run([]string{"version", "extra"}, &out, &errOut); code != 2 {
		t.Errorf("version extra: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{{[]string{"--version"}, true}, {[]string{"-V"}, true}, {[]string{"--version", "x"}, false}, {[]string{"version"}, false}, {nil, false}} {
		if IsVersionFlag(tc.args) != tc.want {
			t.Errorf("IsVersionFlag(%q) = %v", tc.args, !tc.want)
		}
	}
}
