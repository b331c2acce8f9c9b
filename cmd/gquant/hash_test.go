package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/splitter"
)

// testdata/hash/*.txt were written by llama-gguf-hash (built from
// ik_llama.cpp 8337e4cd's examples/gguf-hash against the reference build,
// with mainline llama.cpp's --xxh3 added as mainline has it), run in this
// folder: the first line is its command line, the second its exit status,
// the rest its output. The manifests are its --all --uuid output, and copies
// with one tensor's sha256 or the file's xxh64 changed, with another file
// name, and with only layer 0's lines.
func TestHashMatchesLlamaGGUFHash(t *testing.T) {
	outs, err := filepath.Glob("testdata/hash/*.txt")
	if err != nil || len(outs) < 10 {
		t.Fatalf("%d cases: %v", len(outs), err)
	}
	for _, path := range outs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cmdLine, rest, _ := strings.Cut(string(b), "\n")
		exitLine, want, _ := strings.Cut(rest, "\n")
		args := strings.Fields(strings.TrimPrefix(cmdLine, "# llama-gguf-hash "))
		code, err := strconv.Atoi(strings.TrimPrefix(exitLine, "# exit "))
		if err != nil {
			t.Fatalf("%s: %q", path, exitLine)
		}
		variants := [][]string{args}
		// Our -c works too (llama-gguf-hash takes only options starting with
		// "--", so its -c is never read), and options may follow the file.
		short := strings.Join(args, "\x00")
		if s := strings.ReplaceAll(short, "--check", "-c"); s != short {
			variants = append(variants, strings.Split(s, "\x00"))
		}
		variants = append(variants, append([]string{args[len(args)-1]}, args[:len(args)-1]...))
		for _, a := range variants {
			var out, errb bytes.Buffer
			got := run(append([]string{"hash"}, a...), &out, &errb)
			if got != code || out.String() != want {
				t.Errorf("gquant hash %s: exit %d (want %d), stderr %q, output:\n%s", strings.Join(a, " "), got, code, errb.String(), diffLines(out.String(), want))
			}
		}
	}
}

// diffLines shows the first line where got and want differ.
func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got  " + g[i] + "\n want " + w[i]
		}
	}
	return "got " + strconv.Itoa(len(g)) + " lines, want " + strconv.Itoa(len(w))
}

const hashModel = "../../testdata/tiny-deepseek2-bf16.gguf"

// TestHashManifestErrors: llama-gguf-hash's exit statuses for manifests it
// cannot use (our messages go to stderr, in gquant's words).
func TestHashManifestErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.manifest")
	if err := os.WriteFile(junk, []byte("XXH64 0 x\nmd5 1 y\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		manifest string
		code     int
		msg      string
	}{
		{junk, 4, "no line of a known hash"},
		{filepath.Join(dir, "missing.manifest"), 5, "cannot open manifest"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"hash", "-c", tc.manifest, hashModel}, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.manifest, code, out.String(), errb.String())
		}
	}
}

// TestHashUUIDCheck: a uuid is checked against the manifest's uuid line.
// llama-gguf-hash compares it with the sha256 line instead (it looks the
// uuid up under the wrong kind), so there it is a Mismatch, exit 1.
func TestHashUUIDCheck(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"hash", "--uuid", "-c", "testdata/hash/all-uuid.manifest", hashModel}, &out, &errb)
	want := "manifest  testdata/hash/all-uuid.manifest  sha256  sha1  xxh64  xxh3  uuid\n" +
		"uuid      e128c216-4e99-5d1d-8153-30a19ba2ab51  " + hashModel + "  -  Ok\n" +
		"\nVerification results for testdata/hash/all-uuid.manifest - Success\n"
	if code != 0 || out.String() != want {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, errb.String(), out.String())
	}
}

// TestHashShardSet: a shard gives what llama-gguf-hash gives for that file
// alone, so that a shard checks against its own manifest; all of them (a
// glob), or any one with --set, give its output for each shard in turn, and
// a manifest made that way checks the set.
func TestHashShardSet(t *testing.T) {
	src, err := gguf.Open(hashModel)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dir := t.TempDir()
	plan, err := splitter.Split(src, filepath.Join(dir, "tiny"), splitter.Limits{MaxTensors: 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := plan.Paths(filepath.Join(dir, "tiny"))
	// The reference output per shard, named as in that folder.
	ref, err := os.ReadFile("../../ggufhash/testdata/tiny-split20.all-uuid.manifest")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(string(ref), "tiny-0000", filepath.Join(dir, "tiny-0000"))
	shard := func(i int) string { // the lines of shard i alone
		var b strings.Builder
		for _, line := range strings.SplitAfter(want, "\n") {
			if strings.Contains(line, paths[i]) {
				b.WriteString(line)
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{paths, want},
		{[]string{"--set", paths[1]}, want},
		{[]string{"--set", paths[2], paths[0], paths[2]}, want},
		{[]string{paths[1]}, shard(1)},
		{[]string{paths[2], paths[0], paths[2]}, shard(2) + shard(0)},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"hash", "--all", "--uuid"}, tc.args...), &out, &errb)
		if code != 0 || out.String() != tc.want {
			t.Errorf("hash %v: exit %d, stderr %q\n%s", tc.args, code, errb.String(), diffLines(out.String(), tc.want))
		}
	}
	for _, tc := range []struct {
		manifest string
		args     []string
		ok       int
	}{
		{want, []string{"--set", paths[0]}, 58}, // 55 tensors and 3 files, by sha256
		{want, []string{paths[0]}, 21},
		{shard(1), []string{paths[1]}, 21},
	} {
		man := filepath.Join(dir, "check.manifest")
		if err := os.WriteFile(man, []byte(tc.manifest), 0o666); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run(append([]string{"hash", "-c", man}, tc.args...), &out, &errb)
		if code != 0 || strings.Count(out.String(), "  -  Ok\n") != tc.ok || !strings.Contains(out.String(), "- Success") {
			t.Errorf("check %v: exit %d, stderr %q\n%s", tc.args, code, errb.String(), out.String())
		}
	}
}

func TestHashUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"--md5", hashModel}, 2},
		{[]string{"-c"}, 2},
		{[]string{"--help"}, 0},
		{[]string{filepath.Join(t.TempDir(), "none.gguf")}, 1},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"hash"}, tc.args...), &out, &errb); code != tc.code {
			t.Errorf("hash %v: exit %d, want %d; %s", tc.args, code, tc.code, errb.String())
		}
	}
}
