package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/golden"
	"github.com/gquant/gquant/quantize"
)

// TestRowsGolden runs `gquant rows quantize` on the golden kernel input for a
// few types and compares with the reference's bytes, then dequantizes them.
func TestRowsGolden(t *testing.T) {
	dir := t.TempDir()
	in := golden.Path(t, "kernels", "input.f32")
	w := golden.Path(t, "kernels", "imatrix.f32")
	for _, c := range golden.Kernels(t) {
		if c.Type != "q8_0" && c.Type != "Q4_0" && c.Type != "q4_0" && c.Type != "bf16_r16" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			typ, _ := formats.ParseType(c.Type)
			if !quantize.Supported(typ) {
				t.Skipf("%s not registered in quantize", typ)
			}
			out := filepath.Join(dir, c.File)
			args := []string{"rows", "quantize", "--type", strings.ToUpper(c.Type), "--cols", "1024", in, out}
			if c.Imatrix {
				args = append(args, "--imatrix", w)
			}
			var stderr bytes.Buffer
			if code := run(args, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, golden.ReadFile(t, "kernels", c.File)) {
				t.Fatalf("%s differs from the reference", out)
			}
			if c.Dequant == "" || !formats.CanDequantize(typ) {
				return
			}
			deq := filepath.Join(dir, c.File+".f32")
			if code := run([]string{"rows", "dequantize", "--type", c.Type, "--cols", "1024", out, deq}, &bytes.Buffer{}, &stderr); code != 0 {
				t.Fatalf("dequantize: exit %d: %s", code, stderr.String())
			}
			gotDeq, _ := os.ReadFile(deq)
			if !bytes.Equal(gotDeq, golden.ReadFile(t, "kernels", c.Dequant)) {
				t.Fatalf("%s differs from the reference dequantization", deq)
			}
		})
	}
}

func TestRowsErrors(t *testing.T) {
	dir := t.TempDir()
	f32 := filepath.Join(dir, "in.f32")
	if err := os.WriteFile(f32, make([]byte, 4*64), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "odd.f32")
	if err := os.WriteFile(odd, make([]byte, 4*64+2), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.bin")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // substring of stderr
	}{
		{"no mode", []string{"rows"}, 2, "usage"},
		{"unknown type", []string{"rows", "quantize", "--type", "q4_9", "--cols", "32", f32, out}, 2, "q4_9"},
		{"not a target", []string{"rows", "quantize", "--type", "q4_0_4x4", "--cols", "32", f32, out}, 2, "not a gquant target"},
		// Types without a kernel are usage errors like unknown ones (they
		// were exit 1, after the input was read).
		{"no quantizer", []string{"rows", "quantize", "--type", "f32", "--cols", "32", f32, out}, 2, "f32"},
		{"no dequantizer", []string{"rows", "dequantize", "--type", "i32", "--cols", "32", f32, out}, 2, "i32"},
		{"missing input", []string{"rows", "quantize", "--type", "q8_0", "--cols", "32", filepath.Join(dir, "nope.f32"), out}, 1, "nope.f32"},
		{"odd input", []string{"rows", "quantize", "--type", "q8_0", "--cols", "32", odd, out}, 1, "odd.f32"},
		{"partial row", []string{"rows", "quantize", "--type", "q8_0", "--cols", "96", f32, out}, 1, "in.f32"},
		{"bad imatrix", []string{"rows", "quantize", "--type", "q8_0", "--cols", "32", "--imatrix", f32, f32, out}, 1, "in.f32"},
		{"partial dequant row", []string{"rows", "dequantize", "--type", "q8_0", "--cols", "32", odd, out}, 1, "odd.f32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "input") || strings.Contains(tc.name, "row") || strings.Contains(tc.name, "imatrix") {
				if !quantize.Supported(formats.Q8_0) {
					t.Skip("q8_0 not registered in quantize")
				}
			}
			var stderr bytes.Buffer
			code := run(tc.args, &bytes.Buffer{}, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr.String(), tc.code, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written on failure", out)
			}
		})
	}
}

// TestRowsRefusesInvalidOutput: a kernel output with a non-finite block
// scale (q4_K with all-zero importance weights, q8_0 of values near the
// float32 limit) is an error naming the row and block, and nothing is
// written; it used to be written with exit 0, rows the reference's kernel
// aborts on and llama-quantize refuses to load.
func TestRowsRefusesInvalidOutput(t *testing.T) {
	dir := t.TempDir()
	f32 := func(name string, v func(i int) float32) string {
		b := make([]byte, 4*256)
		for i := range 256 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v(i)))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rows := f32("rows.f32", func(i int) float32 { return float32(i%17) - 8 })
	zero := f32("zero.f32", func(int) float32 { return 0 })
	huge := f32("huge.f32", func(i int) float32 { return 3e38 * float32(1-2*(i%2)) })
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--type", "q4_K", "--imatrix", zero, rows}, "row 0 block 0: a q4_K block scale is NaN"},
		{[]string{"--type", "q8_0", huge}, "row 0 block 0: a q8_0 block scale is infinity"},
	} {
		out := filepath.Join(dir, "out.bin")
		args := append([]string{"rows", "quantize", "--cols", "256"}, tt.args...)
		args = append(args, out)
		var stderr bytes.Buffer
		if code := run(args, &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 mentioning %q", args, code, stderr.String(), tt.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: output written (%v)", args, err)
		}
	}
}
