package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/pipeline"
	"github.com/gquant/gquant/recipes"
)

// gquant verify checks a set of output shards, as the runs of a job array
// leave it (issue 22). It takes either the set alone (any file of it) or
// quantize's whole command line with the verb changed, as gquant plan
// does: the same words, so no command line is quoted into one argument,
// the same flag parser catches the same typos, and a job script writes the
// arguments once for both. Given the plan, every header must be the plan's
// byte for byte.

func init() {
	register(&command{
		Name:    "verify",
		Summary: "check a set of output shards: all present, split keys consistent, headers the plan's, bytes the sidecars'",
		JSON:    true,
		Run:     runVerify,
	})
}

// errMismatch is returned when the set fails a check (exit status 1); the
// report says which.
var errMismatch = errors.New("the set does not pass")

func runVerify(args []string, stdout, stderr io.Writer) int {
	const program = "gquant verify"
	q := newQuantizeFlags(stderr)
	for _, name := range []string{"dry-run", "force", "summary", "strict", "shards", "parts", "resume", "reuse", "partial-requant", "record-tool"} {
		_ = q.fs.MarkHidden(name) // accepted, as in the quantize command line, and without effect
	}
	q.fs.Usage = func() {
		w := q.fs.Output()
		fmt.Fprintln(w, "usage: gquant verify [--json] FILE.gguf")
		fmt.Fprintln(w, "       gquant verify [quantize's flags] IN.gguf [OUT.gguf] TYPE [THREADS]")
		fmt.Fprintln(w, "\nThe first form checks a file or a whole shard set (name any shard): every shard")
		fmt.Fprintln(w, "present, the split keys consistent, the sizes those of the headers, and where a")
		fmt.Fprintln(w, "sidecar (FILE.gquant.json) is present, every tensor's bytes re-hashed against it.")
		fmt.Fprintln(w, "The second takes the quantize command line that wrote the set, with quantize")
		fmt.Fprintln(w, "changed to verify, and also checks that each file's header is the plan's, byte for")
		fmt.Fprintln(w, "byte, and each sidecar the plan's records; with --only-shards only those shards.")
		fmt.Fprintln(w, "Nothing is written. Exit status 0: the set passes; 1: it does not; 2: usage.")
		fmt.Fprintln(w, "\nflags (those of gquant quantize; --json prints the report as one JSON document,")
		fmt.Fprintln(w, "schema gquant.verify/1, and -v lists every file, not only those with problems or notes):")
		q.fs.PrintDefaults()
		fmt.Fprintf(w, "\nfile types: %s\n", strings.Join(recipes.FileTypeNames(), " "))
		cli.PrintExamples(w,
			cli.Example{About: "a shard set after copying it: every shard there, sizes and sidecar hashes right",
				Line: "gquant verify model-IQ2_K_R4-00001-of-00009.gguf"},
			cli.Example{About: "the outputs of a job array, against the command line that wrote them",
				Line: "gquant verify --imatrix imatrix.dat --split-max-size 50G model-bf16.gguf model-IQ2_K_R4.gguf IQ2_K_R4"},
		)
	}
	inputs := q.fs.Bool("inputs", false, "with the quantize command line: also re-hash the input tensors the checked files were made from against their sidecars' input hashes (reads them)")
	// A gquant command of its own: flags after IN draw no warning.
	if _, status, done := q.parse(program, args, stdout, stderr); done {
		return status
	}
	ctx := context.Background()
	report := func(path string, in *gguf.Model, plan *pipeline.Plan) error {
		c, err := pipeline.VerifySetWith(ctx, path, in, plan, pipeline.VerifyOptions{Inputs: *inputs})
		if err != nil {
			return err
		}
		if q.jsonOut {
			err = cli.WriteJSON(stdout, newVerifyDoc(path, plan != nil, c))
		} else {
			err = writeVerifyText(stdout, path, plan != nil, c, q.verbose)
		}
		if err != nil {
			return err
		}
		if !c.OK() {
			return errMismatch
		}
		return nil
	}
	var err error
	switch pos := q.pos; {
	case len(pos) == 0:
		err = usageError{errors.New("need the file or a shard of the set to check, or the quantize command line that wrote it")}
	case q.repack:
		err = usageError{errors.New("--repack writes no plan to check against: check its output with gquant verify FILE")}
	case len(pos) == 1:
		var set []string
		q.fs.Visit(func(f *pflag.Flag) {
			if f.Name != "json" && f.Name != "verbose" && f.Name != "inputs" {
				set = append(set, "--"+f.Name)
			}
		})
		if len(set) > 0 {
			err = usageError{fmt.Errorf("%s describe a quantize run: give its whole command line (IN [OUT] TYPE), or only the file to check", strings.Join(set, ", "))}
			break
		}
		if *inputs {
			err = usageError{errors.New("--inputs re-hashes the input of the run: give its whole quantize command line (IN [OUT] TYPE)")}
			break
		}
		err = report(pos[0], nil, nil)
	default:
		q.verify = func(in *gguf.Model, plan *pipeline.Plan) error {
			if len(plan.Outputs) == 0 {
				return errors.New("the plan has no output")
			}
			return report(plan.Outputs[0].Path, in, plan)
		}
		err = q.run(stdout, stderr)
	}
	if errors.Is(err, errMismatch) {
		return 1
	}
	return q.exitCode(program, err, stderr)
}

// verifyDoc is gquant verify --json.
type verifyDoc struct {
	Schema   string           `json:"schema"`
	Path     string           `json:"path"`
	Plan     bool             `json:"plan"` // checked against a quantize plan
	OK       bool             `json:"ok"`
	Count    int              `json:"count"`   // files in the set
	Tensors  int              `json:"tensors"` // in the files present
	Files    []verifyFileJSON `json:"files"`
	Problems []string         `json:"problems"`
	Notes    []string         `json:"notes"`
	Warnings []cli.Warning    `json:"warnings"`
}

type verifyFileJSON struct {
	Index    int      `json:"index"` // from 1
	Path     string   `json:"path"`
	OK       bool     `json:"ok"`
	Present  bool     `json:"present"`
	Bytes    int64    `json:"bytes"`
	Tensors  int      `json:"tensors"`
	Header   string   `json:"header,omitempty"` // "ok", "differs"; absent without a plan
	Sidecar  string   `json:"sidecar,omitempty"`
	Hashed   int      `json:"hashed"`        // tensors re-hashed against the sidecar
	Inputs   int      `json:"inputs_hashed"` // input tensors re-hashed (--inputs)
	Problems []string `json:"problems"`
	Notes    []string `json:"notes"`
}

func newVerifyDoc(path string, plan bool, c *pipeline.SetCheck) verifyDoc {
	doc := verifyDoc{Schema: cli.Schema(1, "verify"), Path: path, Plan: plan, OK: c.OK(), Count: c.Count, Tensors: c.Tensors,
		Files: []verifyFileJSON{}, Problems: nonNil(c.Problems), Notes: nonNil(c.Notes), Warnings: []cli.Warning{}}
	for _, f := range c.Files {
		doc.Files = append(doc.Files, verifyFileJSON{Index: f.Index, Path: f.Path, OK: len(f.Problems) == 0, Present: f.Present,
			Bytes: f.Bytes, Tensors: f.Tensors, Header: f.Header, Sidecar: f.Sidecar, Hashed: f.Hashed, Inputs: f.InputsHashed,
			Problems: nonNil(f.Problems), Notes: nonNil(f.Notes)})
	}
	return doc
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeVerifyText prints the report: a line per file with a problem or a
// note (every file with verbose), then the verdict.
func writeVerifyText(w io.Writer, path string, plan bool, c *pipeline.SetCheck, verbose bool) error {
	b := &strings.Builder{}
	what := "the set's own checks"
	if plan {
		what = "the plan's headers"
	}
	fmt.Fprintf(b, "%s: %d file(s), checked against %s\n", path, c.Count, what)
	hashed, sidecars, headers, inputs := 0, 0, 0, 0
	for _, f := range c.Files {
		hashed += f.Hashed
		inputs += f.InputsHashed
		if f.Sidecar == "ok" {
			sidecars++
		}
		if f.Header == "ok" {
			headers++
		}
		if !verbose && len(f.Problems) == 0 && len(f.Notes) == 0 {
			continue
		}
		state := "ok"
		switch {
		case !f.Present:
			state = "MISSING"
		case len(f.Problems) > 0:
			state = "FAILED"
		}
		fmt.Fprintf(b, "  %d/%d  %s  %s", f.Index, c.Count, f.Path, state)
		if f.Present {
			fmt.Fprintf(b, "  %d bytes, %d tensors", f.Bytes, f.Tensors)
			if f.Header != "" {
				fmt.Fprintf(b, ", header %s", f.Header)
			}
			if f.Sidecar != "" { // none where the file could not be read
				fmt.Fprintf(b, ", sidecar %s", f.Sidecar)
			}
			if f.Hashed > 0 {
				fmt.Fprintf(b, " (%d tensors re-hashed)", f.Hashed)
			}
		}
		fmt.Fprintln(b)
		for _, p := range f.Problems {
			fmt.Fprintf(b, "      problem: %s\n", p)
		}
		for _, n := range f.Notes {
			fmt.Fprintf(b, "      note: %s\n", n)
		}
	}
	for _, p := range c.Problems {
		fmt.Fprintf(b, "  problem: %s\n", p)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	if c.OK() {
		fmt.Fprintf(b, "ok: %d file(s) present and consistent, %d tensors", len(c.Files), c.Tensors)
		if plan {
			fmt.Fprintf(b, ", %d header(s) the plan's byte for byte", headers)
		}
		fmt.Fprintf(b, ", %d of %d sidecar(s) present, %d tensors' bytes re-hashed and as recorded", sidecars, len(c.Files), hashed)
		if inputs > 0 {
			fmt.Fprintf(b, ", %d input tensors as recorded", inputs)
		}
		fmt.Fprintln(b)
	} else {
		n := len(c.Problems)
		for _, f := range c.Files {
			n += len(f.Problems)
		}
		fmt.Fprintf(b, "FAILED: %d problem(s)\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
