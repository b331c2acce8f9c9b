package ggufhash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadManifest(t *testing.T) {
	long := strings.Repeat("x", 10000)
	text := "xxh64     0123456789abcdef  m.gguf:a\r\n" + // CRLF: \r is whitespace to >>
		"\n" +
		"sha1\n" + // a known kind alone counts for Kinds, but is no entry
		"bogus  1  m.gguf\n" +
		"  \tsha256\v aa \f m.gguf   extra words  -  Ok\n" + // a check's output line
		"xxh64  ffff  m.gguf:a\n" + // the first line of a kind and name decides
		"XXH3  1  m.gguf\n" + // names are case-sensitive
		"xxh64  " + long + "  m.gguf:long\n" +
		"uuid  u  m.gguf" // no newline at the end
	m, err := ReadManifest(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Kinds(); got != KindsOf(XXH64, SHA1, SHA256, UUID) {
		t.Errorf("Kinds = %v", got)
	}
	for _, tc := range []struct {
		kind      Kind
		sum, name string
		want      Verdict
	}{
		{XXH64, "0123456789abcdef", "m.gguf:a", OK},
		{XXH64, "ffff", "m.gguf:a", Mismatch},
		{XXH64, "0123456789abcdef", "m.gguf:b", NotFound},
		{SHA1, "x", "m.gguf", NotFound},
		{SHA256, "aa", "m.gguf", OK},
		{XXH3, "1", "m.gguf", NotFound},
		{XXH64, long, "m.gguf:long", OK},
		{UUID, "u", "m.gguf", OK},
		{SHA256, "aa", "m.gguf ", NotFound},
	} {
		if got := m.Check(tc.kind, tc.sum, tc.name); got != tc.want {
			t.Errorf("Check(%v, %.20q, %q) = %v, want %v", tc.kind, tc.sum, tc.name, got, tc.want)
		}
	}
	empty, err := ReadManifest(strings.NewReader("no hashes here\n"))
	if err != nil || empty.Kinds() != 0 {
		t.Errorf("%v, %v", empty.Kinds(), err)
	}
}

// TestCheckerStatus replays llama-gguf-hash's decision for one file: each
// case is a list of (tensor or file, verdict) and the exit status it gives.
func TestCheckerStatus(t *testing.T) {
	type v struct {
		tensor  bool
		verdict Verdict
	}
	for _, tc := range []struct {
		name string
		seen []v
		want Status
	}{
		{"nothing in the manifest", []v{{true, NotFound}, {false, NotFound}}, MissingEntry},
		{"all ok", []v{{true, OK}, {true, OK}, {false, OK}}, Success},
		{"file ok, tensors missing", []v{{true, NotFound}, {false, OK}}, Success},
		{"tensors ok, file missing", []v{{true, OK}, {true, NotFound}, {false, NotFound}}, Success},
		{"a tensor differs, file missing", []v{{true, OK}, {true, Mismatch}, {false, NotFound}}, Failure},
		{"a tensor differs, file ok", []v{{true, Mismatch}, {false, OK}}, Failure},
		{"file differs, tensors ok", []v{{true, OK}, {false, Mismatch}}, Failure},
		{"file differs, tensors missing", []v{{true, NotFound}, {false, Mismatch}}, Failure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text strings.Builder
			var results []*Result
			for i, s := range tc.seen {
				r := &Result{File: "m.gguf"}
				if s.tensor {
					r.Tensor = "t" + strings.Repeat("x", i)
				}
				r.Sums.set(XXH64, []byte{1, 2, 3, 4, 5, 6, 7, byte(i)})
				results = append(results, r)
				switch s.verdict {
				case OK:
					text.WriteString(r.Line(XXH64) + "\n")
				case Mismatch:
					text.WriteString("xxh64  0000000000000000  " + r.Name() + "\n")
				}
			}
			m, err := ReadManifest(strings.NewReader(text.String()))
			if err != nil {
				t.Fatal(err)
			}
			c := NewChecker(m)
			for i, r := range results {
				if got := c.Check(r, XXH64); got != tc.seen[i].verdict {
					t.Errorf("entry %d: %v, want %v", i, got, tc.seen[i].verdict)
				}
			}
			if got := c.Status(); got != tc.want {
				t.Errorf("status %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckerFiles: over several files (a shard set), a failure anywhere
// fails, else a file missing from the manifest makes it MissingEntry.
func TestCheckerFiles(t *testing.T) {
	ok := &Result{File: "a.gguf"}
	ok.Sums.set(SHA256, make([]byte, 32))
	bad := &Result{File: "b.gguf"}
	bad.Sums.set(SHA256, []byte{1})
	missing := &Result{File: "c.gguf"}
	missing.Sums.set(SHA256, []byte{2})
	m, _ := ReadManifest(strings.NewReader(ok.Line(SHA256) + "\nsha256  00  b.gguf\n"))
	for _, tc := range []struct {
		rs   []*Result
		want Status
	}{
		{[]*Result{ok}, Success},
		{[]*Result{ok, missing}, MissingEntry},
		{[]*Result{missing, bad, ok}, Failure},
		{nil, Success},
	} {
		c := NewChecker(m)
		for _, r := range tc.rs {
			c.Check(r, SHA256)
		}
		if got := c.Status(); got != tc.want {
			t.Errorf("%d files: %v, want %v", len(tc.rs), got, tc.want)
		}
	}
	// The uuid is checked against the uuid line (llama-gguf-hash looks it up
	// under sha256 and can never confirm it).
	u := &Result{File: "a.gguf"}
	u.Sums.set(UUID, make([]byte, 16))
	m, _ = ReadManifest(strings.NewReader(ok.Line(SHA256) + "\n" + u.Line(UUID) + "\n"))
	if got := NewChecker(m).Check(u, UUID); got != OK {
		t.Errorf("uuid: %v", got)
	}
}

func TestStatusNames(t *testing.T) {
	want := []string{"Success", "Failure", "Mismatch", "Manifest Missing Entry", "Manifest Unknown Hash", "Manifest File Error"}
	for i, w := range want {
		if got := Status(i).String(); got != w {
			t.Errorf("Status(%d) = %q, want %q", i, got, w)
		}
	}
	if NotFound.String() != "Not Found" || Mismatch.String() != "Mismatch" || OK.String() != "Ok" {
		t.Error("verdict names")
	}
}

// FuzzReadManifest: any bytes parse, and every entry read back checks OK.
func FuzzReadManifest(f *testing.F) {
	for _, name := range []string{"tiny-deepseek2-bf16.all-uuid.manifest", "tiny0-split30-first-empty.all-uuid.manifest"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 2000)])
	}
	f.Add([]byte("xxh64 a b\r\nsha1\n\n\x00 \xff\v\f uuid"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadManifest(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.entries {
			k, ok := ParseKind(e.kind)
			if !ok {
				continue
			}
			if !m.Kinds().Has(k) {
				t.Errorf("entry of kind %v, not in Kinds %v", k, m.Kinds())
			}
			if v := m.Check(k, e.sum, e.name); v == NotFound {
				t.Errorf("entry %q not found", e)
			}
			if strings.ContainsAny(e.kind+e.sum+e.name, " \t\n\v\f\r") || e.kind == "" || e.sum == "" || e.name == "" {
				t.Errorf("bad entry %q", e)
			}
		}
	})
}
