//go:build amd64 && !purego

package quantize_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// objdumpFunc is a function's first line in objdump -d output.
var objdumpFunc = regexp.MustCompile(`^[0-9a-f]+ <(.*)>:$`)

// TestAVX512OnlyIn512Kernels disassembles the gquant command (which links
// every kernel family and formats' conversions; go test strips the test
// binary's symbols, so it is built here) and checks that AVX-512
// (EVEX-encoded, first byte 0x62) instructions appear only in functions
// whose names say so ("512"). The Go assembler silently picks the EVEX
// form of an instruction whose VEX form does not exist (VPSRLD with a
// memory operand, say), which would put an AVX-512 instruction into an
// AVX2 kernel: it runs on the AVX-512 machines the tests run on and stops
// with SIGILL on an AVX2-only one.
//
// It also checks that the assembly functions touch vector registers only
// with VEX or EVEX instructions: a legacy SSE instruction (MOVQ AX, X15,
// say, which the Go assembler does not turn into VMOVQ) between 256-bit
// instructions costs Intel cores a state transition every time. One per
// block made mxfp4 16 times slower on a Xeon than on an EPYC, and the AVX2
// iq1_s search 3.5 times. It needs GNU objdump (binutils).
func TestAVX512OnlyIn512Kernels(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("objdump (binutils) is not installed")
	}
	if testing.Short() {
		t.Skip("builds the gquant command")
	}
	bin := filepath.Join(t.TempDir(), "gquant")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gquant/gquant/cmd/gquant").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(objdump, "-d", bin).Output()
	if err != nil {
		t.Skipf("objdump -d: %v", err)
	}
	bad, sse := map[string]int{}, map[string]int{}
	fn, kernels := "", 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := objdumpFunc.FindStringSubmatch(line); m != nil {
			fn = m[1]
			if strings.Contains(fn, "gquant/gquant/") && strings.HasSuffix(fn, ".abi0") {
				kernels++
			}
			continue
		}
		if !strings.Contains(fn, "gquant/gquant/") {
			continue
		}
		// "addr:\tbytes\tmnemonic operands"; a long instruction's
		// remaining bytes follow on lines without a mnemonic.
		f := strings.Split(line, "\t")
		if len(f) < 3 || strings.TrimSpace(f[2]) == "" {
			continue
		}
		if strings.HasSuffix(fn, ".abi0") && strings.Contains(f[2], "%xmm") && !strings.HasPrefix(f[2], "v") {
			sse[fn]++
		}
		if strings.HasPrefix(strings.TrimSpace(f[1]), "62 ") && !strings.Contains(fn, "512") {
			bad[fn]++
		}
	}
	if kernels == 0 {
		t.Skip("objdump found no assembly functions of this module (stripped binary?)")
	}
	for fn, n := range bad {
		t.Errorf("%s: %d AVX-512 (EVEX) instruction(s) in a function not named for AVX-512", fn, n)
	}
	for fn, n := range sse {
		t.Errorf("%s: %d legacy SSE instruction(s) on vector registers (use the V form)", fn, n)
	}
	t.Logf("%d assembly functions checked", kernels)
}
