package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const tinyModel = "../../testdata/tiny-deepseek2-bf16.gguf"

// writeDat writes a one-entry legacy imatrix.
func writeDat(t *testing.T, path, name string, values []float32) {
	t.Helper()
	var b bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&b, le, int32(1))
	binary.Write(&b, le, int32(len(name)))
	b.WriteString(name)
	binary.Write(&b, le, int32(1))
	binary.Write(&b, le, int32(len(values)))
	binary.Write(&b, le, values)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestQuantizeBadInput(t *testing.T) {
	dir := t.TempDir()
	in, err := filepath.Abs(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	badRecipe := filepath.Join(dir, "bad.recipe")
	os.WriteFile(badRecipe, []byte("# ok\nblk\\.0\\..*=q8_0\nthis line has no type\n"), 0o644)
	badRegex := filepath.Join(dir, "regex.recipe")
	os.WriteFile(badRegex, []byte("blk\\.(0|1=q8_0\n"), 0o644)
	wrongSize := filepath.Join(dir, "size.dat")
	writeDat(t, wrongSize, "blk.0.ffn_up.weight", make([]float32, 100))
	nan := filepath.Join(dir, "nan.dat")
	writeDat(t, nan, "blk.0.ffn_up.weight", []float32{float32(math.NaN()), 1})
	copyIn := filepath.Join(dir, "copy.gguf")
	raw, _ := os.ReadFile(in)
	os.WriteFile(copyIn, raw, 0o644)

	for _, tc := range []struct {
		name string
		args []string
		want string // in the error message
	}{
		{"recipe line", []string{"--recipe", badRecipe, in, "OUT", "Q8_0"}, "bad.recipe:3"},
		{"custom-q item", []string{"--custom-q", "blk=q8_0,nonsense", in, "OUT", "Q8_0"}, "nonsense"},
		{"unknown type", []string{"--custom-q", "blk=q4_kk", in, "OUT", "Q8_0"}, "q4_K"},
		{"unknown file type", []string{in, "OUT", "Q4_K_Q"}, "Q4_K"},
		{"invalid regex", []string{"--recipe", badRegex, in, "OUT", "Q8_0"}, "regex.recipe:1"},
		{"imatrix size", []string{"--imatrix", wrongSize, in, "OUT", "Q4_K_M"}, "blk.0.ffn_up.weight"},
		{"imatrix NaN", []string{"--imatrix", nan, in, "OUT", "Q4_K_M"}, "NaN"},
		{"output is input", []string{copyIn, copyIn, "Q8_0"}, "copy.gguf"},
		{"missing input", []string{filepath.Join(dir, "nope.gguf"), "OUT", "Q8_0"}, "nope.gguf"},
		{"needs imatrix", []string{in, "OUT", "IQ2_XS"}, "importance matrix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".gguf")
			args := []string{"quantize"}
			for _, a := range tc.args {
				if a == "OUT" {
					a = out
				}
				args = append(args, a)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code == 0 {
				t.Fatalf("accepted; stdout: %s", stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("message %q does not mention %q", stderr.String(), tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("output %s left behind", out)
			}
		})
	}
	if got, _ := os.ReadFile(copyIn); !bytes.Equal(got, raw) {
		t.Error("the input was modified")
	}
	assertNoTemp(t, dir)
}

// assertNoTemp fails if a writer's temporary file is left in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestQuantizeDiskFull runs a quantize in a child process whose file size
// limit makes every write past 1 MiB fail, as a full disk does.
func TestQuantizeDiskFull(t *testing.T) {
	if os.Getenv("GQUANT_DISKFULL_CHILD") != "" {
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Skip("cannot limit the file size:", err)
		}
		code := run([]string{"quantize", os.Getenv("GQUANT_DISKFULL_IN"), os.Getenv("GQUANT_DISKFULL_OUT"), "Q8_0"}, os.Stdout, os.Stderr)
		os.Exit(code)
	}
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "out.gguf")
	cmd := exec.Command(os.Args[0], "-test.run=^TestQuantizeDiskFull$")
	cmd.Env = append(os.Environ(), "GQUANT_DISKFULL_CHILD=1", "GQUANT_DISKFULL_IN="+in, "GQUANT_DISKFULL_OUT="+out)
	msg, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("quantize succeeded past the size limit: %s", msg)
	}
	if !strings.Contains(string(msg), "file too large") && !strings.Contains(string(msg), "no space") {
		t.Errorf("error does not say the write failed: %s", msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a partial output was left under the final name")
	}
	assertNoTemp(t, dir)
}
