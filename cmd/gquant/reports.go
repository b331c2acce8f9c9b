package main

import (
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/cli"
	"github.com/gquant/gquant/repack"
	"github.com/gquant/gquant/splitter"
)

// The JSON documents of split, merge and repack (--json): one document on
// stdout, "schema" first, warnings as objects in an array that is always
// there, shards and tensors numbered from 1 as their text and file names
// number them. Written reports whether the files were written (false for
// --dry-run).

type fileJSON struct {
	Index   int    `json:"index"` // from 1
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Tensors int    `json:"tensors"`
}

type splitDoc struct {
	Schema   string        `json:"schema"`
	Input    string        `json:"input"`
	Prefix   string        `json:"prefix"`
	Shards   []fileJSON    `json:"shards"`
	Tensors  int           `json:"tensors"`
	Bytes    int64         `json:"bytes"`
	Written  bool          `json:"written"`
	Warnings []cli.Warning `json:"warnings"`
}

func newSplitDoc(in, prefix string, plan splitter.Plan, written bool) splitDoc {
	doc := splitDoc{Schema: cli.Schema(1, "split"), Input: in, Prefix: prefix, Bytes: plan.TotalSize(), Written: written,
		Shards: []fileJSON{}, Warnings: warningsOf(plan.Warnings, nil)}
	for i, path := range plan.Paths(prefix) {
		s := plan.Shards[i]
		doc.Shards = append(doc.Shards, fileJSON{Index: i + 1, Path: path, Bytes: s.FileSize, Tensors: len(s.Tensors)})
		doc.Tensors += len(s.Tensors)
	}
	return doc
}

type mergeDoc struct {
	Schema   string        `json:"schema"`
	Shards   []fileJSON    `json:"shards"` // the input set
	Output   string        `json:"output"`
	Bytes    int64         `json:"bytes"`
	Tensors  int           `json:"tensors"`
	Written  bool          `json:"written"`
	Warnings []cli.Warning `json:"warnings"`
}

func newMergeDoc(m *gguf.Model, out string, size int64) mergeDoc {
	doc := mergeDoc{Schema: cli.Schema(1, "merge"), Output: out, Bytes: size, Tensors: len(m.Tensors), Written: true,
		Shards: []fileJSON{}, Warnings: []cli.Warning{}}
	for i, s := range m.Shards {
		doc.Shards = append(doc.Shards, fileJSON{Index: i + 1, Path: s.Path, Bytes: s.Size, Tensors: len(s.Tensors)})
	}
	return doc
}

type repackDoc struct {
	Schema    string             `json:"schema"`
	Input     string             `json:"input"`
	Undo      bool               `json:"undo"`
	FileType  repackFileTypeJSON `json:"file_type"`
	Converted int                `json:"converted"`
	Tensors   []repackTensorJSON `json:"tensors"`
	Outputs   []fileJSON         `json:"outputs"`
	Written   bool               `json:"written"`
	Warnings  []cli.Warning      `json:"warnings"`
}

type repackFileTypeJSON struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Changed bool   `json:"changed"`
}

type repackTensorJSON struct {
	Index     int     `json:"index"` // from 1, as the text's [i/n]
	Name      string  `json:"name"`
	Shape     []int64 `json:"shape"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Converted bool    `json:"converted"`
	Reason    string  `json:"reason"`
	InBytes   int64   `json:"in_bytes"`
	OutBytes  int64   `json:"out_bytes"`
}

func newRepackDoc(m *gguf.Model, plan *repack.Plan, out string, written bool) (repackDoc, error) {
	doc := repackDoc{Schema: cli.Schema(1, "repack"), Input: m.Path, Undo: plan.Options.Undo, Converted: plan.Converted,
		FileType: repackFileTypeJSON{From: plan.FileType.From.String(), To: plan.FileType.To.String(), Changed: plan.FileType.Write},
		Tensors:  []repackTensorJSON{}, Outputs: []fileJSON{}, Written: written}
	names := map[string]bool{}
	for i, t := range plan.Tensors {
		names[t.Name] = true
		doc.Tensors = append(doc.Tensors, repackTensorJSON{Index: i + 1, Name: t.Name, Shape: t.Shape, From: t.From.String(), To: t.To.String(),
			Converted: t.Converted(), Reason: t.Reason, InBytes: t.InBytes, OutBytes: t.OutBytes})
	}
	doc.Warnings = warningsOf(plan.Warnings, names)
	sizes, err := plan.FileSizes(m, out)
	if err != nil {
		return doc, err
	}
	paths := plan.Outputs(out)
	counts := make([]int, len(paths))
	for _, t := range plan.Tensors {
		switch {
		case len(paths) == 1:
			counts[0]++
		case plan.Options.Split == nil && t.Shard < len(paths):
			counts[t.Shard]++ // one output shard per input shard
		}
	}
	for i, path := range paths {
		doc.Outputs = append(doc.Outputs, fileJSON{Index: i + 1, Path: path, Bytes: sizes[i], Tensors: counts[i]})
	}
	return doc, nil
}
