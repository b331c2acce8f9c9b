package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/ggufhash"
	"github.com/gquant/gquant/internal/cli"
)

func init() {
	register(&command{
		Name:    "hash",
		Summary: "per-tensor and whole-file hashes, or a check against a manifest, like llama-gguf-hash",
		Run:     runHash,
	})
}

// flushEvery is how often hash output reaches stdout while hashing.
const flushEvery = 200 * time.Millisecond

const hashUsage = "usage: gquant hash [--xxh64] [--xxh3] [--sha1] [--sha256] [--all] [--uuid] [--no-layer] [--set] [-c MANIFEST] FILE..."

// runHash is llama-gguf-hash's command line: the same options, output and
// exit codes (0 success, 1 failure or mismatch, 3 manifest missing entry, 4
// manifest unknown hash, 5 manifest file error), so its manifests and ours
// check against each other; 2 is a usage error, as for every gquant command.
func runHash(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("hash", pflag.ContinueOnError)
	cli.Underscores(fs)
	sel := map[ggufhash.Kind]*bool{}
	for _, k := range []ggufhash.Kind{ggufhash.XXH64, ggufhash.XXH3, ggufhash.SHA1, ggufhash.SHA256} {
		sel[k] = fs.Bool(k.String(), false, "use "+k.String()+" hash")
	}
	sel[ggufhash.UUID] = fs.Bool("uuid", false, "generate UUIDv5 ID (of whole files)")
	all := fs.Bool("all", false, "use all hashes (xxh64, xxh3, sha1, sha256)")
	noLayer := fs.Bool("no-layer", false, "exclude per tensor (layer) hashes")
	manifestPath := fs.StringP("check", "c", "", "verify against a `manifest`")
	set := fs.Bool("set", false, "hash every shard of the set a FILE belongs to (each shard's lines in turn)")
	fs.Usage = func() {
		stderr := fs.Output()
		fmt.Fprintln(stderr, hashUsage)
		fmt.Fprintln(stderr, "\nPrints the hash of each tensor's data and of all the tensor data of each file,")
		fmt.Fprintln(stderr, "in llama-gguf-hash's manifest format (xxh64 without options), or checks them")
		fmt.Fprintln(stderr, "against a manifest written by either tool. Each FILE is hashed as llama-gguf-hash")
		fmt.Fprintln(stderr, "hashes it, a shard alone; with --set, any shard names its whole set, and the output")
		fmt.Fprintln(stderr, "is what llama-gguf-hash prints for each shard in turn.")
		fmt.Fprintln(stderr, "\noptions:")
		fs.PrintDefaults()
		cli.PrintExamples(stderr,
			cli.Example{About: "xxh64 of each tensor and of each file, as llama-gguf-hash prints them",
				Line: "gquant hash model-Q4_K_M.gguf > model-Q4_K_M.manifest"},
			cli.Example{About: "check a download of a shard set (any shard names it) against the manifest hash --set made of that set",
				Line: "gquant hash --set -c model-Q4_K_M.manifest model-Q4_K_M-00001-of-00003.gguf"},
			cli.Example{About: "only the whole-file sha256, for a model card",
				Line: "gquant hash --sha256 --no-layer model-Q4_K_M.gguf"},
		)
	}
	const program = "gquant hash"
	if status, done := cli.ParseFlags(program, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() == 0 {
		return cli.UsageError(program, fs, stderr, errors.New("want one FILE or more"))
	}
	var kinds ggufhash.Kinds
	for k, on := range sel {
		if *on {
			kinds |= ggufhash.KindsOf(k)
		}
	}
	if *all {
		kinds |= ggufhash.AllHashes
	}

	out := bufio.NewWriter(stdout)
	// The error of this last flush is not lost: the writer below keeps it
	// and the command exits 1 (cli.Set.Run).
	defer out.Flush()
	var checker *ggufhash.Checker
	if *manifestPath != "" {
		man, status, err := readManifest(*manifestPath)
		if err != nil {
			fmt.Fprintf(stderr, "gquant hash: %v\n", err)
			return int(status)
		}
		fmt.Fprintf(out, "manifest  %s", *manifestPath)
		for _, k := range man.Kinds().ByStrength() {
			fmt.Fprintf(out, "  %s", k)
		}
		fmt.Fprintln(out)
		if kinds == 0 {
			// As llama-gguf-hash: the strongest hash the manifest has.
			kinds = ggufhash.KindsOf(man.Kinds().ByStrength()[0])
		}
		checker = ggufhash.NewChecker(man)
	}
	if kinds == 0 {
		kinds = ggufhash.KindsOf(ggufhash.XXH64)
	}

	opts := ggufhash.Options{Kinds: kinds, NoTensors: *noLayer}
	flushed := time.Now()
	emit := func(r *ggufhash.Result) error {
		for _, k := range r.Sums.Kinds().List() {
			out.WriteString(r.Line(k))
			if checker != nil {
				fmt.Fprintf(out, "  -  %s", checker.Check(r, k))
			}
			out.WriteByte('\n')
		}
		// Lines show up as tensors are done (a big model takes minutes), but
		// in one write per flushEvery rather than one per tensor (tens of
		// thousands for a big MoE model with per-expert tensors).
		if time.Since(flushed) < flushEvery {
			return nil
		}
		flushed = time.Now()
		return out.Flush()
	}
	var done []*gguf.Model // opened so far, to hash each shard set once
	defer func() {
		for _, m := range done {
			m.Close()
		}
	}()
	open := gguf.OpenShard
	if *set {
		open = gguf.Open
	}
	for _, path := range fs.Args() {
		m, err := open(path)
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "gquant hash: %v\n", err)
			return int(ggufhash.Failure)
		}
		if seenShards(done, m) {
			// A file already hashed (another spelling), or with --set
			// another shard of a set already hashed, as with a glob over
			// a set's files.
			m.Close()
			continue
		}
		done = append(done, m)
		if err := ggufhash.HashModel(m, opts, emit); err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "gquant hash: %v\n", err)
			return int(ggufhash.Failure)
		}
	}
	if checker == nil {
		return int(ggufhash.Success)
	}
	status := checker.Status()
	fmt.Fprintf(out, "\nVerification results for %s - %s\n", *manifestPath, status)
	return int(status)
}

// readManifest reads the manifest at path; on failure, status is the exit
// code llama-gguf-hash gives.
func readManifest(path string) (m *ggufhash.Manifest, status ggufhash.Status, err error) {
	// A plain open, unlike the models' (gguf.OpenRegular): a manifest may
	// come through a pipe, -c <(curl ...), as llama-gguf-hash reads it.
	f, err := os.Open(path)
	if err != nil {
		return nil, ggufhash.ManifestError, fmt.Errorf("cannot open manifest: %w", err)
	}
	defer f.Close()
	m, err = ggufhash.ReadManifest(f)
	if err != nil {
		return nil, ggufhash.ManifestError, fmt.Errorf("%s: %w", path, err)
	}
	if m.Kinds() == 0 {
		return nil, ggufhash.UnknownHash, fmt.Errorf("manifest %s has no line of a known hash (xxh64, xxh3, sha1, sha256, uuid)", path)
	}
	return m, ggufhash.Success, nil
}

// seenShards reports whether a shard of m is a shard of a model in done.
func seenShards(done []*gguf.Model, m *gguf.Model) bool {
	for _, d := range done {
		for _, a := range d.Shards {
			for _, b := range m.Shards {
				if same, _ := gguf.SameFile(a.Path, b.Path); same {
					return true
				}
			}
		}
	}
	return false
}
