package cli

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// A command run with --json that fails before printing its document still
// prints one JSON document, ErrorReport, so that a script reading standard
// output always gets JSON and can tell a failure from a report by its
// schema. The message is the one the command printed on stderr: every
// command prints its errors as "PROGRAM COMMAND[ SUB]: message" lines, and
// Set.Run keeps those lines as they pass (errorTap). A command that
// printed its document and then failed (a refused plan, a verify that
// found problems) has said everything in it, and nothing is added.

// ErrorSchema is the schema of ErrorReport.
var ErrorSchema = Schema(1, "error")

// ErrorReport is the document of a --json command that failed without
// printing its own: Command is the command as its messages name it
// ("gquant fit calibrate"), Status the exit status, Error the first
// message and Details the later ones (advice, the files a failed commit
// left), without the command's name; Warnings are the "warning: " lines it
// printed, of kind "warning".
type ErrorReport struct {
	Schema   string    `json:"schema"`
	Command  string    `json:"command"`
	Status   int       `json:"status"`
	Error    string    `json:"error"`
	Details  []string  `json:"details"`
	Warnings []Warning `json:"warnings"`
}

// wantsJSON reports whether the command arguments args ask for --json (in
// any place before "--", with pflag's forms of a true bool).
func wantsJSON(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, err := strconv.ParseBool(v)
			on = err == nil && b
		}
	}
	return on
}

// errorTapLimit bounds what an errorTap keeps: a failed commit lists the
// files it left, which is a few lines per output; a command that prints
// thousands of error lines is summarised by its first ones.
const errorTapLimit = 64

// errorTap passes everything to w and keeps the lines that start with
// prefix ("gquant quantize") and a ':' after at most one more word.
type errorTap struct {
	w        io.Writer
	prefix   string
	line     []byte
	command  string
	lines    []string
	more     int
	warnings []Warning // the "warning: " lines
}

func (t *errorTap) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\n' || c == '\r' {
			t.endLine()
			continue
		}
		if len(t.line) < 64<<10 {
			t.line = append(t.line, c)
		}
	}
	return t.w.Write(p)
}

func (t *errorTap) endLine() {
	line := string(t.line)
	t.line = t.line[:0]
	if msg, ok := strings.CutPrefix(line, "warning: "); ok && len(t.warnings) < errorTapLimit {
		// The command's own kinds are in its document, which it did not
		// get to print; here a warning is what stderr said.
		t.warnings = append(t.warnings, Warning{Kind: "warning", Message: msg})
		return
	}
	rest, ok := strings.CutPrefix(line, t.prefix)
	if !ok {
		return
	}
	command := t.prefix
	if sub, msg, found := strings.Cut(rest, ": "); found && sub != "" && sub[0] == ' ' && isWord(sub[1:]) {
		command += sub
		rest = ": " + msg
	}
	msg, ok := strings.CutPrefix(rest, ": ")
	if !ok {
		return
	}
	if t.command == "" {
		t.command = command
	}
	if len(t.lines) == errorTapLimit {
		t.more++
		return
	}
	t.lines = append(t.lines, msg)
}

// isWord reports whether s is a subcommand's name.
func isWord(s string) bool {
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return s != ""
}

// report returns the error document of a run that ended with status.
func (t *errorTap) report(status int) ErrorReport {
	if len(bytes.TrimSpace(t.line)) > 0 {
		t.endLine()
	}
	r := ErrorReport{Schema: ErrorSchema, Command: t.command, Status: status, Details: []string{}, Warnings: Warnings(t.warnings)}
	if r.Command == "" {
		r.Command = t.prefix
	}
	switch len(t.lines) {
	case 0:
		r.Error = "exit status " + strconv.Itoa(status)
	default:
		r.Error = t.lines[0]
		r.Details = append(r.Details, t.lines[1:]...)
	}
	if t.more > 0 {
		r.Details = append(r.Details, strconv.Itoa(t.more)+" more line(s) on stderr")
	}
	return r
}
