package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestErrorReport(t *testing.T) {
	s := Set{Program: "prog"}
	s.Register(&Command{Name: "job", JSON: true, Run: func(args []string, stdout, stderr io.Writer) int {
		switch args[len(args)-1] {
		case "ok":
			io.WriteString(stdout, "{}\n")
			return 0
		case "report":
			io.WriteString(stdout, `{"schema": "prog.job/1"}`+"\n")
			return 1
		case "sub":
			fmt.Fprint(stderr, "warning: x\n")
			fmt.Fprint(Raw(stderr), "\r 40% [===]\r") // a progress bar, as it writes
			fmt.Fprint(stderr, "prog job calibrate: no table\nprog job calibrate: give --kld\nusage: prog job ...\n")
			return 2
		case "many":
			for i := range errorTapLimit + 3 {
				fmt.Fprintf(stderr, "prog job: line %d\n", i)
			}
			return 1
		case "silent":
			return 130
		}
		fmt.Fprint(stderr, "prog job: m.gguf: tensor x: row 3: not finite\nprog job: advice: see --help") // no final newline
		return 1
	}})
	s.Register(&Command{Name: "plain", Run: func(args []string, stdout, stderr io.Writer) int {
		fmt.Fprintln(stderr, "prog plain: failed")
		return 1
	}})
	for _, tc := range []struct {
		args    []string
		want    *ErrorReport // nil: stdout as the command left it
		command string
	}{
		{[]string{"job", "--json", "fail"}, &ErrorReport{Status: 1, Error: "m.gguf: tensor x: row 3: not finite", Details: []string{"advice: see --help"}}, "prog job"},
		{[]string{"job", "--json=1", "sub"}, &ErrorReport{Status: 2, Error: "no table", Details: []string{"give --kld"}}, "prog job calibrate"},
		{[]string{"job", "--json", "many"}, &ErrorReport{Status: 1, Error: "line 0"}, "prog job"},
		{[]string{"job", "--json", "silent"}, &ErrorReport{Status: 130, Error: "exit status 130", Details: []string{}}, "prog job"},
		{[]string{"job", "--json", "ok"}, nil, ""},
		{[]string{"job", "--json", "report"}, nil, ""},
		{[]string{"job", "--json=false", "fail"}, nil, ""},
		{[]string{"job", "--", "--json", "fail"}, nil, ""},
		{[]string{"job", "fail"}, nil, ""},
		{[]string{"plain", "--json"}, nil, ""},
	} {
		var out, errb bytes.Buffer
		code := s.Run(tc.args, &out, &errb)
		if tc.want == nil {
			if strings.Contains(out.String(), ErrorSchema) {
				t.Errorf("%q: an error report was added: %s", tc.args, out.String())
			}
			continue
		}
		var got ErrorReport
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Errorf("%q: %v\n%s", tc.args, err, out.String())
			continue
		}
		if got.Schema != ErrorSchema || got.Command != tc.command || got.Status != code || code != tc.want.Status ||
			got.Error != tc.want.Error || got.Warnings == nil || got.Details == nil {
			t.Errorf("%q: exit %d, %+v", tc.args, code, got)
		}
		if tc.args[2] == "sub" && (len(got.Warnings) != 1 || got.Warnings[0] != Warning{Kind: "warning", Message: "x"}) {
			t.Errorf("%q: warnings %+v, want the stderr warning", tc.args, got.Warnings)
		}
		if tc.want.Details != nil && fmt.Sprint(got.Details) != fmt.Sprint(tc.want.Details) {
			t.Errorf("%q: details %q, want %q", tc.args, got.Details, tc.want.Details)
		}
		if tc.args[2] == "many" && (len(got.Details) != errorTapLimit || got.Details[errorTapLimit-1] != "3 more line(s) on stderr") {
			t.Errorf("many lines: %d details, last %q", len(got.Details), got.Details[len(got.Details)-1])
		}
	}
}
