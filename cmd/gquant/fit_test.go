package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/fit"
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/internal/modelgen"
)

// fitArgs are a fit of the tiny model on two devices, with a KV cache
// reserve and tied expert tensors, small samples to keep it quick.
func fitArgs(dir string, extra ...string) []string {
	return append([]string{"fit", "--types", "bf16,q8_0,q6_0,q5_0,iq4_nl,q6_K,q4_K,q4_k_r4,iq4_ks,iq3_ks",
		"--place", "exps=CPU", "--place", ".*=GPU", "--budget", "CPU=2MB,GPU=3500KB",
		"--reserve", "GPU=kv:512:f16", "--tie", "ffn_gate_exps,ffn_up_exps",
		"--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet",
		"--cache", filepath.Join(dir, "fit.cache"), tinyModel}, extra...)
}

// TestFitRecipeQuantizes runs gquant fit on the tiny model, plans its
// recipe with gquant plan under the same placement and budgets (it fits,
// with the bytes the fit predicted), quantizes with it (every tensor gets
// the fitted type, the file the predicted size), and refits from the cache
// without measuring anything.
func TestFitRecipeQuantizes(t *testing.T) {
	dir := t.TempDir()
	recipe := filepath.Join(dir, "recipe.txt")
	code, stdout, stderr := gquantOutput(fitArgs(dir, "-o", recipe)...)
	if code != 0 {
		t.Fatalf("gquant fit: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"predicted KL divergence", "CPU", "GPU", "reserve kv:512:f16", "more"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = gquantOutput(fitArgs(dir, "--json")...)
	if code != 0 {
		t.Fatalf("gquant fit --json: exit %d\n%s", code, stderr)
	}
	var res fit.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output: %v", err)
	}
	if res.Measured.Measured != 0 || res.Measured.Cached == 0 {
		t.Errorf("refit measured %d samples and found %d in the cache, want all from the cache", res.Measured.Measured, res.Measured.Cached)
	}
	// The KV cache: 3 layers x 512 tokens x (kv_lora_rank 256 + rope 64) x 2 bytes.
	gpu := res.Devices[1]
	if gpu.Device != "GPU" || len(gpu.Reserves) != 1 || gpu.Reserves[0].Bytes != 3*512*320*2 || gpu.Available != 3500000-3*512*320*2 {
		t.Errorf("GPU: %+v", gpu)
	}

	budgets := fmt.Sprintf("CPU=%dB,GPU=%dB", res.Devices[0].Available, res.Devices[1].Available)
	rep := planJSON(t, "plan", "--recipe", recipe, "--place", "exps=CPU", "--place", ".*=GPU", "--budget", budgets,
		tinyModel, filepath.Join(dir, "out.gguf"), res.FileType)
	if !rep.Fits() {
		t.Errorf("gquant plan: the recipe does not fit %s", budgets)
	}
	for i, d := range rep.Devices {
		if d.Bytes != res.Devices[i].Bytes {
			t.Errorf("%s: plan %d bytes, fit %d", d.Device, d.Bytes, res.Devices[i].Bytes)
		}
	}
	if rep.Total.Bytes != res.FileSize {
		t.Errorf("plan: file of %d bytes, fit predicted %d", rep.Total.Bytes, res.FileSize)
	}

	out := filepath.Join(dir, "out.gguf")
	code, _, stderr = gquantOutput("quantize", "--recipe", recipe, tinyModel, out, res.FileType, "2")
	if code != 0 {
		t.Fatalf("gquant quantize --recipe: exit %d\n%s", code, stderr)
	}
	m, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Size() != res.FileSize {
		t.Errorf("quantized file has %d bytes, fit predicted %d", m.Size(), res.FileSize)
	}
	for i, tt := range m.Tensors {
		if tt.Type.String() != res.Tensors[i].Type {
			t.Errorf("%s: quantized as %s, fitted %s", tt.Name, tt.Type, res.Tensors[i].Type)
		}
	}
}

func TestFitCalibrate(t *testing.T) {
	dir := t.TempDir()
	tsv := filepath.Join(dir, "kld.tsv")
	// The sizes are this model's (calibrate refuses another model's
	// table); four mixes are fewer than the parameters, which warns.
	size := func(ft string, rules ...string) int64 {
		args := []string{"plan", tinyModel, filepath.Join(dir, "o.gguf"), ft}
		if len(rules) > 0 {
			args = append(args, "--custom-q", rules[0])
		}
		return planJSON(t, args...).Files[0].Bytes
	}
	table := "mix\trules\tbytes\tkld_mean\tkld_err\n" +
		fmt.Sprintf("filetype:Q8_0\t-\t%d\t0.001\t0.0001\n", size("Q8_0")) +
		fmt.Sprintf("filetype:Q4_K_M\t-\t%d\t0.03\t0.001\n", size("Q4_K_M")) +
		fmt.Sprintf("q8_0+exps-q4_0\texps=q4_0\t%d\t0.01\t0.0005\n", size("Q8_0", "exps=q4_0")) +
		fmt.Sprintf("q8_0+attn-q4_0\tattn=q4_0\t%d\t0.02\t0.0005\n", size("Q8_0", "attn=q4_0"))
	if err := os.WriteFile(tsv, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	gains := filepath.Join(dir, "gains.txt")
	code, stdout, stderr := gquantOutput("fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", tinyModel, tsv, "-o", gains)
	if code != 0 {
		t.Fatalf("gquant fit calibrate: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "q8_0+attn-q4_0") || !strings.Contains(stdout, "pairs ordered otherwise") {
		t.Errorf("report:\n%s", stdout)
	}
	if !strings.Contains(stderr, "warning: 4 measured mix(es) for") {
		t.Errorf("no warning of too few mixes:\n%s", stderr)
	}
	// A mix measured twice is fitted as given, with a warning.
	twice := filepath.Join(dir, "twice.tsv")
	lines := strings.SplitAfter(table, "\n")
	if err := os.WriteFile(twice, []byte(table+strings.Replace(lines[1], "\t0.001\t", "\t0.002\t", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gquantOutput("fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", tinyModel, twice, "-o", filepath.Join(dir, "g3.txt")); code != 0 || !strings.Contains(stderr, "mix filetype:Q8_0 is measured twice (rows 1 and 5") {
		t.Errorf("a mix measured twice: exit %d\n%s", code, stderr)
	}
	// Gains a gains file can hold, and JSON, whatever the fit.
	code, stdout, stderr = gquantOutput("fit", "calibrate", "--json", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", tinyModel, tsv, "-o", gains, "--force")
	var doc struct {
		Schema   string
		Rows     []struct{ Mix string }
		Warnings []cli.Warning
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || doc.Schema != "gquant.fit-calibrate/1" || len(doc.Rows) != 4 || len(doc.Warnings) != 1 {
		t.Errorf("calibrate --json: exit %d, %v, %+v\n%s", code, err, doc, stderr)
	}
	// Another model's table (the medium model's sizes) is refused.
	other := filepath.Join(dir, "other.tsv")
	if err := os.WriteFile(other, []byte(strings.Replace(table, "filetype:Q8_0\t-\t", "filetype:Q8_0\t-\t1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := gquantOutput("fit", "calibrate", "--quiet", tinyModel, other, "-o", filepath.Join(dir, "g2.txt")); code != 1 || !strings.Contains(stderr, "measured on another model") {
		t.Errorf("another model's table: exit %d\n%s", code, stderr)
	}
	if _, err := fit.LoadGains(gains); err != nil {
		t.Errorf("the gains file does not read back: %v", err)
	}
	dir2 := t.TempDir()
	code, _, stderr = gquantOutput(fitArgs(dir2, "--gains", gains, "-o", filepath.Join(dir2, "r.txt"))...)
	if code != 0 {
		t.Errorf("gquant fit --gains: exit %d\n%s", code, stderr)
	}
}

func TestFitErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fit"}, 2, "need exactly one input model"},
		{[]string{"fit", tinyModel}, 1, "no budget"},
		{[]string{"fit", "--budget", "CPU=3MiB", "--reserve", "CPU=4MiB", tinyModel}, 1, "device CPU: fit: budget too small: its reserves (4MiB) come to more than its budget 3MiB (3145728 bytes)"},
		{[]string{"fit", "--budget", "CPU=3MiB", "--threads", "-1", tinyModel}, 2, "--threads -1"},
		{[]string{"fit", "--budget", "CPU=3MiB", "--chunk-weights", "0", tinyModel}, 2, "--chunk-weights 0"},
		{[]string{"fit", "--budget", "CPU=3MiB", "--max-chunks", "0", tinyModel}, 2, "--max-chunks 0"},
		{[]string{"fit", "--budget", "CPU=3MiB", "--more", "0", tinyModel}, 2, "--more 0"},
		{[]string{"fit", "--budget", "CPU=1MiB,CPU=4MiB", tinyModel}, 2, "two budgets for CPU"},
		{[]string{"fit", "calibrate", "--budget", "CPU=1MiB", "--more", "0", tinyModel, "k.tsv"}, 2, "--budget, --more: not an option of fit calibrate"},
		{[]string{"fit", "--budget", "CPU=1MB,GPU=1MB", tinyModel}, 1, "without placement rules give exactly one budget"},
		{[]string{"fit", "--budget", "CPU=1KB", "--types", "q8_0", tinyModel}, 1, "budget too small"},
		{[]string{"fit", "--budget", "CPU=1MB", "--types", "nope", tinyModel}, 2, "unknown type"},
		{[]string{"fit", "--budget", "CPU=1MB", "--reserve", "CPU=kv:x:f16", tinyModel}, 2, "bad reserve"},
		// A type llama.cpp's -ctk/-ctv refuse: a usage error listing those it takes.
		{[]string{"fit", "--budget", "CPU=1MB", "--reserve", "CPU=kv:512:q4_K", tinyModel}, 2,
			`--reserve: fit: bad reserve: "CPU=kv:512:q4_K": q4_K is no KV cache type: llama.cpp's -ctk and -ctv take f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, q6_0, q8_KV`},
		{[]string{"fit", "--budget", "CPU=1MB", "--tie", "ffn_gate_exps", tinyModel}, 2, "two or more name fragments"},
		{[]string{"fit", "--budget", "CPU=1MB", "--tie", "ffn_gate_exps,", tinyModel}, 2, `--tie "ffn_gate_exps,": fragment 2 is empty`},
		{[]string{"fit", "--budget", "CPU=1MB", "--tie", ",", tinyModel}, 2, `--tie ",": fragment 1 is empty`},
		{[]string{"fit", "--budget", "CPU=1MB", "--tie", "ffn_up_exps,ffn_gate_exps,ffn_up_exps", tinyModel}, 2, `fragment "ffn_up_exps" is given twice`},
		{[]string{"fit", "--place", "exps=CPU", "--budget", "CPU=1MB", tinyModel}, 1, "matches no placement rule"},
		{[]string{"fit", "calibrate", tinyModel}, 2, "need the model and the KLD table"},
		// File errors name the flag as well as the file.
		{[]string{"fit", "--budget", "CPU=1MB", "--gains", "no-such-gains.txt", tinyModel}, 1, "gquant fit: --gains: fit: stat no-such-gains.txt: no such file"},
	} {
		code, _, stderr := gquantOutput(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, stderr)
		}
	}
}

// A binary file given as a text file (the model as --gains or --place-file)
// is refused with its first line quoted, cut: the message stays a few
// lines, not kilobytes of escapes and stray characters. The errors come
// before any measuring.
func TestFitBinaryTextFiles(t *testing.T) {
	for _, flag := range []string{"--gains", "--place-file"} {
		code, _, stderr := gquantOutput("fit", "--budget", "CPU=5MB", flag, tinyModel, tinyModel)
		if code == 0 || !strings.Contains(stderr, `"GGUF\x03\x00`) || !strings.Contains(stderr, `"... (`) {
			t.Errorf("%s MODEL: exit %d, stderr %q", flag, code, stderr)
		}
		if len(stderr) > 1000 {
			t.Errorf("%s MODEL: %d bytes of error:\n%s", flag, len(stderr), stderr)
		}
	}
}

// fit -o and fit calibrate -o follow the rules of every command's outputs
// (cli.Files), checked before any measuring: never one of the inputs (the
// model, the KLD table, the cache), an existing file only with --force, a
// read-only one never; --json with -o writes the recipe and prints the
// JSON; -o may be in a directory that does not exist yet.
func TestFitOutputs(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gguf")
	copyFile(t, model, tinyModel)
	modelBytes, _ := os.ReadFile(model)
	tsv := filepath.Join(dir, "kld.tsv")
	table := []byte("mix\trules\tbytes\tkld_mean\tkld_err\nfiletype:Q8_0\t-\t4700000\t0.001\t0.0001\nfiletype:Q4_K_M\t-\t2600000\t0.03\t0.001\n")
	os.WriteFile(tsv, table, 0o644)
	recipe := filepath.Join(dir, "r.txt")
	earlier := []byte("# an earlier recipe\nattn=q8_0\n")
	os.WriteFile(recipe, earlier, 0o644)
	readOnly := filepath.Join(dir, "ro.txt")
	os.WriteFile(readOnly, earlier, 0o444)
	gains := filepath.Join(dir, "gains.txt")
	gainsText := []byte("# the built-in gains\nsaturation 0.799\n")
	os.WriteFile(gains, gainsText, 0o644)
	place := filepath.Join(dir, "place.txt")
	placeText := []byte(".*=CPU\n")
	os.WriteFile(place, placeText, 0o644)
	fitArgs := func(extra ...string) []string {
		return append([]string{"fit", "--budget", "CPU=5MB", "--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet"}, extra...)
	}
	calibrate := []string{"fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet", model, tsv}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{fitArgs(model, "-o", model), "is the input"},
		{fitArgs("--gains", gains, model, "-o", gains, "--force"), "is the input"},
		{fitArgs("--place-file", place, model, "-o", place, "--force"), "is the input"},
		{fitArgs("--cache", model, model), "is the input"},
		{fitArgs("--cache", recipe, model, "-o", recipe, "--force"), "given for two outputs"},
		{fitArgs(model, "-o", recipe), "pass --force"},
		{fitArgs(model, "-o", readOnly, "--force"), "read-only"},
		{append(calibrate, "-o", tsv), "is the input"},
		{append(calibrate, "-o", model), "is the input"},
		{append(calibrate, "-o", recipe), "pass --force"},
	} {
		start := time.Now()
		code, _, stderr := gquantOutput(tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want 1 with %q:\n%s", strings.Join(tc.args, " "), code, tc.want, stderr)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused after %s, not before measuring", strings.Join(tc.args, " "), d)
		}
	}
	fileUnchanged(t, model, modelBytes)
	fileUnchanged(t, tsv, table)
	fileUnchanged(t, gains, gainsText)
	fileUnchanged(t, place, placeText)
	fileUnchanged(t, recipe, earlier)
	fileUnchanged(t, readOnly, earlier)

	cache := filepath.Join(dir, "fit.cache")
	out := filepath.Join(dir, "out", "r.txt")
	code, stdout, stderr := gquantOutput(fitArgs("--cache", cache, "--json", model, "-o", out)...)
	if code != 0 {
		t.Fatalf("fit --json -o into a new directory: exit %d\n%s", code, stderr)
	}
	var res fit.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Errorf("--json -o: stdout is not the JSON document: %v", err)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.HasPrefix(string(b), "# gquant fit recipe") {
		t.Errorf("--json -o: the recipe was not written: %v", err)
	}
	if _, err := fit.LoadCache(cache); err != nil {
		t.Errorf("the cache was not written: %v", err)
	}
	if code, _, stderr := gquantOutput(fitArgs(model, "-o", recipe, "--force")...); code != 0 {
		t.Errorf("-o an existing file with --force: exit %d\n%s", code, stderr)
	}
	assertNoTemp(t, dir)
}

// A recipe that cannot be written whole (here the file size limit of a
// child process; a full disk alike) leaves the earlier recipe as it was
// and no temporary file: it was written beside it and renamed into place.
func TestFitOutputDiskFull(t *testing.T) {
	if os.Getenv("GQUANT_FIT_DISKFULL_CHILD") != "" {
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: 1024, Max: 1024}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Skip("cannot limit the file size:", err)
		}
		code := run([]string{"fit", "--budget", "CPU=5MB", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", "--force",
			os.Getenv("GQUANT_FIT_DISKFULL_IN"), "-o", os.Getenv("GQUANT_FIT_DISKFULL_OUT")}, os.Stdout, os.Stderr)
		os.Exit(code)
	}
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	out := filepath.Join(dir, "r.txt")
	earlier := []byte("# an earlier recipe\nattn=q8_0\n")
	os.WriteFile(out, earlier, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFitOutputDiskFull$")
	cmd.Env = append(os.Environ(), "GQUANT_FIT_DISKFULL_CHILD=1", "GQUANT_FIT_DISKFULL_IN="+in, "GQUANT_FIT_DISKFULL_OUT="+out)
	msg, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("fit succeeded past the size limit: %s", msg)
	}
	if !strings.Contains(string(msg), "file too large") {
		t.Errorf("error does not say the write failed: %s", msg)
	}
	fileUnchanged(t, out, earlier)
	assertNoTemp(t, dir)
}

// --cache in a directory that does not exist yet: the directory is made,
// as quantize makes its outputs' (the save failed after all the measuring,
// naming a temporary file). The refit reads every sample from that cache.
func TestFitCacheNewDirectory(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "new", "dir", "fit.cache")
	args := []string{"fit", "--budget", "CPU=5MB", "--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet", "--json", "--cache", cache, tinyModel}
	for i := range 2 {
		code, stdout, stderr := gquantOutput(args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, code, stderr)
		}
		var res fit.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		if i == 1 && (res.Measured.Measured != 0 || res.Measured.Cached == 0) {
			t.Errorf("refit measured %d samples and found %d in the cache, want all from the cache", res.Measured.Measured, res.Measured.Cached)
		}
	}
	assertNoTemp(t, filepath.Dir(cache))
}

// A --custom-q pin that decides no tensor (a wrong case here) is a warning,
// as plan warns of a rule that matches nothing.
func TestFitPinDecidingNothing(t *testing.T) {
	code, _, stderr := gquantOutput("fit", "--quiet", "--chunk-weights", "4096", "--max-chunks", "1", "--budget", "CPU=3MiB", "--custom-q", "Attn_kv_b=q4_0", tinyModel)
	if code != 0 || !strings.Contains(stderr, "warning: rule 1 (--custom-q item 1) Attn_kv_b=q4_0 decides no tensor") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// A pin's rule in fit --json counts the tensors and bytes it decides.
func TestFitPinCounts(t *testing.T) {
	code, stdout, stderr := gquantOutput("fit", "--json", "--quiet", "--chunk-weights", "4096", "--max-chunks", "1", "--types", "q4_K,q8_0",
		"--budget", "CPU=3MiB", "--custom-q", "output=q8_0", tinyModel)
	var doc struct {
		Rules []struct {
			Pattern string
			Pinned  bool
			Tensors int
			Bytes   int64
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || len(doc.Rules) == 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, stderr)
	}
	if r := doc.Rules[0]; !r.Pinned || r.Pattern != "output" || r.Tensors == 0 || r.Bytes == 0 {
		t.Errorf("the pin's rule: %+v", r)
	}
}

// TestFitReserveHugeModel: --reserve kv:CTX:TYPE sizes the cache from a
// model's own block_count and head counts, read before anything else
// checks them. A header-only model with block_count 10^18 once kept fit
// looping for ever, one with 2e9 layers of 2^30 tokens reported a 6 MiB
// budget as 7.91 EiB available, and three reserves of 4 EiB let a 6 MiB
// budget pass; each is now an error naming the --reserve value or the
// device, at once.
func TestFitReserveHugeModel(t *testing.T) {
	dir := t.TempDir()
	model := func(name string, set func(md *gguf.Metadata)) string {
		m, err := modelgen.Preset("tiny-llama")
		if err != nil {
			t.Fatal(err)
		}
		set(&m.Metadata)
		path := filepath.Join(dir, name+".gguf")
		if err := modelgen.Write(path, m, modelgen.WriteOptions{HeaderOnly: true}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	loop := model("loop", func(md *gguf.Metadata) {
		md.Set("llama.block_count", gguf.Uint64Value(1e18))
		md.Set("llama.attention.head_count", gguf.ArrayValue([]int32{4, 4}))
	})
	wide := model("wide", func(md *gguf.Metadata) { md.Set("llama.block_count", gguf.Uint32Value(2e9)) })
	const eib4 = "4611686018427387903"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--budget", "CPU=1GiB", "--reserve", "CPU=kv:1000:f16", loop}, 2,
			`--reserve: fit: bad reserve: "CPU=kv:1000:f16": llama.block_count is 1000000000000000000, out of range`},
		{[]string{"--budget", "CPU=6MiB", "--reserve", "CPU=kv:1073741824:f16", wide}, 2,
			`--reserve: fit: bad reserve: "CPU=kv:1073741824:f16": the cache of 2000000000 layers x 1073741824 tokens comes to more than`},
		{[]string{"--budget", "CPU=6MiB", "--reserve", "CPU=" + eib4 + ",CPU=" + eib4 + ",CPU=" + eib4, tinyModel}, 1,
			"device CPU: fit: budget too small: its reserves (" + eib4 + ", " + eib4 + ", " + eib4 + ") come to more than its budget 6MiB"},
	} {
		args := append([]string{"fit", "--quiet"}, tc.args...)
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, _, stderr := gquantOutput(args...)
			done <- result{code, stderr}
		}()
		select {
		case r := <-done:
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s: exit %d, want %d with %q:\n%s", strings.Join(args, " "), r.code, tc.code, tc.want, r.stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still running after 60 s", strings.Join(args, " "))
		}
	}
}

// TestFitDamagedCache: a --cache file whose record cannot be a
// measurement (Num 1e300 over Den 1e-300, an infinite relative error,
// behind a valid checksum) is refused naming the file and the record; it
// once panicked the optimizer ("option with ... bytes and loss +Inf").
func TestFitDamagedCache(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		vals [6]float64 // N, Num, Den, Num2, Den2, NumDen
		want string
	}{
		{"infinite ratio", [6]float64{1, 1e300, 1e-300, 0, 0, 0}, "record 1: Num is 1e+300"},
		{"negative", [6]float64{1, -1, 1, 1, 1, -1}, "record 1: Num is -1"},
	} {
		var b []byte
		b = append(b, "GQFITC1\n"...)
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = binary.LittleEndian.AppendUint64(b, 1) // the key
		for _, v := range tc.vals {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		b = binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".cache")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := gquantOutput("fit", "--quiet", "--budget", "CPU=6MiB", "--cache", path, tinyModel)
		want := "gquant fit: --cache: " + path + ": fit: bad cache file: " + tc.want
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "panic") {
			t.Errorf("%s: exit %d, want 1 with %q:\n%s", tc.name, code, want, stderr)
		}
	}
}

// Two fits sharing a --cache: the later one to save it finds the file the
// other saved since it started. It failed on the rename, after all its
// measuring, without writing its -o recipe and leaving its temporary
// file. Now the recipe comes first, a cache saved meanwhile is merged, and
// a file there that is no cache is left alone with a warning; no temporary
// file stays.
func TestFitCacheSavedMeanwhile(t *testing.T) {
	// other is the cache another fit saves: the measurements of other types.
	otherDir := t.TempDir()
	if code, _, stderr := gquantOutput("fit", "--types", "q8_0,q6_0", "--budget", "CPU=100MB", "--chunk-weights", "4096", "--max-chunks", "1",
		"--quiet", "--cache", filepath.Join(otherDir, "c"), "-o", filepath.Join(otherDir, "r"), tinyModel); code != 0 {
		t.Fatalf("the other fit: exit %d\n%s", code, stderr)
	}
	other, err := os.ReadFile(filepath.Join(otherDir, "c"))
	if err != nil {
		t.Fatal(err)
	}
	otherCache, err := fit.LoadCache(filepath.Join(otherDir, "c"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		meantime []byte // what appears at the cache path while the fit runs
		merged   bool   // the cache then holds both runs' measurements
		warn     string
	}{
		{"a cache saved meanwhile", other, true, ""},
		{"no cache saved meanwhile", nil, false, ""},
		{"another file put there", []byte("not a cache\n"), false, "not saved"},
	}
	defer func() { beforeCacheSave = nil }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cachePath, recipe := filepath.Join(dir, "fit.cache"), filepath.Join(dir, "recipe.txt")
			beforeCacheSave = func() {
				if c.meantime != nil {
					if err := os.WriteFile(cachePath, c.meantime, 0o644); err != nil {
						t.Error(err)
					}
				}
			}
			code, _, stderr := gquantOutput("fit", "--types", "q8_0,q5_0", "--budget", "CPU=100MB", "--chunk-weights", "4096", "--max-chunks", "1",
				"--quiet", "--cache", cachePath, "-o", recipe, tinyModel)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if _, err := os.Stat(recipe); err != nil {
				t.Errorf("no recipe: %v", err)
			}
			if c.warn != "" && !strings.Contains(stderr, c.warn) || c.warn == "" && stderr != "" {
				t.Errorf("stderr %q, want %q", stderr, c.warn)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "fit.cache" && e.Name() != "recipe.txt" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			data, _ := os.ReadFile(cachePath)
			if c.warn != "" {
				if string(data) != string(c.meantime) {
					t.Errorf("the file put there was replaced")
				}
				return
			}
			got, err := fit.LoadCache(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			if c.merged && got.Len() <= otherCache.Len() || got.Len() == 0 {
				t.Errorf("cache holds %d records, the other run's %d (merged: %v)", got.Len(), otherCache.Len(), c.merged)
			}
		})
	}
}

// The small things of fit's output: reserves in gquant.fit/1 have
// snake_case keys like every other key (they were Go field names), an empty
// list is [] not null, the recipe records its command line shell-quoted
// (--place .*=GPU was a glob, a|b a pipeline), sizes have one form in the
// recipe and the report ("4.1e+03 PiB" beside "4.00 EiB"), and calibrate
// prints any divergence as a short number (1e-300 gave a ratio of 300
// digits).
func TestFitOutputForms(t *testing.T) {
	dir := t.TempDir()
	recipe := filepath.Join(dir, "r.txt")
	args := []string{"fit", "--types", "q8_0,bf16", "--place", "norm|exps=CPU", "--place", ".*=GPU", "--budget", "CPU=100MB,GPU=100MB",
		"--reserve", "GPU=kv:64:q8_0,GPU=1.5", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", tinyModel}
	code, stdout, stderr := gquantOutput(append(args, "--json", "-o", recipe)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct {
		Devices []struct {
			Reserves []map[string]any `json:"reserves"`
			More     map[string]any   `json:"more"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc.Devices {
		for _, r := range d.Reserves {
			for k := range r {
				if k != strings.ToLower(k) {
					t.Errorf("reserve key %q is not snake_case", k)
				}
			}
			if r["reserve"] == "1.5" && r["bytes"] != 2.0 {
				t.Errorf("--reserve GPU=1.5 reserves %v bytes, want 2 (rounded up)", r["bytes"])
			}
		}
		if ch, ok := d.More["changes"]; d.More != nil && (!ok || ch == nil) {
			t.Errorf("more.changes is %v, want []", ch)
		}
	}
	text, err := os.ReadFile(recipe)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), `--place 'norm|exps=CPU' --place '.*=GPU'`) {
		t.Errorf("the recipe's command line is not shell-quoted:\n%s", text)
	}
	code, report, stderr := gquantOutput(append(args[:len(args)-2:len(args)-2], tinyModel)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// the report (stderr without -o) and the recipe (stdout) give the file size alike
	recipeSize := regexpFind(t, `file ([0-9.]+ [KMGTPE]?i?B)`, report)
	reportSize := regexpFind(t, `file ([0-9.]+ [KMGTPE]?i?B)`, stderr)
	if recipeSize == "" || recipeSize != reportSize {
		t.Errorf("file size %q in the recipe, %q in the report", recipeSize, reportSize)
	}
	// calibrate: a divergence of 1e-300
	tsv := filepath.Join(dir, "kld.tsv")
	size := func(ft string) int64 {
		return planJSON(t, "plan", tinyModel, filepath.Join(dir, "o.gguf"), ft).Files[0].Bytes
	}
	table := fmt.Sprintf("filetype:Q8_0\t-\t%d\t1e-300\t0\nfiletype:Q4_K_M\t-\t%d\t0.03\t0.001\n", size("Q8_0"), size("Q4_K_M"))
	if err := os.WriteFile(tsv, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = gquantOutput("fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", tinyModel, tsv, "-o", filepath.Join(dir, "g.txt"))
	if code != 0 {
		t.Fatalf("calibrate: exit %d\n%s", code, stderr)
	}
	for _, l := range strings.Split(stdout, "\n") {
		if len(l) > 120 {
			t.Errorf("calibrate prints a line of %d characters: %.200s", len(l), l)
		}
	}
}

func regexpFind(t *testing.T, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1]
}

// hugeModel is a copy of the tiny model in dir whose tensor name holds
// the largest finite bf16 (3.4e38) everywhere: every type the fit measures
// it in gives weights that are not finite (the f16 block scales overflow),
// which the fit learns only by measuring.
func hugeModel(t *testing.T, dir, name string) string {
	t.Helper()
	raw, err := os.ReadFile(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	in, err := gguf.Open(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	i := in.TensorIndex(name)
	if i < 0 || in.Tensors[i].Type != formats.BF16 {
		in.Close()
		t.Fatalf("the tiny model has no bf16 tensor %s", name)
	}
	_, off := in.TensorFile(i)
	size := in.Tensors[i].Size
	in.Close()
	for k := off; k < off+size; k += 2 {
		binary.LittleEndian.PutUint16(raw[k:], 0x7f7f) // the largest finite bf16
	}
	path := filepath.Join(dir, "huge.gguf")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A fit that fails after measuring (here: one tensor's weights are so
// large that no candidate gives it finite weights, which only measuring
// tells)
// still saves the measurements it made to --cache: they are minutes of
// work on a real model, and were lost, so that the next try measured
// everything again. The refit, with that tensor kept as it is, finds
// every other measurement in the cache.
func TestFitFailedSavesCache(t *testing.T) {
	dir := t.TempDir()
	model := hugeModel(t, dir, "blk.0.ffn_down.weight")
	cache := filepath.Join(dir, "fit.cache")
	args := []string{"fit", "--types", "q8_0,q4_K,q5_0", "--budget", "CPU=8MB", "--chunk-weights", "4096", "--max-chunks", "1",
		"--threads", "2", "--quiet", "--json", "--cache", cache, model}
	code, _, stderr := gquantOutput(args...)
	if code != 1 || !strings.Contains(stderr, "no candidate type gives blk.0.ffn_down.weight finite weights") {
		t.Fatalf("fit of a huge tensor: exit %d, want 1 naming the tensor:\n%s", code, stderr)
	}
	got, err := fit.LoadCache(cache)
	if err != nil {
		t.Fatalf("the failed fit's cache: %v", err)
	}
	if got.Len() == 0 {
		t.Fatal("the failed fit saved no measurement")
	}
	assertNoTemp(t, dir)
	code, stdout, stderr := gquantOutput(append(args, "--custom-q", `blk\.0\.ffn_down=bf16`)...)
	if code != 0 {
		t.Fatalf("refit keeping the huge tensor bf16: exit %d\n%s", code, stderr)
	}
	var res fit.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Measured.Measured != 0 || res.Measured.Cached == 0 {
		t.Errorf("refit measured %d samples and found %d in the cache, want all from the cache", res.Measured.Measured, res.Measured.Cached)
	}
}

// fit calibrate on a model where a mix's tensor gives weights that are not
// finite fails naming the mix, the tensor and the type: its loss was +Inf,
// every prediction NaN, and the start gains were written as fitted with
// exit 0. Failing after measuring, it still saves --cache: a second try
// measures nothing again.
func TestFitCalibrateBroken(t *testing.T) {
	dir := t.TempDir()
	model := hugeModel(t, dir, "blk.0.ffn_down.weight")
	size := func(ft string) int64 {
		return planJSON(t, "plan", tinyModel, filepath.Join(dir, "o.gguf"), ft).Files[0].Bytes
	}
	tsv := filepath.Join(dir, "kld.tsv")
	table := "mix\trules\tbytes\tkld_mean\tkld_err\n" +
		fmt.Sprintf("filetype:Q8_0\t-\t%d\t0.001\t0.0001\n", size("Q8_0")) +
		fmt.Sprintf("filetype:Q4_K_M\t-\t%d\t0.03\t0.001\n", size("Q4_K_M"))
	if err := os.WriteFile(tsv, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	cache, gains := filepath.Join(dir, "fit.cache"), filepath.Join(dir, "gains.txt")
	args := []string{"fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--quiet", "--cache", cache, model, tsv, "-o", gains}
	code, _, stderr := gquantOutput(args...)
	want := "fit: mix filetype:Q8_0: blk.0.ffn_down.weight as q8_0 gives weights that are not finite"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("calibrate: exit %d, want 1 with %q:\n%s", code, want, stderr)
	}
	if _, err := os.Stat(gains); err == nil {
		t.Error("the gains were written")
	}
	c, err := fit.LoadCache(cache)
	if err != nil || c.Len() == 0 {
		t.Fatalf("the failed calibration's cache: %d records, %v", c.Len(), err)
	}
	before, _ := os.Stat(cache)
	if code, _, stderr := gquantOutput(args...); code != 1 {
		t.Fatalf("second try: exit %d\n%s", code, stderr)
	}
	// Nothing new measured: the cache is not written again (a write
	// renames a new file into place).
	if after, err := os.Stat(cache); err != nil || !os.SameFile(before, after) {
		t.Errorf("the second try rewrote the cache (%v): it measured again", err)
	}
	assertNoTemp(t, dir)
}

// Ctrl-C mid-measure stops the fit (and fit calibrate) with status 130,
// saying what was left unwritten, and saves the measurements made to
// --cache: the signal killed the process, and every measurement with it.
// The child sends itself SIGINT after a few measurements and holds the
// measuring a moment, so that the signal is seen before the rest.
func TestFitInterruptSavesCache(t *testing.T) {
	if args := os.Getenv("GQUANT_FIT_INTERRUPT_ARGS"); args != "" {
		var once bool
		measuredHook = func(done, total int) {
			if done == 3 && !once {
				once = true
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				time.Sleep(500 * time.Millisecond)
			}
		}
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	in, _ := filepath.Abs(tinyModel)
	size := func(ft string) int64 {
		return planJSON(t, "plan", tinyModel, filepath.Join(dir, "o.gguf"), ft).Files[0].Bytes
	}
	// Types with quick kernels: a measurement under way is finished
	// before the run stops, and under the race detector the searching
	// kernels (iq3_ks, iq4_ks) took more than the 5 s grace.
	tsv := filepath.Join(dir, "kld.tsv")
	table := "mix\trules\tbytes\tkld_mean\tkld_err\n" +
		fmt.Sprintf("filetype:Q8_0\t-\t%d\t0.001\t0.0001\n", size("Q8_0")) +
		fmt.Sprintf("filetype:Q4_0\t-\t%d\t0.03\t0.001\n", size("Q4_0"))
	if err := os.WriteFile(tsv, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"fit", []string{"fit", "--types", "q8_0,q5_0,q4_0", "--budget", "CPU=8MB", "--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet"}},
		{"calibrate", []string{"fit", "calibrate", "--chunk-weights", "4096", "--max-chunks", "1", "--threads", "2", "--quiet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := t.TempDir()
			cache, out := filepath.Join(sub, "fit.cache"), filepath.Join(sub, "out.txt")
			args := append(tc.args, "--cache", cache, in)
			if tc.name == "calibrate" {
				args = append(args, tsv)
			}
			args = append(args, "-o", out)
			cmd := exec.Command(os.Args[0], "-test.run=^TestFitInterruptSavesCache$")
			cmd.Env = append(os.Environ(), "GQUANT_FIT_INTERRUPT_ARGS="+strings.Join(args, "\x1f"))
			msg, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit %v, want status 130:\n%s", err, msg)
			}
			for _, want := range []string{"interrupted by SIGINT", "not written: " + out, "complete before the interrupt: " + cache} {
				if !strings.Contains(string(msg), want) {
					t.Errorf("output does not say %q:\n%s", want, msg)
				}
			}
			if strings.Contains(string(msg), "measuring stopped") {
				t.Errorf("the stop is printed as an error:\n%s", msg)
			}
			c, err := fit.LoadCache(cache)
			if err != nil || c.Len() < 3 {
				t.Errorf("the interrupted run's cache: %d records, %v; want the 3 or more measured", c.Len(), err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output was written")
			}
			assertNoTemp(t, sub)
		})
	}
}

// Two fits saving one --cache at once take turns (a lock on its
// directory): the second merges what the first saved. Where neither found
// a cache, the save of one landing between the other's look and rename
// made that rename fail ("file exists") and lost its measurements; where
// both did, the later rename dropped the earlier save's. Here run B saves
// while run A holds the lock; without it B's save lands first.
func TestFitCacheSavedAtOnce(t *testing.T) {
	for _, existed := range []bool{false, true} {
		t.Run(fmt.Sprintf("existed=%v", existed), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "fit.cache")
			if existed {
				if err := writeFile(path, false, func(w io.Writer) error { _, err := fit.NewCache().WriteTo(w); return err }); err != nil {
					t.Fatal(err)
				}
			}
			entry := fit.Stats{N: 2, Num: 0.2, Den: 2, Num2: 0.03, Den2: 2.5, NumDen: 0.25}
			a, b := fit.NewCache(), fit.NewCache()
			a.Put(1, entry)
			b.Put(2, entry)
			var errA, errB strings.Builder
			done := make(chan struct{})
			var once sync.Once
			whileCacheLocked = func() {
				once.Do(func() {
					go func() {
						defer close(done)
						(&fitFlags{cache: path, cacheExisted: existed}).saveCache(b, &errB)
					}()
					time.Sleep(300 * time.Millisecond) // B's save, unlocked, is done by now
				})
			}
			defer func() { whileCacheLocked = nil }()
			(&fitFlags{cache: path, cacheExisted: existed}).saveCache(a, &errA)
			<-done
			// B waited, and said so: a run silent after its results looks
			// hung where the other holds the lock long (stopped by Ctrl-Z).
			if note := "note: --cache " + path + ": waiting for another run saving a cache in " + dir + " to finish"; errA.Len() > 0 || !strings.HasPrefix(errB.String(), note) || strings.Count(errB.String(), "\n") != 1 {
				t.Errorf("A's output %q, B's %q; want none from A and B's %q only", errA.String(), errB.String(), note)
			}
			got, err := fit.LoadCache(path)
			if err != nil {
				t.Fatal(err)
			}
			_, okA := got.Get(1)
			_, okB := got.Get(2)
			if !okA || !okB {
				t.Errorf("the cache holds A's measurement: %v, B's: %v; want both", okA, okB)
			}
			assertNoTemp(t, dir)
		})
	}
}

// A read-only --cache (a team's shared cache) is read and never written:
// the refit takes every sample from it, a fit that measures more says its
// measurements are not kept, and the file stays as it was. It had been
// refused before any work, like a read-only output.
func TestFitReadOnlyCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "fit.cache")
	args := func(chunks string) []string {
		return []string{"fit", "--budget", "CPU=5MB", "--chunk-weights", "4096", "--max-chunks", chunks, "--threads", "2", "--quiet", "--json", "--cache", cache, tinyModel}
	}
	if code, _, stderr := gquantOutput(args("1")...); code != 0 {
		t.Fatalf("fit making the cache: exit %d\n%s", code, stderr)
	}
	if err := os.Chmod(cache, 0o444); err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(cache)

	code, stdout, stderr := gquantOutput(args("1")...)
	if code != 0 || !strings.Contains(stderr, "is read-only: this run reads it") || strings.Contains(stderr, "not kept") {
		t.Fatalf("refit from a read-only cache: exit %d, want 0 with a note and no warning:\n%s", code, stderr)
	}
	var res fit.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Measured.Measured != 0 || res.Measured.Cached == 0 {
		t.Errorf("refit measured %d samples and found %d in the cache, want all from the cache", res.Measured.Measured, res.Measured.Cached)
	}

	code, _, stderr = gquantOutput(args("2")...)
	if code != 0 || !strings.Contains(stderr, "new measurements are not kept") {
		t.Errorf("fit measuring more with a read-only cache: exit %d, want 0 with a warning:\n%s", code, stderr)
	}
	fileUnchanged(t, cache, saved)
	assertNoTemp(t, dir)
}

// A warning the checks find before the measuring (a --tie that ties
// nothing) is printed at once, before the report (it came after it, when
// the minutes of measuring were spent), and once.
func TestFitWarnsBeforeMeasuring(t *testing.T) {
	code, _, stderr := gquantOutput("fit", "--quiet", "--chunk-weights", "4096", "--max-chunks", "1", "--budget", "CPU=5MB", "--tie", "foo,bar", tinyModel)
	warn := "warning: --tie foo,bar ties nothing"
	if code != 0 || strings.Count(stderr, warn) != 1 || strings.Index(stderr, warn) > strings.Index(stderr, "predicted KL divergence") {
		t.Errorf("exit %d, want 0 with %q once, before the report:\n%s", code, warn, stderr)
	}
}
