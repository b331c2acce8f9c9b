package repack

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
)

// syntheticModel writes a q4_K model of random bytes (a shuffle does not
// care what the bytes mean): 30 matrices of 4096 x 14336 and one 3-D
// expert tensor of 4096 x 1024 x 64, about 1.15 GB.
func syntheticModel(b *testing.B, path string) int64 {
	b.Helper()
	var infos []gguf.TensorInfo
	for i := range 30 {
		infos = append(infos, gguf.TensorInfo{Name: fmt.Sprintf("blk.%d.ffn_up.weight", i), Shape: []int64{4096, 14336}, Type: formats.Q4_K})
	}
	infos = append(infos, gguf.TensorInfo{Name: "blk.30.ffn_up_exps.weight", Shape: []int64{4096, 1024, 64}, Type: formats.Q4_K})
	md := gguf.Metadata{
		{Key: "general.architecture", Value: gguf.StringValue("llama")},
		{Key: "general.file_type", Value: gguf.Uint32Value(15)},
	}
	w, err := gguf.Create(path, md, infos, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 4<<20)
	var total int64
	for _, t := range w.Tensors() {
		total += t.Size
	}
	for left := total; left > 0; {
		n := min(int64(len(buf)), left)
		rng.Read(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			b.Fatal(err)
		}
		left -= n
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// resetPeakRSS makes /proc/self/status's VmHWM start again from the current
// RSS (Linux); peakRSS reads it in bytes.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// cpuTime is the CPU time (user and system) the process has used: on a
// shared machine wall-clock rates say more about the neighbours.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// BenchmarkRepackFile repacks a 1.15 GB q4_K model (every tensor converted,
// written and synced to disk) and compares with copying the file with
// io.Copy (copy_file_range) plus a sync on the same disk, two ways: over
// the existing output (copy), and the way Run writes, into a new file
// renamed over the output (copy-new). The two differ where fresh page-cache
// pages cost the kernel much more than pages just freed by a truncate (on
// some VMs several CPU seconds per GB), which only the second copy pays,
// as Run does. Run with
//
//	go test -run - -bench RepackFile -benchtime 3x ./repack/
func BenchmarkRepackFile(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.gguf")
	size := syntheticModel(b, in)
	out := filepath.Join(dir, "out.gguf")
	var copySecs, copyNewSecs, repackSecs, copyCPU, copyNewCPU, repackCPU float64

	for _, newFile := range []bool{false, true} {
		name, secs, cpuSecs := "copy", &copySecs, &copyCPU
		if newFile {
			name, secs, cpuSecs = "copy-new", &copyNewSecs, &copyNewCPU
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			cpu := cpuTime()
			for b.Loop() {
				copy := copyFile
				if newFile {
					copy = copyFileNew
				}
				if err := copy(out, in); err != nil {
					b.Fatal(err)
				}
			}
			*cpuSecs = (cpuTime() - cpu).Seconds() / float64(b.N)
			*secs = b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(*cpuSecs, "cpu-s/op")
			b.ReportMetric(float64(size)/(*secs)/1e9, "GB/s")
		})
	}

	m, err := gguf.Open(in)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	p, err := NewPlan(m, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("repack", func(b *testing.B) {
		b.SetBytes(size)
		resetPeakRSS()
		cpu := cpuTime()
		for b.Loop() {
			if _, err := Run(m, p, out); err != nil {
				b.Fatal(err)
			}
		}
		repackCPU = (cpuTime() - cpu).Seconds() / float64(b.N)
		repackSecs = b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(repackCPU, "cpu-s/op")
		b.ReportMetric(float64(size)/repackSecs/1e9, "GB/s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	})
	if copySecs > 0 && copyNewSecs > 0 && repackSecs > 0 {
		gbs := func(secs float64) float64 { return float64(size) / secs / 1e9 }
		b.Logf("%.2f GB: copy %.2f GB/s (%.2f CPU s), copy to a new file %.2f GB/s (%.2f CPU s), repack %.2f GB/s (%.2f CPU s); repack takes %.2fx the copy's time, %.2fx the new-file copy's; peak RSS %.0f MiB",
			float64(size)/1e9, gbs(copySecs), copyCPU, gbs(copyNewSecs), copyNewCPU, gbs(repackSecs), repackCPU,
			repackSecs/copySecs, repackSecs/copyNewSecs, float64(peakRSS())/(1<<20))
	}
}

// copyFileNew copies src to dst the way Run writes: into a new temporary
// file in dst's directory, synced, then renamed over dst.
func copyFileNew(dst, src string) error {
	s, err := os.Open(src)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := os.CreateTemp(filepath.Dir(dst), ".copy-*")
	if err != nil {
		return err
	}
	defer os.Remove(d.Name()) // fails harmlessly after the rename
	if _, err := io.Copy(d, s); err != nil {
		d.Close()
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	if err := d.Close(); err != nil {
		return err
	}
	return os.Rename(d.Name(), dst)
}

func copyFile(dst, src string) error {
	s, err := os.Open(src)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(d, s); err != nil {
		d.Close()
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// BenchmarkShuffle measures the in-memory conversion alone, one chunk of
// whole row groups per call, for a few types.
func BenchmarkShuffle(b *testing.B) {
	for _, base := range []formats.Type{formats.Q4_K, formats.Q8_0, formats.IQ4_XS, formats.BF16} {
		target, _ := formats.RepackTarget(base)
		const ne0 = 4096
		rs, _ := base.RowSize(ne0)
		rows := int64(chunkBytes) / rs / int64(target.Interleave()) * int64(target.Interleave())
		src := bytes.Repeat([]byte{0x5a, 0x13, 0x77}, int(rs*rows)/3+1)[:rs*rows]
		dst := make([]byte, len(src))
		b.Run(base.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if err := formats.Interleave(target, ne0, dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProgram is BenchmarkShuffle through the compiled programs Run uses.
func BenchmarkProgram(b *testing.B) {
	for _, base := range []formats.Type{formats.Q4_K, formats.Q8_0, formats.IQ4_XS, formats.BF16, formats.Q6_K, formats.IQ2_XXS} {
		target, _ := formats.RepackTarget(base)
		const ne0 = 4096
		rs, _ := base.RowSize(ne0)
		trs, _ := target.RowSize(ne0)
		k := int64(target.Interleave())
		rows := int64(chunkBytes) / rs / k * k
		src := bytes.Repeat([]byte{0x5a, 0x13, 0x77}, int(rs*rows)/3+1)[:rs*rows]
		dst := make([]byte, trs*rows)
		g := newGroupConverter(target, ne0, false, int(k*rs), int(k*trs))
		b.Run(base.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if err := g.convert(dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
