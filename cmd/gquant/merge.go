package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/splitter"
)

func init() {
	register(&command{
		Name:    "merge",
		Summary: "join a shard set back into one file (the split keys are dropped)",
		Run:     runMerge,
	})
}

func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	overwrite := fs.Bool("force", false, "replace OUT if it exists (never one of the shards)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gquant merge SHARD OUT")
		fmt.Fprintln(stderr, "\nSHARD is any file of the set (PREFIX-0000K-of-0000N.gguf); the others are found by name.")
		fmt.Fprintln(stderr, "Merging the shards of a file gives that file back byte for byte.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	if err := splitter.Merge(fs.Arg(0), fs.Arg(1), &splitter.Options{Overwrite: *overwrite, Log: stdout}); err != nil {
		fmt.Fprintln(stderr, "gquant merge:", err)
		return 1
	}
	return 0
}
