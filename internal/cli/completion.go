package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Shell completion scripts are generated from the registered commands and
// from each command's own --help, which prints its flag set's defaults
// (pflag's PrintDefaults): the scripts never fall out of step with the
// flags. Flags that take a value complete file names, as do arguments;
// subcommands (rows quantize, fit calibrate, completion bash) come from
// the usage lines ("usage: gquant rows quantize ...").

// completion is what the scripts know about one command (or subcommand).
type completion struct {
	Name    string // "quantize", or "rows quantize" for a subcommand
	Summary string
	Subs    []string // words that may follow the name (subcommands, choices)
	Flags   []compFlag
}

// subRequired: a command with subcommands and no flags of its own (rows,
// completion) takes nothing but a subcommand next, where one with flags
// (fit) may take a file instead.
func (c completion) subRequired() bool { return len(c.Subs) > 0 && len(c.Flags) == 0 }

type compFlag struct {
	Long, Short string
	Value       bool // takes a value
	Usage       string
}

// A flag line of PrintDefaults: "  -o, --output FILE   usage" or
// "      --json   usage" (two spaces or more before the usage).
var flagLine = regexp.MustCompile(`^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][A-Za-z0-9-]*)( [^ ]+)?(?:\s{2,}(.*))?$`)

// helpOf runs a command's Run with args and --help and returns what it
// printed on both streams.
func helpOf(c *Command, args ...string) string {
	var buf bytes.Buffer
	c.Run(append(args, "--help"), &buf, &buf)
	return buf.String()
}

// parseHelp reads the flags of a help text and the words that may follow
// the command path in its usage lines (lower-case words, or choices
// written a|b|c).
func parseHelp(program, path, help string) (flags []compFlag, subs []string) {
	seen := map[string]bool{}
	usage := regexp.MustCompile(`^\s*(?:usage:\s*)?` + regexp.QuoteMeta(program+" "+path) + `\s+([a-z0-9|]+)(?:\s|$)`)
	for _, line := range strings.Split(help, "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil && !seen[m[2]] {
			seen[m[2]] = true
			flags = append(flags, compFlag{Long: m[2], Short: m[1], Value: m[3] != "", Usage: strings.TrimSpace(m[4])})
			continue
		}
		if m := usage.FindStringSubmatch(line); m != nil {
			for _, w := range strings.Split(m[1], "|") {
				if w != "" && !seen["\x00"+w] {
					seen["\x00"+w] = true
					subs = append(subs, w)
				}
			}
		}
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].Long < flags[j].Long })
	return flags, subs
}

// completions describes every command, and the subcommands whose own
// --help lists flags.
func (s *Set) completions() []completion {
	var names []string
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []completion
	for _, n := range names {
		c := s.commands[n]
		comp := completion{Name: n, Summary: c.Summary}
		if n != "completion" {
			comp.Flags, comp.Subs = parseHelp(s.Program, n, helpOf(c))
		} else {
			comp.Subs = shells
		}
		out = append(out, comp)
		for _, sub := range comp.Subs {
			if n == "completion" {
				continue
			}
			flags, subs := parseHelp(s.Program, n+" "+sub, helpOf(c, sub))
			if len(flags) > 0 || len(subs) > 0 {
				out = append(out, completion{Name: n + " " + sub, Flags: flags, Subs: subs})
			}
		}
	}
	return out
}

var shells = []string{"bash", "zsh", "fish"}

// CompletionCommand is the "completion" subcommand of s: it prints the
// completion script of a shell.
func CompletionCommand(s *Set) *Command {
	return &Command{
		Name:    "completion",
		Summary: "print a shell completion script: completion bash|zsh|fish",
		Run: func(args []string, stdout, stderr io.Writer) int {
			usage := func(w io.Writer) {
				fmt.Fprintf(w, "usage: %s completion bash|zsh|fish\n\n", s.Program)
				fmt.Fprintf(w, "Prints the completion script of a shell, made from the commands and their flags.\n")
				PrintExamples(w,
					Example{About: "bash, now; add the line to ~/.bashrc to keep it", Line: "source <(" + s.Program + " completion bash)"},
					Example{About: "zsh, then start a new shell", Line: s.Program + " completion zsh > \"${fpath[1]}/_" + s.Program + "\""},
					Example{About: "fish", Line: s.Program + " completion fish > ~/.config/fish/completions/" + s.Program + ".fish"},
				)
			}
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				usage(stdout)
				return 0
			}
			for _, a := range args {
				if strings.HasPrefix(a, "-") {
					fmt.Fprintf(stderr, "%s completion: unknown flag %s\n", s.Program, a)
					usage(stderr)
					return 2
				}
			}
			if len(args) != 1 {
				fmt.Fprintf(stderr, "%s completion: want one shell: bash, zsh or fish\n", s.Program)
				usage(stderr)
				return 2
			}
			var err error
			switch args[0] {
			case "bash":
				err = s.writeBash(stdout)
			case "zsh":
				err = s.writeZsh(stdout)
			case "fish":
				err = s.writeFish(stdout)
			default:
				fmt.Fprintf(stderr, "%s completion: unknown shell %q: want bash, zsh or fish\n", s.Program, args[0])
				return 2
			}
			if err != nil {
				fmt.Fprintf(stderr, "%s completion: %v\n", s.Program, err)
				return 1
			}
			return 0
		},
	}
}

// shellWord is a Go-side check that a name is safe to write unquoted in
// every shell's script (command and flag names are).
var shellWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*( [A-Za-z0-9][A-Za-z0-9_-]*)?$`)

func checkWords(comps []completion) error {
	for _, c := range comps {
		words := append([]string{c.Name}, c.Subs...)
		for _, f := range c.Flags {
			words = append(words, f.Long)
		}
		for _, w := range words {
			if !shellWord.MatchString(w) {
				return fmt.Errorf("%q cannot be written into a completion script", w)
			}
		}
	}
	return nil
}

func flagWords(c completion, valueOnly bool) string {
	var w []string
	for _, f := range c.Flags {
		if valueOnly && !f.Value {
			continue
		}
		w = append(w, "--"+f.Long)
		if f.Short != "" {
			w = append(w, "-"+f.Short)
		}
	}
	return strings.Join(w, " ")
}

// nested lists the "cmd sub" keys, for the scripts' look-up of a
// subcommand's own flags.
func nested(comps []completion) []string {
	var out []string
	for _, c := range comps {
		if strings.Contains(c.Name, " ") {
			out = append(out, c.Name)
		}
	}
	return out
}

func (s *Set) writeBash(w io.Writer) error {
	comps := s.completions()
	if err := checkWords(comps); err != nil {
		return err
	}
	fn := "_" + strings.ReplaceAll(s.Program, "-", "_")
	var top []string
	for _, c := range comps {
		if !strings.Contains(c.Name, " ") {
			top = append(top, c.Name)
		}
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# bash completion for %s (made by: %s completion bash)\n", s.Program, s.Program)
	p("%s() {\n", fn)
	p("    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	p("    if [[ $COMP_CWORD -eq 1 ]]; then\n")
	p("        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(append(top, "help", "--help", "--version"), " "))
	p("        return\n    fi\n")
	p("    local key=\"${COMP_WORDS[1]}\" flags=\"\" valflags=\"\" subs=\"\" only=\"\"\n")
	if keys := nested(comps); len(keys) > 0 {
		p("    if [[ $COMP_CWORD -ge 3 ]]; then\n        case \"${COMP_WORDS[1]} ${COMP_WORDS[2]}\" in\n")
		p("            %s) key=\"${COMP_WORDS[1]} ${COMP_WORDS[2]}\" ;;\n", quotedAlternatives(keys))
		p("        esac\n    fi\n")
	}
	p("    case \"$key\" in\n")
	p("        help) subs=%q; only=1 ;;\n", strings.Join(top, " "))
	for _, c := range comps {
		only := ""
		if c.subRequired() {
			only = "; only=1"
		}
		p("        %q) flags=%q; valflags=%q; subs=%q%s ;;\n", c.Name, strings.TrimSpace(flagWords(c, false)+" --help"), flagWords(c, true), strings.Join(c.Subs, " "), only)
	}
	p("    esac\n")
	p("    if [[ -n \"$valflags\" && \" $valflags \" == *\" $prev \"* ]]; then\n")
	p("        COMPREPLY=($(compgen -f -- \"$cur\"))\n        return\n    fi\n")
	p("    if [[ \"$cur\" == -* ]]; then\n")
	p("        COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n        return\n    fi\n")
	p("    COMPREPLY=()\n")
	p("    if [[ -n \"$subs\" && ( $COMP_CWORD -eq 2 || \"$key\" == *\" \"* && $COMP_CWORD -eq 3 ) ]]; then\n")
	p("        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n")
	p("        [[ -n \"$only\" ]] && return\n    fi\n")
	p("    COMPREPLY+=($(compgen -f -- \"$cur\"))\n")
	p("}\n")
	p("complete -o filenames -o bashdefault -F %s %s\n", fn, s.Program)
	_, err := io.WriteString(w, b.String())
	return err
}

// quotedAlternatives writes case patterns: "a b"|"c d".
func quotedAlternatives(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, "|")
}

// zshText makes a description safe inside a single-quoted _arguments
// spec or _describe entry: no quotes, brackets or colons.
func zshText(s string) string {
	r := strings.NewReplacer("'", "’", "[", "(", "]", ")", ":", " -", "\\", "/", "`", "", "$", "")
	return r.Replace(s)
}

func (s *Set) writeZsh(w io.Writer) error {
	comps := s.completions()
	if err := checkWords(comps); err != nil {
		return err
	}
	fn := "_" + strings.ReplaceAll(s.Program, "-", "_")
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("#compdef %s\n# zsh completion for %s (made by: %s completion zsh)\n\n", s.Program, s.Program, s.Program)
	p("%s() {\n", fn)
	p("    local -a commands\n    commands=(\n")
	for _, c := range comps {
		if !strings.Contains(c.Name, " ") {
			p("        '%s:%s'\n", c.Name, zshText(c.Summary))
		}
	}
	p("        'help:show the commands or a command'\"'\"'s options'\n    )\n")
	p("    if (( CURRENT == 2 )); then\n")
	p("        _describe -t commands '%s command' commands\n", s.Program)
	p("        return\n    fi\n")
	p("    local key=${words[2]}\n")
	if keys := nested(comps); len(keys) > 0 {
		p("    if (( CURRENT >= 4 )); then\n        case \"${words[2]} ${words[3]}\" in\n")
		p("            (%s) key=\"${words[2]} ${words[3]}\" ;;\n", quotedAlternatives(keys))
		p("        esac\n    fi\n")
	}
	p("    if [[ $key == *' '* ]]; then\n        shift 2 words\n        (( CURRENT -= 2 ))\n    else\n        shift words\n        (( CURRENT-- ))\n    fi\n")
	p("    case $key in\n")
	p("        (help) _describe -t commands '%s command' commands ;;\n", s.Program)
	for _, c := range comps {
		p("        (%q)\n            _arguments -s \\\n", c.Name)
		for _, f := range c.Flags {
			// Every flag may be repeated ('*'): the help does not say
			// which are arrays, and pflag takes the last of the others.
			desc := "[" + zshText(f.Usage) + "]"
			if f.Value {
				desc += ":value:_files"
			}
			spec := fmt.Sprintf("'*--%s%s'", f.Long, desc)
			if f.Short != "" {
				spec = fmt.Sprintf("'*'{-%s,--%s}'%s'", f.Short, f.Long, desc)
			}
			p("                %s \\\n", spec)
		}
		if c.subRequired() {
			p("                '1:subcommand:(%s)' \\\n", strings.Join(c.Subs, " "))
		} else if len(c.Subs) > 0 {
			p("                '1:subcommand or file:_alternative \"subs:subcommand:(%s)\" \"files:file:_files\"' \\\n", strings.Join(c.Subs, " "))
		}
		p("                '*:file:_files'\n            ;;\n")
	}
	p("    esac\n}\n\n")
	p("if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n    %s \"$@\"\nelse\n    compdef %s %s\nfi\n", fn, fn, s.Program)
	_, err := io.WriteString(w, b.String())
	return err
}

// fishText makes a description safe in a single-quoted fish string.
func fishText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

func (s *Set) writeFish(w io.Writer) error {
	comps := s.completions()
	if err := checkWords(comps); err != nil {
		return err
	}
	prog := s.Program
	fn := "__" + strings.ReplaceAll(prog, "-", "_")
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# fish completion for %s (made by: %s completion fish)\n\n", prog, prog)
	// key prints the command ("quantize") or command and subcommand
	// ("rows quantize") being completed.
	p("function %s_key\n    set -l w (commandline -opc)\n    set -l key $w[2]\n", fn)
	if keys := nested(comps); len(keys) > 0 {
		p("    if test (count $w) -ge 3\n        switch \"$w[2] $w[3]\"\n")
		q := make([]string, len(keys))
		for i, k := range keys {
			q[i] = "'" + k + "'"
		}
		p("            case %s\n                set key \"$w[2] $w[3]\"\n        end\n    end\n", strings.Join(q, " "))
	}
	p("    echo $key\nend\n\n")
	p("function %s_is\n    set -l k (%s_key)\n    test \"$k\" = \"$argv\"\nend\n\n", fn, fn)
	p("function %s_at\n    test (count (commandline -opc)) -eq $argv[1]\nend\n\n", fn)
	p("complete -c %s -n '%s_at 1' -f -a help -d 'show the commands or a command'\\''s options'\n", prog, fn)
	p("complete -c %s -n '%s_at 1' -f -l version -d 'print the version'\n", prog, fn)
	var top []string
	for _, c := range comps {
		if !strings.Contains(c.Name, " ") {
			p("complete -c %s -n '%s_at 1' -f -a %s -d '%s'\n", prog, fn, c.Name, fishText(c.Summary))
			top = append(top, c.Name)
		}
	}
	// help takes a command and nothing else, as in the bash and zsh scripts.
	p("complete -c %s -n '%s_is help; and %s_at 2' -f -a '%s'\n", prog, fn, fn, strings.Join(top, " "))
	for _, c := range comps {
		cond := fmt.Sprintf("%s_is %s", fn, c.Name)
		for _, f := range c.Flags {
			line := fmt.Sprintf("complete -c %s -n '%s' -l %s", prog, cond, f.Long)
			if f.Short != "" {
				line += " -s " + f.Short
			}
			if f.Value {
				line += " -r -F"
			}
			p("%s -d '%s'\n", line, fishText(f.Usage))
		}
		if len(c.Subs) > 0 {
			depth := 2
			if strings.Contains(c.Name, " ") {
				depth = 3
			}
			noFiles := ""
			if c.subRequired() {
				noFiles = " -f"
			}
			p("complete -c %s -n '%s; and %s_at %d'%s -a '%s'\n", prog, cond, fn, depth, noFiles, strings.Join(c.Subs, " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
