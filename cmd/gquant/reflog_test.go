package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gquant/gquant/internal/golden"
)

// The tests of this file hold excerpts of llama-quantize's own logs
// (ik_llama.cpp 8337e4cd, run on the golden tiny model copied to in.gguf,
// with the same arguments, in an empty directory): a run of gquant must
// print them as they are, on the same stream, in the same order.

// refLogRun runs gquant quantize with args in a new directory that holds
// the golden tiny model as in.gguf and its importance matrix as
// imat.dat, after setup (if any) prepared the directory. It returns the
// exit status, stdout without its timing lines and stderr without
// gquant's own lines (warning:, note:, gquant quantize:).
func refLogRun(t *testing.T, setup func(), args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range map[string]string{"in.gguf": "tiny-ds2-bf16.gguf", "imat.dat": "tiny-ds2.imatrix.dat"} {
		if err := os.Symlink(golden.Path(t, "e2e", src), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	if setup != nil {
		setup()
	}
	code, stdout, stderr = runStreams(append([]string{"quantize"}, args...)...)
	stdout = regexp.MustCompile(`\nmain: quantize time = +\d+\.\d\d ms\nmain:    total time = +\d+\.\d\d ms\n$`).ReplaceAllString(stdout, "")
	stderr = regexp.MustCompile(`(?m)^(warning: |note: |gquant quantize: ).*\n`).ReplaceAllString(stderr, "")
	return code, stdout, stderr
}

// hasLines reports whether text holds want as whole lines, in a row.
func hasLines(text, want string) bool {
	return strings.HasPrefix(text, want) || strings.Contains(text, "\n"+want)
}

// The reference keeps token embeddings from a row-interleaved type in
// llama_tensor_get_type, and once more after --token-embedding-type has
// set the interleaved type again: with the option it prints the note
// twice (on stdout); with --pure (no llama_tensor_get_type) or with the
// file type alone, once.
func TestRefLogTokenEmbeddingsInterleaved(t *testing.T) {
	const note = "\n============ Token embeddings cannot be quantized with row-interleaved quants\n---> Changed q4_0_r8 to q4_0\n"
	for _, tc := range []struct {
		args []string
		want string // the reference's stdout before its timing lines
	}{
		{[]string{"--token-embedding-type", "q4_0_r8", "in.gguf", "out.gguf", "Q8_0", "2"}, note + note},
		{[]string{"--pure", "--token-embedding-type", "q4_0_r8", "in.gguf", "out.gguf", "Q8_0", "2"}, note},
		{[]string{"in.gguf", "out.gguf", "Q4_0_R8", "2"}, note},
		{[]string{"--custom-q", "token_embd=q4_0_r8", "--token-embedding-type", "q8_0_r8", "in.gguf", "out.gguf", "Q6_K", "2"},
			"Adding custom rule token_embd -> q4_0_r8\n" + note + "\n============ Token embeddings cannot be quantized with row-interleaved quants\n---> Changed q8_0_r8 to q8_0\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := refLogRun(t, nil, tc.args...)
			if code != 0 || stdout != tc.want {
				t.Errorf("exit %d, stdout:\n%q\nwant\n%q\nstderr:\n%s", code, stdout, tc.want, stderr)
			}
		})
	}
}

// "Using custom type" is printed whenever a rule gave the type in
// llama_tensor_get_type: also where the type is the source type (the
// tensor is copied: the size comes on the next line) and where an option
// replaces it afterwards.
func TestRefLogCustomTypeAlwaysNoted(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // excerpts of the reference's stderr
	}{
		{[]string{"--custom-q", "attn=f16,ffn=bf16,output=f32", "in.gguf", "out.gguf", "Q4_0", "2"}, []string{
			`[  13/  74]                blk.0.ffn_gate.weight - [  256,   512,     1,     1], type =   bf16, Using custom type bf16 for tensor blk.0.ffn_gate.weight
size =    0.250 MB
[  14/  74]                  blk.0.ffn_up.weight - [  256,   512,     1,     1], type =   bf16, Using custom type bf16 for tensor blk.0.ffn_up.weight
size =    0.250 MB
[  15/  74]                blk.0.ffn_down.weight - [  512,   256,     1,     1], type =   bf16, Using custom type bf16 for tensor blk.0.ffn_down.weight
size =    0.250 MB
`,
			`[   5/  74]                blk.0.attn_q_a.weight - [  256,   256,     1,     1], type =   bf16, Using custom type f16 for tensor blk.0.attn_q_a.weight
converting to f16 .. size =     0.12 MiB ->     0.12 MiB
`}},
		{[]string{"--custom-q", "output=q4_0", "--output-tensor-type", "q5_0", "in.gguf", "out.gguf", "Q8_0", "2"}, []string{
			`[  74/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, Using custom type q4_0 for tensor output.weight
converting to q5_0 .. size =     0.25 MiB ->     0.09 MiB
llama_model_quantize_internal: model size  =    15.79 MB
`}},
		{[]string{"--custom-q", "token_embd=q4_0_r8", "--token-embedding-type", "q8_0_r8", "in.gguf", "out.gguf", "Q6_K", "2"}, []string{
			`main: quantizing 'in.gguf' to 'out.gguf' as Q6_K using 2 threads
[   1/  74]                    token_embd.weight - [  256,   512,     1,     1], type =   bf16, Using custom type q4_0_r8 for tensor token_embd.weight
converting to q8_0 .. size =     0.25 MiB ->     0.13 MiB
`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := refLogRun(t, nil, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !hasLines(stderr, w) {
					t.Errorf("stderr lacks the reference's\n%s\nstderr:\n%s", w, stderr)
				}
			}
		})
	}
}

// --extra-output-tensor: the reference says before the first tensor
// which tensor it duplicates in which type and, where the copy would not
// be smaller, that it is not added (gquant's warning says so too); the
// tensor it duplicates is logged as converted even when its type stays.
func TestRefLogExtraOutput(t *testing.T) {
	const first = "[   1/  74]                    token_embd.weight - [  256,   512,     1,     1], type =   bf16, converting to q4_0 .. size =     0.25 MiB ->     0.07 MiB\n"
	for _, tc := range []struct {
		args []string
		want []string // excerpts of the reference's stderr
	}{
		{[]string{"--extra-output-tensor", "q5_0", "in.gguf", "out.gguf", "Q4_0", "2"}, []string{
			`main: quantizing 'in.gguf' to 'out.gguf' as Q4_0 using 2 threads
XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX Will duplicate output.weight as q5_0
` + first,
			`[  74/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, converting to q6_K .. size =     0.25 MiB ->     0.10 MiB
[  75/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, converting to q5_0 .. size =     0.25 MiB ->     0.09 MiB
`}},
		{[]string{"--extra-output-tensor", "f32", "in.gguf", "out.gguf", "Q4_0", "2"}, []string{
			`main: quantizing 'in.gguf' to 'out.gguf' as Q4_0 using 2 threads
XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX Will duplicate output.weight as f32
No, duplicating it makes no sense as the new size (524288) is greater than the original size (262144)
` + first}},
		{[]string{"--extra-output-tensor", "q8_0", "in.gguf", "out.gguf", "COPY", "2"}, []string{
			`[  74/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, converting to bf16 .. size =     0.25 MiB ->     0.25 MiB
[  75/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, converting to q8_0 .. size =     0.25 MiB ->     0.13 MiB
llama_model_quantize_internal: model size  =    15.79 MB
llama_model_quantize_internal: quant size  =    15.92 MB
`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := refLogRun(t, nil, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !hasLines(stderr, w) {
					t.Errorf("stderr lacks the reference's\n%s\nstderr:\n%s", w, stderr)
				}
			}
		})
	}
	// gquant's own warning stays.
	_, _, stderr := runStreams("quantize", "--extra-output-tensor", "f32", golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"), filepath.Join(t.TempDir(), "o.gguf"), "Q4_0", "2")
	if !strings.Contains(stderr, "warning: --extra-output-tensor: output.weight as f32 (524288 bytes) is not smaller than the original (262144 bytes): not added\n") {
		t.Errorf("gquant's warning is gone:\n%s", stderr)
	}
}

// linkGolden links the golden files into the current directory under new
// names (golden path relative to e2e -> name).
func linkGolden(t *testing.T, names map[string]string) {
	t.Helper()
	for src, name := range names {
		if err := os.Symlink(golden.Path(t, "e2e", src), name); err != nil {
			t.Fatal(err)
		}
	}
}

// --partial-requant with an output that exists: without --keep-split the
// reference says so and stops (no tensor, no sizes); with --keep-split it
// says so for each shard kept where the shard's tensors would come, and
// counts only the tensors it logs.
func TestRefLogPartialRequant(t *testing.T) {
	quantized := func(args ...string) func() {
		return func() {
			if code, _, stderr := runStreams(append([]string{"quantize"}, args...)...); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
		}
	}
	split := func(kept ...int) func() {
		return func() {
			names := map[string]string{
				"split/tiny-ds2-bf16-00001-of-00002.gguf": "tiny-ds2-bf16-00001-of-00002.gguf",
				"split/tiny-ds2-bf16-00002-of-00002.gguf": "tiny-ds2-bf16-00002-of-00002.gguf",
				// The name the shards record (quantize.imatrix.file).
				"tiny-ds2.imatrix.dat": "tiny-ds2.imatrix.dat",
			}
			for _, k := range kept {
				names[fmt.Sprintf("split/out-iq4_ks-%05d-of-00002.gguf", k)] = fmt.Sprintf("out-%05d-of-00002.gguf", k)
			}
			linkGolden(t, names)
		}
	}
	ks := []string{"--partial-requant", "--keep-split", "--imatrix", "tiny-ds2.imatrix.dat", "tiny-ds2-bf16-00001-of-00002.gguf", "out", "IQ4_KS", "2"}
	for _, tc := range []struct {
		name  string
		setup func()
		args  []string
		want  string // the reference's stderr without the loader's lines
		whole bool   // want is the whole of it, else an excerpt
	}{
		{"one file", quantized("in.gguf", "out.gguf", "Q8_0", "2"), []string{"--partial-requant", "in.gguf", "out.gguf", "Q8_0", "2"},
			`main: quantizing 'in.gguf' to 'out.gguf' as Q8_0 using 2 threads
llama_model_quantize_internal: output file out.gguf exists, skipping
`, true},
		{"one file, extra output", quantized("--extra-output-tensor", "q5_0", "in.gguf", "out.gguf", "Q8_0", "2"),
			[]string{"--partial-requant", "--extra-output-tensor", "q5_0", "in.gguf", "out.gguf", "Q8_0", "2"},
			`main: quantizing 'in.gguf' to 'out.gguf' as Q8_0 using 2 threads
llama_model_quantize_internal: output file out.gguf exists, skipping
`, true},
		{"first shard", split(1), ks, `main: quantizing 'tiny-ds2-bf16-00001-of-00002.gguf' to 'out' as IQ4_KS using 2 threads
================================ Have weights data with 50 entries
operator(): split file out-00001-of-00002.gguf exists, skipping
[   1/  74]               blk.2.attn_kv_b.weight - [  256,   512,     1,     1], type =   bf16, converting to q8_0 .. size =     0.25 MiB ->     0.13 MiB
[   2/  74]                blk.2.attn_k_b.weight - [  128,   256,     2,     1], type =   bf16, converting to q8_0 .. size =     0.12 MiB ->     0.07 MiB
[   3/  74]                blk.2.attn_v_b.weight - [  256,   128,     2,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[   4/  74]             blk.2.attn_output.weight - [  256,   256,     1,     1], type =   bf16, converting to q5_K .. size =     0.12 MiB ->     0.04 MiB
[   5/  74]                blk.2.ffn_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[   6/  74]            blk.2.ffn_gate_inp.weight - [  256,     8,     1,     1], type =    f32, size =    0.008 MB
[   7/  74]               blk.2.exp_probs_b.bias - [    8,     1,     1,     1], type =    f32, size =    0.000 MB
[   8/  74]           blk.2.ffn_gate_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[   9/  74]             blk.2.ffn_up_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[  10/  74]           blk.2.ffn_down_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[  11/  74]          blk.2.ffn_gate_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  12/  74]            blk.2.ffn_up_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  13/  74]          blk.2.ffn_down_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  14/  74]               blk.3.attn_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[  15/  74]           blk.3.attn_q_a_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[  16/  74]          blk.3.attn_kv_a_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[  17/  74]                blk.3.attn_q_a.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  18/  74]                blk.3.attn_q_b.weight - [  256,   384,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.19 MiB ->     0.05 MiB
[  19/  74]           blk.3.attn_kv_a_mqa.weight - [  256,   320,     1,     1], type =   bf16, converting to q8_0 .. size =     0.16 MiB ->     0.08 MiB
[  20/  74]               blk.3.attn_kv_b.weight - [  256,   512,     1,     1], type =   bf16, converting to q8_0 .. size =     0.25 MiB ->     0.13 MiB
[  21/  74]                blk.3.attn_k_b.weight - [  128,   256,     2,     1], type =   bf16, converting to q8_0 .. size =     0.12 MiB ->     0.07 MiB
[  22/  74]                blk.3.attn_v_b.weight - [  256,   128,     2,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  23/  74]             blk.3.attn_output.weight - [  256,   256,     1,     1], type =   bf16, converting to q5_K .. size =     0.12 MiB ->     0.04 MiB
[  24/  74]                blk.3.ffn_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[  25/  74]            blk.3.ffn_gate_inp.weight - [  256,     8,     1,     1], type =    f32, size =    0.008 MB
[  26/  74]               blk.3.exp_probs_b.bias - [    8,     1,     1,     1], type =    f32, size =    0.000 MB
[  27/  74]           blk.3.ffn_gate_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[  28/  74]             blk.3.ffn_up_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[  29/  74]           blk.3.ffn_down_exps.weight - [  256,   256,     8,     1], type =   bf16, converting to iq4_ks .. size =     1.00 MiB ->     0.27 MiB
[  30/  74]          blk.3.ffn_gate_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  31/  74]            blk.3.ffn_up_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  32/  74]          blk.3.ffn_down_shexp.weight - [  256,   256,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.12 MiB ->     0.03 MiB
[  33/  74]                   output_norm.weight - [  256,     1,     1,     1], type =    f32, size =    0.001 MB
[  34/  74]                        output.weight - [  256,   512,     1,     1], type =   bf16, converting to q6_K .. size =     0.25 MiB ->     0.10 MiB
llama_model_quantize_internal: model size  =     8.74 MB
llama_model_quantize_internal: quant size  =     2.69 MB
`, true},
		{"both shards", split(1, 2), ks, `main: quantizing 'tiny-ds2-bf16-00001-of-00002.gguf' to 'out' as IQ4_KS using 2 threads
================================ Have weights data with 50 entries
operator(): split file out-00001-of-00002.gguf exists, skipping
operator(): split file out-00002-of-00002.gguf exists, skipping
llama_model_quantize_internal: model size  =     0.00 MB
llama_model_quantize_internal: quant size  =     0.00 MB
`, true},
		{"second shard", split(2), ks, `[  39/  74]                blk.2.attn_q_b.weight - [  256,   384,     1,     1], type =   bf16, converting to iq4_ks .. size =     0.19 MiB ->     0.05 MiB
[  40/  74]           blk.2.attn_kv_a_mqa.weight - [  256,   320,     1,     1], type =   bf16, converting to q8_0 .. size =     0.16 MiB ->     0.08 MiB
operator(): split file out-00002-of-00002.gguf exists, skipping
llama_model_quantize_internal: model size  =     7.05 MB
llama_model_quantize_internal: quant size  =     2.27 MB
`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := refLogRun(t, tc.setup, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if tc.whole && stderr != tc.want || !tc.whole && !hasLines(stderr, tc.want) {
				t.Errorf("stderr:\n%s\nwant the reference's\n%s", stderr, tc.want)
			}
		})
	}
}

// A bad IN: the reference prints "main: quantizing" (and before it, on
// stdout, the rules and the importance matrix it loaded) before it opens
// IN, then fails; a file type that needs an importance matrix, without
// one, stops it before that line.
func TestRefLogBadInput(t *testing.T) {
	write := func(name string, data []byte) func() {
		return func() {
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	model, err := os.ReadFile(golden.Path(t, "e2e", "tiny-ds2-bf16.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		setup        func()
		args         []string
		first, last  string // of the reference's stderr ("" for none)
		stdout       string // the reference's stdout
		noQuantizing bool
	}{
		{"missing", nil, []string{"nosuch.gguf", "out.gguf", "Q8_0", "2"},
			"main: quantizing 'nosuch.gguf' to 'out.gguf' as Q8_0 using 2 threads\n", "main: failed to quantize model from 'nosuch.gguf'\n", "", false},
		{"empty", write("e.gguf", nil), []string{"e.gguf", "out.gguf", "Q8_0", "2"},
			"main: quantizing 'e.gguf' to 'out.gguf' as Q8_0 using 2 threads\n", "main: failed to quantize model from 'e.gguf'\n", "", false},
		{"text", write("e.gguf", []byte("hello\n")), []string{"e.gguf", "out.gguf", "Q8_0", "2"},
			"main: quantizing 'e.gguf' to 'out.gguf' as Q8_0 using 2 threads\n", "main: failed to quantize model from 'e.gguf'\n", "", false},
		{"truncated", write("e.gguf", model[:8000000]), []string{"e.gguf", "out.gguf", "Q8_0", "2"},
			"main: quantizing 'e.gguf' to 'out.gguf' as Q8_0 using 2 threads\n", "main: failed to quantize model from 'e.gguf'\n", "", false},
		{"directory", func() { os.Mkdir("dd", 0o755) }, []string{"dd", "out.gguf", "Q8_0"},
			"main: quantizing 'dd' to 'out.gguf' as Q8_0\n", "main: failed to quantize model from 'dd'\n", "", false},
		{"missing, with rules and an imatrix", nil, []string{"--imatrix", "imat.dat", "--custom-q", "attn=q8_0", "nosuch.gguf", "out.gguf", "Q8_0", "2"},
			"main: quantizing 'nosuch.gguf' to 'out.gguf' as Q8_0 using 2 threads\n", "main: failed to quantize model from 'nosuch.gguf'\n",
			`Adding custom rule attn -> q8_0
load_imatrix: imatrix dataset='synthetic-calibration.txt'
load_imatrix: loaded 50 importance matrix entries from imat.dat computed on 100 chunks
prepare_imatrix: have 50 importance matrix entries
`, false},
		{"IQ2_XS without an importance matrix", nil, []string{"in.gguf", "out.gguf", "IQ2_XS", "2"}, "", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := refLogRun(t, tc.setup, tc.args...)
			if code != 1 || stdout != tc.stdout {
				t.Errorf("exit %d, stdout:\n%s\nwant exit 1, stdout:\n%s", code, stdout, tc.stdout)
			}
			if tc.noQuantizing {
				if strings.Contains(stderr, "main: quantizing") {
					t.Errorf("stderr:\n%s\nwant no 'main: quantizing' line", stderr)
				}
				return
			}
			if !strings.HasPrefix(stderr, tc.first) || !strings.HasSuffix(stderr, tc.last) {
				t.Errorf("stderr:\n%s\nwant the reference's first line %q and last line %q", stderr, tc.first, tc.last)
			}
		})
	}
}
