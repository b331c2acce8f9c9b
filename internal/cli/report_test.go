package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSchema(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"plan"}, "gquant.plan/1"},
		{[]string{"gquant", "quantize"}, "gquant.quantize/1"},
		{[]string{"imatrix", "check"}, "gquant.imatrix-check/1"},
	} {
		if got := Schema(1, tc.cmd...); got != tc.want {
			t.Errorf("Schema(1, %q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// A report's warnings are an array of {kind, tensor, message} even when
// there are none.
func TestWarningsJSON(t *testing.T) {
	for _, tc := range []struct {
		ws   []Warning
		want string
	}{
		{nil, `{"warnings":[]}`},
		{[]Warning{{Kind: "no-data", Tensor: "a.weight", Message: "m"}}, `{"warnings":[{"kind":"no-data","tensor":"a.weight","message":"m"}]}`},
		{[]Warning{{Kind: "k", Message: "m"}}, `{"warnings":[{"kind":"k","tensor":"","message":"m"}]}`},
	} {
		b, err := json.Marshal(struct {
			Warnings []Warning `json:"warnings"`
		}{Warnings(tc.ws)})
		if err != nil || string(b) != tc.want {
			t.Errorf("%v: %s, %v; want %s", tc.ws, b, err, tc.want)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, map[string]int{"a": 1}); err != nil || buf.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("WriteJSON: %q, %v", buf.String(), err)
	}
}

func TestSummarizeWarnings(t *testing.T) {
	var ws []Warning
	ws = append(ws, Warning{Kind: "solo", Message: "about the file"})
	for i := range 6 {
		ws = append(ws, Warning{Kind: "empty", Tensor: fmt.Sprintf("blk.%d.ffn_up_exps.weight", i), Message: "expert 5 of 8 has no data"})
		if i < 2 {
			ws = append(ws, Warning{Kind: "few", Tensor: fmt.Sprintf("blk.%d.attn_k_b.weight", i), Message: "no data"})
		}
	}
	got := SummarizeWarnings(ws, 4, false)
	want := []string{
		"about the file",
		"blk.0.ffn_up_exps.weight: expert 5 of 8 has no data [and 5 more empty warnings like it: --verbose lists each]",
		"blk.0.attn_k_b.weight: no data",
		"blk.1.attn_k_b.weight: no data",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if all := SummarizeWarnings(ws, 4, true); len(all) != len(ws) || all[3] != ws[3].String() {
		t.Errorf("verbose: %q", all)
	}
	if got := SummarizeWarnings(ws, 6, false); len(got) != len(ws) {
		t.Errorf("limit 6: %d lines, want %d", len(got), len(ws))
	}
}
