// Command reffixture writes a fixture of reference outputs (testrows.Fixture)
// for testrows.FixtureRows: it runs the reference build's refquant (one
// ggml_quantize_chunk call per run, see /work/refbuild/README) for each type
// given, without and with each importance vector of testrows.Imatrices, and
// prints the digest of each row group of the output.
//
//	go run ./quantize/internal/testrows/reffixture -refquant /work/refbuild/refquant \
//	    -types q4_0,q5_0 >quantize/internal/legacy/testdata/reference-special-rows.tsv
//
// A case where refquant fails (the reference stops on an assertion) is left
// out and named on stderr; -skip TYPE/IMATRIX,... leaves cases out up front.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/quantize/internal/testrows"
)

func main() {
	refquant := flag.String("refquant", "/work/refbuild/refquant", "the reference's refquant program")
	types := flag.String("types", "", "comma-separated reference type names")
	skip := flag.String("skip", "", "comma-separated TYPE/IMATRIX cases to leave out")
	flag.Parse()
	if err := run(*refquant, strings.Split(*types, ","), strings.Split(*skip, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "reffixture:", err)
		os.Exit(1)
	}
}

func run(refquant string, types, skip []string) error {
	dir, err := os.MkdirTemp("", "reffixture")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rows := testrows.FixtureRows()
	var input []byte
	for _, r := range rows {
		input = append(input, testrows.Float32Bytes(r.X)...)
	}
	inPath := filepath.Join(dir, "input.f32")
	if err := os.WriteFile(inPath, input, 0o644); err != nil {
		return err
	}
	imatrices := []string{"none"}
	paths := map[string]string{"none": "-"}
	for _, im := range testrows.Imatrices(testrows.FixtureCols) {
		p := filepath.Join(dir, im.Name+".f32")
		if err := os.WriteFile(p, testrows.Float32Bytes(im.W), 0o644); err != nil {
			return err
		}
		imatrices = append(imatrices, im.Name)
		paths[im.Name] = p
	}
	f := &testrows.Fixture{Input: testrows.InputDigest()}
	for _, name := range types {
		typ, err := formats.ParseType(name)
		if err != nil {
			return err
		}
		rs, err := typ.RowSize(testrows.FixtureCols)
		if err != nil {
			return err
		}
		for _, im := range imatrices {
			if contains(skip, name+"/"+im) {
				continue
			}
			out := filepath.Join(dir, "out.bin")
			cmd := exec.Command(refquant, name, fmt.Sprint(len(rows)), fmt.Sprint(testrows.FixtureCols), inPath, paths[im], out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "reffixture: %s/%s left out, the reference failed: %v\n%s", name, im, err, firstLine(msg))
				continue
			}
			b, err := os.ReadFile(out)
			if err != nil {
				return err
			}
			if len(b) != len(rows)*int(rs) {
				return fmt.Errorf("%s/%s: %d bytes, want %d", name, im, len(b), len(rows)*int(rs))
			}
			f.Cases = append(f.Cases, testrows.FixtureCase{Type: name, Imatrix: im, Groups: testrows.GroupDigests(b, len(rows)/typ.Interleave())})
		}
	}
	header := `Reference outputs for testrows.FixtureRows (64 rows of 512, see
quantize/internal/testrows): a digest (first 8 bytes of SHA-256) of each row
group of ik_llama.cpp's bytes, one ggml_quantize_chunk call per type and
importance vector. Made with quantize/internal/testrows/reffixture; see
testdata/README.md.`
	return f.Write(os.Stdout, header)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s + "\n"
}
