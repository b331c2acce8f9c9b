package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gquant/gquant/internal/cpu"
)

// BuildFacts are what a binary knows about its own build.
type BuildFacts struct {
	Module   string `json:"module"`             // module version: a tag, a pseudo-version or "(devel)"
	Revision string `json:"revision,omitempty"` // VCS revision ("" when not built from a checkout)
	Time     string `json:"revision_time,omitempty"`
	Modified bool   `json:"modified"` // built from a checkout with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`       // GOOS/GOARCH
	Tags     string `json:"tags,omitempty"` // build tags (-tags)
	Kernels  string `json:"kernels"`        // the CPU features the quantization kernels use
}

// ReadBuild gathers the facts from debug.ReadBuildInfo and internal/cpu.
func ReadBuild() BuildFacts {
	f := BuildFacts{Module: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			f.Module = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				f.Revision = s.Value
			case "vcs.time":
				f.Time = s.Value
			case "vcs.modified":
				f.Modified = s.Value == "true"
			case "-tags":
				f.Tags = s.Value
			}
		}
	}
	f.Kernels = kernelFeatures(f.Tags)
	return f
}

// kernelFeatures names the instruction-set extensions the hand-written
// kernels run with (each kernel needs AVX2 with FMA or F16C; see the
// use* variables of the quantize packages), or says why the portable Go
// kernels run.
func kernelFeatures(tags string) string {
	for _, t := range strings.Split(tags, ",") {
		if t == "purego" {
			return "portable Go (purego build)"
		}
	}
	if runtime.GOARCH != "amd64" {
		return "portable Go"
	}
	var have []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA}, {"F16C", cpu.X86.HasF16C}, {"AVX512", cpu.X86.HasAVX512}} {
		if f.on {
			have = append(have, f.name)
		}
	}
	if !cpu.X86.HasAVX2 {
		return "portable Go (no AVX2 on this CPU, or GODEBUG turned it off)"
	}
	return "amd64 " + strings.Join(have, " ")
}

// String is the version line: the program, its module version, the
// revision it was built from (with "+dirty" when the checkout had
// changes), the Go version and platform and the kernels' CPU features. It
// is what --version prints and what quantize --record-tool writes.
func (f BuildFacts) String() string {
	rev := "unknown revision"
	if f.Revision != "" {
		rev = "revision " + f.Revision[:min(12, len(f.Revision))]
		if f.Modified {
			rev += "+dirty"
		}
		if f.Time != "" {
			rev += " of " + f.Time
		}
	}
	return fmt.Sprintf("%s, %s, %s %s, kernels: %s", f.Module, rev, f.Go, f.Platform, f.Kernels)
}

// Version is program's version line (see BuildFacts.String).
func Version(program string) string {
	return program + " " + ReadBuild().String()
}

// VersionCommand is the "version" subcommand of program: the version line
// on stdout, or with --json the facts (schema gquant.version/1).
func VersionCommand(program string) *Command {
	return &Command{
		Name:    "version",
		Summary: "print the version: module, revision, Go, the CPU features the kernels use",
		JSON:    true,
		Run: func(args []string, stdout, stderr io.Writer) int {
			fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
			asJSON := fs.Bool("json", false, "print the facts as JSON (schema gquant.version/1)")
			fs.Usage = func() {
				fmt.Fprintf(fs.Output(), "usage: %s version [--json]\n\nPrints the version line (also: %s --version).\n\nflags:\n", program, program)
				fs.PrintDefaults()
				PrintExamples(fs.Output(),
					Example{About: "the line to paste into a bug report", Line: program + " --version"},
					Example{About: "the build's facts for a script (revision, dirty tree, Go, CPU features)", Line: program + " version --json"},
				)
			}
			if status, done := ParseFlags(program+" version", fs, args, stdout, stderr); done {
				return status
			}
			if fs.NArg() > 0 {
				return UsageError(program+" version", fs, stderr, fmt.Errorf("unexpected arguments %q", fs.Args()))
			}
			f := ReadBuild()
			if *asJSON {
				err := WriteJSON(stdout, struct {
					Schema  string `json:"schema"`
					Program string `json:"program"`
					Version string `json:"version"` // the version line
					BuildFacts
					Warnings []Warning `json:"warnings"`
				}{Schema(1, "version"), program, program + " " + f.String(), f, []Warning{}})
				if err != nil {
					fmt.Fprintf(stderr, "%s version: %v\n", program, err)
					return 1
				}
				return 0
			}
			fmt.Fprintln(stdout, program+" "+f.String())
			return 0
		},
	}
}

// IsVersionFlag reports whether args are the version flag alone
// (--version, or -V), which the programs answer as their version command.
func IsVersionFlag(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-V")
}
