//go:build medium

package mediumtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// mediumMD5 is the md5 of the generated model, from the medium README.
const mediumMD5 = "3394f6abae7b232a2246d6d856fad529"

// The five reference runs on the medium model, each compared with its
// manifest: every metadata key, value and the key order, every tensor's
// name, order, type, shape, size and sha256. Tensors of mediumKnownDiffs
// must differ in their bytes only.
func TestMediumModelRuns(t *testing.T) {
	dir := mediumDir(t)
	model := mediumModel(t, dir)
	// The runs were made in the medium folder; the importance matrix is
	// named relative to it, as quantize.imatrix.file records.
	t.Chdir(dir)
	in, err := gguf.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	tmp := t.TempDir()
	var summary []string
	defer func() { t.Log("run, wall time, peak RSS:\n" + strings.Join(summary, "\n")) }()
	for _, r := range mediumRuns {
		t.Run(r.name, func(t *testing.T) {
			m, err := readManifest(filepath.Join(dir, "reference", "out-"+r.name+".manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(tmp, m.Files[0].Path)
			defer os.Remove(out)
			ft, copyOnly, err := recipes.ParseFileType(r.fileType)
			if err != nil {
				t.Fatal(err)
			}
			cfg := pipeline.Config{Selection: recipes.Options{FileType: ft, CopyOnly: copyOnly}, Output: out}
			if r.imatrix {
				cfg.ImatrixPath = imatrixName
				if cfg.Imatrix, err = imatrix.Open(imatrixName); err != nil {
					t.Fatal(err)
				}
			}
			resetPeakRSS()
			start := time.Now()
			plan, err := pipeline.Build(in, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Two threads, as the reference's runs.
			err = pipeline.Run(context.Background(), in, plan.Outputs, pipeline.Options{Threads: 2, Inputs: []string{model}})
			if err != nil {
				t.Fatal(err)
			}
			wall := time.Since(start)
			rss := peakRSS()
			summary = append(summary, fmt.Sprintf("%-13s %7.1f s %6d MiB", r.name, wall.Seconds(), rss>>20))
			t.Logf("%s: %.1f s, peak RSS %d MiB", r.name, wall.Seconds(), rss>>20)

			d, err := compareFile(out, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range checkKnownDiffs(r.name, d, mediumKnownDiffs[r.name]) {
				t.Error(e)
			}
		})
	}
}

// mediumModel returns the path of the generated bf16 model: the one in
// $GQUANT_MEDIUM_CACHE if its md5 is right, else a new one made there (or in
// a temporary folder without the variable) by the README's command.
func mediumModel(t *testing.T, dir string) string {
	t.Helper()
	cache := os.Getenv("GQUANT_MEDIUM_CACHE")
	if cache == "" {
		cache = t.TempDir()
	} else if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cache, "medium-bf16.gguf")
	if sum, err := md5File(path); err == nil && sum == mediumMD5 {
		t.Logf("using %s", path)
		return path
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 is needed to generate the medium model: %v", err)
		}
		t.Skipf("python3 is needed to generate the medium model: %v", err)
	}
	f, err := os.CreateTemp(cache, "medium-bf16-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	start := time.Now()
	var output bytes.Buffer
	cmd := exec.Command(python, filepath.Join(dir, "mk_medium_model.py"), filepath.Join(dir, "ggml-vocab-llama-spm.gguf"), tmp)
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		t.Fatalf("generating the medium model: %v\n%s", err, output.Bytes())
	}
	sum, err := md5File(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if sum != mediumMD5 {
		t.Fatalf("the generated medium model has md5 %s, want %s (README in %s)", sum, mediumMD5, dir)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %s in %.1f s", path, time.Since(start).Seconds())
	return path
}

func md5File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// resetPeakRSS starts a new peak for peakRSS (Linux: "5" to clear_refs
// resets VmHWM); elsewhere it does nothing.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is the process's peak resident set size in bytes since the last
// resetPeakRSS (Linux; 0 elsewhere).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
