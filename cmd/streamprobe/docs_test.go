package main

import (
	"bytes"
	"encoding"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/probe"
)

// The docs check: README.md and docs/*.md stay true to the code. Every
// command line they show names a subcommand and flags that exist, every
// config key is documented in docs/configuration.md (and nothing there is
// a key that does not exist), every record field in docs/record.md, and
// every relative link resolves.

const repoRoot = "../.."

// mdFile is one Markdown file of the docs, split into what the checks read.
type mdFile struct {
	path  string   // relative to the repository root, for messages
	lines []string // the whole file
	code  []bool   // lines[i] is inside a fenced code block (fences included)
}

func docFiles(t *testing.T) []mdFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(repoRoot, "README.md")}, paths...)
	var files []mdFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, p)
		files = append(files, parseMarkdown(rel, string(b)))
	}
	if len(files) < 2 {
		t.Fatalf("found %d doc files, want README.md and docs/*.md", len(files))
	}
	return files
}

var fence = regexp.MustCompile("^\\s*(```|~~~)")

func parseMarkdown(path, text string) mdFile {
	f := mdFile{path: path, lines: strings.Split(text, "\n")}
	f.code = make([]bool, len(f.lines))
	open := ""
	for i, l := range f.lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			switch {
			case open == "":
				open = m[1]
				f.code[i] = true
				continue
			case open == m[1]:
				open = ""
				f.code[i] = true
				continue
			}
		}
		f.code[i] = open != ""
	}
	return f
}

// snippet is a piece of code in the docs: a line of a code block (with its
// continuation lines) or an inline code span; line is 1-based.
type snippet struct {
	line int
	text string
}

var codeSpan = regexp.MustCompile("(?s)(`+)(.+?)(`+)")

// snippets returns every code block line and every inline code span of f.
// A code block line ending in a backslash goes on on the next line; an
// inline span may cross a line break inside its paragraph.
func (f mdFile) snippets() []snippet {
	var out []snippet
	var para []string
	paraStart := 0
	flush := func() {
		text := strings.Join(para, "\n")
		for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
			if text[m[2]:m[3]] != text[m[6]:m[7]] {
				continue
			}
			line := paraStart + strings.Count(text[:m[0]], "\n") + 1
			out = append(out, snippet{line, strings.ReplaceAll(text[m[4]:m[5]], "\n", " ")})
		}
		para = nil
	}
	for i := 0; i < len(f.lines); i++ {
		l := f.lines[i]
		if f.code[i] {
			flush()
			start := i
			for strings.HasSuffix(strings.TrimRight(l, " "), "\\") && i+1 < len(f.lines) && f.code[i+1] {
				i++
				l = strings.TrimSuffix(strings.TrimRight(l, " "), "\\") + " " + f.lines[i]
			}
			out = append(out, snippet{start + 1, l})
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if para == nil {
			paraStart = i
		}
		para = append(para, l)
	}
	flush()
	return out
}

// invocation is `streamprobe SUB ...` or `go run ./cmd/streamprobe SUB ...`
// at the start of a command: not a metric name (streamprobe_), a module
// path (streamprobe/...), a log message in quotes, or an error message
// (`streamprobe once: ...`).
var invocation = regexp.MustCompile(`(?:^|[\s$(=])(?:\./cmd/|\./|/\S*/)?streamprobe[ \t]+([a-z][a-z0-9-]*)(:?)(.*)`)

// comment is a shell comment; commandSep splits a shell line into its
// commands; argsEnd cuts a command's arguments at a redirection.
var (
	comment    = regexp.MustCompile(`(^|\s)#.*`)
	commandSep = regexp.MustCompile(`\|\|?|;|&&`)
	argsEnd    = regexp.MustCompile(`[<>]`)
)

// subcommandFlags returns the flags subcommand sub registers, read from
// its own -h output (the usage and the defaults its FlagSet prints), and
// whether it has a flag set at all (version prints the version and
// ignores its arguments); ok is false when there is no such subcommand.
func subcommandFlags(sub string) (flags []string, hasFlagSet, ok bool) {
	if sub == "help" {
		return nil, false, true // its argument is a subcommand, checked apart
	}
	var out, errb bytes.Buffer
	if code := run([]string{sub, "-h"}, &out, &errb); code != exitOK {
		return nil, false, false
	}
	text := out.String()
	if !strings.HasPrefix(text, "Usage:") {
		return nil, false, true
	}
	if i := strings.LastIndex(text, "\nFlags:\n"); i >= 0 {
		text = text[i:]
	}
	for _, m := range regexp.MustCompile(`(?m)^  -([A-Za-z0-9][\w-]*)`).FindAllStringSubmatch(text, -1) {
		flags = append(flags, m[1])
	}
	return flags, true, true
}

var word = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// commandLine is one streamprobe invocation in the docs.
type commandLine struct {
	path string
	line int
	sub  string
	args []string
	text string
}

// commandLines returns the streamprobe invocations of f, each cut at the
// end of its command.
func commandLines(f mdFile) []commandLine {
	var out []commandLine
	for _, s := range f.snippets() {
		for _, command := range commandSep.Split(comment.ReplaceAllString(s.text, ""), -1) {
			m := invocation.FindStringSubmatch(command)
			if m == nil || m[2] != "" { // none, or an error message
				continue
			}
			rest := m[3]
			if loc := argsEnd.FindStringIndex(rest); loc != nil {
				rest = rest[:loc[0]]
			}
			out = append(out, commandLine{f.path, s.line, m[1], strings.Fields(rest), strings.TrimSpace(command)})
		}
	}
	return out
}

// flagNames returns the names of the flags args use (-name, --name,
// -name=value, and [-name] in a usage line), -h and -help aside.
func flagNames(args []string) []string {
	var names []string
	for _, a := range args {
		a = strings.TrimLeft(a, "[(")
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimRight(name, "]),.")
		if name != "h" && name != "help" {
			names = append(names, name)
		}
	}
	return names
}

// TestDocsCommandLines: every command line in README.md and docs/*.md
// names a subcommand that exists and only flags that subcommand has.
func TestDocsCommandLines(t *testing.T) {
	known := map[string][]string{}
	flagged := map[string]bool{}
	exists := func(sub string) bool {
		if _, seen := known[sub]; !seen {
			flags, hasFlagSet, ok := subcommandFlags(sub)
			if !ok {
				return false
			}
			known[sub], flagged[sub] = flags, hasFlagSet
			if hasFlagSet && len(flags) == 0 {
				t.Errorf("streamprobe %s -h prints a usage but no flag: the check cannot read its flags", sub)
			}
		}
		return true
	}
	seen := 0
	for _, f := range docFiles(t) {
		for _, c := range commandLines(f) {
			seen++
			switch {
			case !exists(c.sub):
				t.Errorf("%s:%d: streamprobe %s: no such subcommand (in %q)", c.path, c.line, c.sub, c.text)
			case c.sub == "help":
				if len(c.args) > 0 && word.MatchString(c.args[0]) && !exists(c.args[0]) {
					t.Errorf("%s:%d: streamprobe help %s: no such subcommand", c.path, c.line, c.args[0])
				}
			case flagged[c.sub]:
				for _, name := range flagNames(c.args) {
					if !slices.Contains(known[c.sub], name) {
						t.Errorf("%s:%d: streamprobe %s has no flag -%s (its flags: -%s)", c.path, c.line, c.sub, name, strings.Join(known[c.sub], ", -"))
					}
				}
			}
		}
	}
	if seen < 10 {
		t.Errorf("found %d streamprobe command lines in the docs: the check is not reading them", seen)
	}
	t.Logf("checked %d command lines of %d subcommands", seen, len(known))
}

// configKeys returns every key of the config file, as a dotted path: a
// [[target]] key as target.url, a [budget.<sample>] key as
// budget.<sample>.tfc. Values decoded from text (durations, URLs,
// schedules) and maps of plain values ([labels], headers) are keys.
func configKeys() []string {
	textType := reflect.TypeFor[encoding.TextUnmarshaler]()
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
			if name == "" || name == "-" || !sf.IsExported() {
				continue
			}
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case reflect.PointerTo(ft).Implements(textType):
				keys = append(keys, prefix+name)
			case ft.Kind() == reflect.Struct:
				walk(ft, prefix+name+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), prefix+name+".")
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), prefix+name+".<sample>.")
			default:
				keys = append(keys, prefix+name)
			}
		}
	}
	walk(reflect.TypeFor[config.Config](), "")
	return keys
}

var (
	heading      = regexp.MustCompile(`^#{1,6}\s+(.*)`)
	tomlTable    = regexp.MustCompile("`\\[\\[?([a-z_.<>]+)\\]\\]?`")
	backticked   = regexp.MustCompile("`([^`]+)`")
	tableDivider = regexp.MustCompile(`^\|[\s:|-]+\|$`)
)

// tableKeys reads the key tables of f: Markdown tables whose first header
// cell is "key". A table's TOML table is the first `[name]` or `[[name]]`
// in the nearest heading above it (none: the top level); each row's first
// cell names its keys in backticks. It returns each documented key, as
// configKeys writes it, with its line.
func tableKeys(f mdFile) map[string]int {
	keys := map[string]int{}
	section := ""
	inKeyTable := false
	for i, l := range f.lines {
		if f.code[i] {
			continue
		}
		if m := heading.FindStringSubmatch(l); m != nil {
			section = ""
			if tm := tomlTable.FindStringSubmatch(m[1]); tm != nil {
				section = tm[1] + "."
			}
			continue
		}
		if !strings.HasPrefix(l, "|") {
			inKeyTable = false
			continue
		}
		cells := strings.Split(strings.Trim(l, "| "), "|")
		first := strings.TrimSpace(cells[0])
		if i+1 < len(f.lines) && tableDivider.MatchString(strings.TrimSpace(f.lines[i+1])) {
			inKeyTable = first == "key"
			continue
		}
		if !inKeyTable || tableDivider.MatchString(strings.TrimSpace(l)) {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(first, -1) {
			keys[section+strings.Trim(m[1], "[]")] = i + 1
		}
	}
	return keys
}

// TestDocsConfigKeys: docs/configuration.md documents every config key in
// its tables, and every key in its tables exists.
func TestDocsConfigKeys(t *testing.T) {
	var conf mdFile
	for _, f := range docFiles(t) {
		if f.path == filepath.Join("docs", "configuration.md") {
			conf = f
		}
	}
	if conf.path == "" {
		t.Fatal("docs/configuration.md is missing")
	}
	documented := tableKeys(conf)
	real := configKeys()
	if len(real) < 40 {
		t.Fatalf("found %d config keys by reflection: %v", len(real), real)
	}
	for _, k := range real {
		if _, ok := documented[k]; !ok {
			t.Errorf("%s: config key %s is not in its tables", conf.path, k)
		}
	}
	t.Logf("%d config keys, %d documented", len(real), len(documented))
	for k, line := range documented {
		if !slices.Contains(real, k) {
			t.Errorf("%s:%d: %s is documented as a config key, and there is no such key", conf.path, line, k)
		}
	}
}

// recordFields returns the JSON fields of a record, nested ones as
// gaps.count.
func recordFields() []string {
	var fields []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if sf.Anonymous && name == "" {
				walk(sf.Type, prefix)
				continue
			}
			if name == "" || name == "-" || !sf.IsExported() {
				continue
			}
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft, prefix+name+".")
				continue
			}
			fields = append(fields, prefix+name)
		}
	}
	walk(reflect.TypeFor[probe.Record](), "")
	return fields
}

// TestDocsRecordFields: docs/record.md names every field of the record
// (in backticks, in a table row).
func TestDocsRecordFields(t *testing.T) {
	named := map[string]bool{}
	var path string
	for _, f := range docFiles(t) {
		if f.path != filepath.Join("docs", "record.md") {
			continue
		}
		path = f.path
		for i, l := range f.lines {
			if f.code[i] || !strings.HasPrefix(l, "|") {
				continue
			}
			first := strings.Split(strings.Trim(l, "| "), "|")[0]
			for _, m := range backticked.FindAllStringSubmatch(first, -1) {
				named[m[1]] = true
			}
		}
	}
	if path == "" {
		t.Fatal("docs/record.md is missing")
	}
	for _, f := range recordFields() {
		if !named[f] {
			t.Errorf("%s: record field %s is in no table", path, f)
		}
	}
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+<?([^\s>]+)`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// relativeLinks returns the relative link targets of f outside code,
// with their lines: [text](target), ![alt](target) and [ref]: target.
func relativeLinks(f mdFile) []snippet {
	var out []snippet
	for i, l := range f.lines {
		if f.code[i] {
			continue
		}
		l = codeSpan.ReplaceAllString(l, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(l); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if !scheme.MatchString(target) {
				out = append(out, snippet{i + 1, target})
			}
		}
	}
	return out
}

// TestDocsLinks: every relative link in README.md and docs/*.md points at a
// file that exists, and an anchor at a heading of that file (when it is
// Markdown).
func TestDocsLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(parseMarkdown(path, string(b)))
		return anchors[path]
	}
	links := 0
	for _, f := range docFiles(t) {
		for _, l := range relativeLinks(f) {
			links++
			file, anchor, _ := strings.Cut(l.text, "#")
			dest := filepath.Clean(f.path)
			if file != "" {
				dest = filepath.Clean(filepath.Join(filepath.Dir(f.path), file))
				if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", f.path, l.line, l.text, dest)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !headings(dest)[anchor] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", f.path, l.line, l.text, dest, anchor)
			}
		}
	}
	if links < 10 {
		t.Errorf("found %d relative links in the docs: the check is not reading them", links)
	}
	t.Logf("checked %d relative links", links)
}

// headingAnchors returns the anchors GitHub gives f's headings: the text
// lower-cased, without its code marks and punctuation, spaces as hyphens;
// a repeated one gets -1, -2...
func headingAnchors(f mdFile) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for i, l := range f.lines {
		m := heading.FindStringSubmatch(l)
		if f.code[i] || m == nil {
			continue
		}
		text := inlineLink.ReplaceAllStringFunc(m[1], func(s string) string {
			return s[strings.Index(s, "[")+1 : strings.Index(s, "]")]
		})
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

// pastedRun is a command the docs show with its output: `$ CMD` in a
// code block and the lines under it, up to the next `$ ` line or the
// block's end.
type pastedRun struct {
	path string
	line int
	args []string
	out  []string
}

// pastedRuns are the commands with output in f that run against the
// built-in target or the repository's own files (once -builtin, demo,
// validate of a committed file): those a test can run as the docs show
// them. The others (a daemon's logs, a results log, a peer on a port of
// the day, check's ten minutes) are left to TestDocsCommandLines.
func pastedRuns(f mdFile) []pastedRun {
	var out []pastedRun
	var cur *pastedRun
	for i, l := range f.lines {
		if !f.code[i] || fence.MatchString(l) {
			cur = nil
			continue
		}
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			cur = nil
			m := invocation.FindStringSubmatch(cmd)
			if m == nil || m[2] != "" || commandSep.MatchString(comment.ReplaceAllString(cmd, "")) || argsEnd.MatchString(m[3]) {
				continue
			}
			args := append([]string{m[1]}, shellFields(comment.ReplaceAllString(m[3], ""))...)
			if !runnable(args) {
				continue
			}
			out = append(out, pastedRun{path: f.path, line: i + 1, args: args})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil {
			cur.out = append(cur.out, l)
		}
	}
	return out
}

// shellFields splits a pasted command line as a POSIX shell splits words:
// at unquoted blanks, with '...' taken as is and "..." with \" and \\
// inside (a JSON argument in single quotes is one argument).
func shellFields(s string) []string {
	var out []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				b.WriteByte(s[i])
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// runnable reports whether a pasted command runs here as it stands.
func runnable(args []string) bool {
	switch args[0] {
	case "demo":
		return true
	case "once":
		return slices.Contains(args, "-builtin")
	case "validate":
		i := slices.Index(args, "-config")
		if i < 0 || i+1 == len(args) {
			return false
		}
		_, err := os.Stat(filepath.Join(repoRoot, args[i+1]))
		return err == nil
	}
	return false
}

// The shape of a line: what may differ between two runs of one command
// (timings and sizes with a fraction, request ids, ports, timestamps,
// the stall and burst counts that depend on the machine's load) made a
// placeholder, spaces collapsed; every word, label, verdict and count
// stays.
var (
	shapeHex   = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	shapeTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`)
	shapePort  = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	shapeFloat = regexp.MustCompile(`\d+\.\d+`)
	shapeMs    = regexp.MustCompile(`\d+( ms|ms| B\b| bytes)`)
	shapeLoad  = regexp.MustCompile(`(stalls > 250 ms|bursts?|reconnects?|resumed) +\d+`)
)

func shape(l string) string {
	l = shapeLoad.ReplaceAllString(l, "$1 N")
	l = shapeTime.ReplaceAllString(l, "T")
	l = shapeHex.ReplaceAllString(l, "H")
	l = shapePort.ReplaceAllString(l, "127.0.0.1:P")
	l = shapeFloat.ReplaceAllString(l, "F")
	l = shapeMs.ReplaceAllString(l, "F$1")
	return strings.Join(strings.Fields(l), " ")
}

// sameShape compares a pasted output with a real one, line by line by
// shape; a pasted line `...` stands for any number of real lines left
// out. It returns "" when they agree, else the first difference.
func sameShape(pasted, real []string) string {
	j := 0
	for i := 0; i < len(pasted); i++ {
		want := shape(pasted[i])
		if want == "..." {
			if i+1 == len(pasted) {
				return ""
			}
			next := shape(pasted[i+1])
			for j < len(real) && shape(real[j]) != next {
				j++
			}
			continue
		}
		if j >= len(real) {
			return fmt.Sprintf("the docs show %q where the run ended", pasted[i])
		}
		if got := shape(real[j]); got != want {
			return fmt.Sprintf("the docs show\n    %s\n  the run printed\n    %s", pasted[i], real[j])
		}
		j++
	}
	if j < len(real) {
		return fmt.Sprintf("the run printed %q after the last line the docs show (mark a cut with ...)", real[j])
	}
	return ""
}

// Every command the docs paste with its output, and that runs here as
// it stands (once -builtin, demo, validate of a committed file), is run,
// and its output has the shape the docs show: the same lines, labels,
// counts and verdict words (numbers with a fraction, ids and ports may
// differ).
func TestDocsPastedOutputs(t *testing.T) {
	var runs []pastedRun
	for _, f := range docFiles(t) {
		runs = append(runs, pastedRuns(f)...)
	}
	if len(runs) < 10 {
		t.Fatalf("found %d pasted runs in the docs, want the once, demo and validate examples", len(runs))
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%s:%d", r.path, r.line), func(t *testing.T) {
			t.Parallel()
			args := slices.Clone(r.args)
			if i := slices.Index(args, "-config"); i >= 0 {
				args[i+1] = filepath.Join(repoRoot, args[i+1])
			}
			_, stdout, stderr := runCmd(t, args...)
			text := strings.ReplaceAll(stdout+stderr, repoRoot+"/", "")
			real := strings.Split(strings.TrimRight(text, "\n"), "\n")
			pasted := slices.Clone(r.out)
			for len(pasted) > 0 && strings.TrimSpace(pasted[len(pasted)-1]) == "" {
				pasted = pasted[:len(pasted)-1]
			}
			if diff := sameShape(pasted, real); diff != "" {
				t.Errorf("%s:%d: streamprobe %s: %s", r.path, r.line, strings.Join(r.args, " "), diff)
			}
		})
	}
}

// The shape keeps words, labels and counts and drops what a run's timing
// decides: two runs' once lines with other timings and stall counts have
// one shape, a line with another count or word does not.
func TestShape(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"  stalls > 250 ms  1", "  stalls > 250 ms  0", true},
		{"  TFC              414.0 ms", "  TFC              1021.7 ms", true},
		{"  request_id       c6bfd0497b64a0cff692f77aa9daa2dc", "  request_id       8e80492cbf634c3dfe529661d9607df0", true},
		{"  chunks           10 (events 14, comments 0, truncated 0, 2331 bytes)", "  chunks           10 (events 14, comments 0, truncated 0, 2330 bytes)", true},
		{"probe.example.toml: ok (2 targets, 6 jobs)", "probe.example.toml: ok (3 targets, 11 jobs)", false},
		{"  outcome          success  HTTP 200", "  outcome          refused  HTTP 200", false},
		{"  chunks           10 (events 14", "  chunks           9 (events 14", false},
	} {
		if got := shape(tt.a) == shape(tt.b); got != tt.same {
			t.Errorf("%q and %q: same shape %v, want %v (%q, %q)", tt.a, tt.b, got, tt.same, shape(tt.a), shape(tt.b))
		}
	}
}

func TestShellFields(t *testing.T) {
	for in, want := range map[string][]string{
		`once -builtin -tool-args '{"steps":10,"task":true}' -drill drop`: {"once", "-builtin", "-tool-args", `{"steps":10,"task":true}`, "-drill", "drop"},
		`once -body "a \"b\" c"  -x`:                                      {"once", "-body", `a "b" c`, "-x"},
		`a '' b`:                                                          {"a", "", "b"},
	} {
		if got := shellFields(in); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
