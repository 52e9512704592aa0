package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

const checkUsage = `Usage: streamprobe check -config FILE [-target NAME]... [-runs N] [-concurrency C] [-q] [-json] [-junit FILE] [-html FILE]

The acceptance check before a rollout: runs each configured sample N times
per target (and each configured drill once), and prints a scorecard per
target: columns short, long, cancel; rows TFC, gap, tail, close, the share
of runs that stalled over 250 ms (red over the class's stall_share, default
5%), suspected proxy buffering (red in half the runs or more), and outcome
counts. Each cell shows p50 and p95 against the [budget.<sample>] p95
budget. Red cells get the scorecard article's triage in its fixed order. Exit 0 when every cell is within budget
and every drill passes, 1 otherwise, 2 for a config or usage error.

Flags:
`

// checkFlags are check's flags.
type checkFlags struct {
	config     string
	targets    listFlag
	runs, conc int
	quiet      bool
	out        cardOutputs
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseCheckFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, err := readConfig(ctx, f.config, os.Getenv)
	if err != nil {
		printErr(stderr, "check", err)
		return exitUsage
	}
	for _, t := range f.targets {
		if !slices.ContainsFunc(cfg.Targets, func(c config.Target) bool { return c.Name == t }) {
			fmt.Fprintf(stderr, "streamprobe check: -target %q: no such target in %s\n", t, f.config)
			return exitUsage
		}
	}
	all, stop, err := startJobs(cfg)
	if err != nil {
		printErr(stderr, "check", err)
		return exitUsage
	}
	defer stop()
	results, interrupted := measure(ctx, f, all, stderr)
	cards := checkCards(cfg, f.targets, results)
	if interrupted && !f.out.asJSON {
		fmt.Fprintln(stdout, "INTERRUPTED: the cards below hold only the runs that finished before the interrupt")
	}
	pass := !interrupted && allPass(cards)
	doc := map[string]any{"pass": pass, "interrupted": interrupted, "runs_per_sample": f.runs, "targets": cards}
	about := &scorecard.About{Command: "check", Version: version.String(), Host: cfg.Host, Config: f.config}
	return f.out.write(stdout, stderr, cards, pass, doc, scorecard.Page{Title: "streamprobe check", Generated: time.Now(), RunsPerSample: f.runs,
		Verdict: scorecard.Verdict(cards, pass, "target"), About: about})
}

// parseCheckFlags reads check's flags and checks them, and that the output
// files can be written, before anything runs.
func parseCheckFlags(args []string, stdout, stderr io.Writer) (*checkFlags, int, bool) {
	f := &checkFlags{out: cardOutputs{cmd: "check"}}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := configFlag(fs)
	fs.Var(&f.targets, "target", "only this target (repeatable; default: every target)")
	fs.IntVar(&f.runs, "runs", 20, "runs of each sample per target")
	fs.IntVar(&f.conc, "concurrency", 4, "runs in flight at once")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr (by default one line per target/sample as its runs finish; on a terminal one line kept up to date)")
	f.out.flags(fs, "print one JSON summary instead of the tables", "also write JUnit XML to this file (one testcase per cell and per drill)",
		"also write a self-contained HTML report with timelines to this file")
	if code, ok := parseFlags(fs, args, stdout, stderr, checkUsage); !ok {
		return nil, code, false
	}
	f.config = *path
	if f.runs < 1 || f.conc < 1 {
		fmt.Fprintf(stderr, "streamprobe check: -runs and -concurrency must be 1 or more\n")
		return nil, exitUsage, false
	}
	for _, o := range []struct{ flag, path string }{{"-junit", f.out.junit}, {"-html", f.out.html}} {
		if err := config.Writable(o.path); o.path != "" && err != nil {
			fmt.Fprintf(stderr, "streamprobe check: %s: %v\n", o.flag, err)
			return nil, exitUsage, false
		}
	}
	return f, exitOK, true
}

// measure runs the jobs of the selected targets, samples f.runs times
// and drills once, saying how far it got on stderr (progress); interrupted when
// ctx ended first, and then says so on stderr.
func measure(ctx context.Context, f *checkFlags, all []jobs.Job, stderr io.Writer) (map[string][]scorecard.Run, bool) {
	var todo []jobs.Job
	for _, j := range all {
		if len(f.targets) > 0 && !slices.Contains(f.targets, j.Target.Name) {
			continue
		}
		todo = append(todo, j)
	}
	progress := newProgress(stderr, todo, f.runs, f.quiet)
	results := runAll(ctx, todo, f.runs, f.conc, progress)
	progress.done()
	if ctx.Err() == nil {
		return results, false
	}
	n := 0
	for _, rs := range results {
		n += len(rs)
	}
	fmt.Fprintf(stderr, "streamprobe check: interrupted after %d of %d runs: the report covers those, and fails\n", n, progress.total)
	return results, true
}

// checkCards makes the card of each selected target, its samples in
// their fixed order, from its runs (scorecard.Cards: the daemon's status
// page judges with the same).
func checkCards(cfg *config.Config, targets []string, results map[string][]scorecard.Run) []*scorecard.Card {
	return scorecard.Cards(cfg, targets, results)
}

// budgetsOf are the config's [budget.<sample>] tables as the scorecard
// takes them.
func budgetsOf(cfg *config.Config) map[string]scorecard.Budget { return scorecard.Budgets(cfg) }

func allPass(cards []*scorecard.Card) bool {
	return !slices.ContainsFunc(cards, func(c *scorecard.Card) bool { return !c.Pass })
}

// cardOutputs are the outputs check and report share: one JSON document
// or the cards as text on stdout, and the -junit and -html files.
type cardOutputs struct {
	cmd         string
	asJSON      bool
	junit, html string
}

// flags defines -json, -junit and -html, with the usage of each.
func (o *cardOutputs) flags(fs *flag.FlagSet, json, junit, html string) {
	fs.BoolVar(&o.asJSON, "json", false, json)
	fs.StringVar(&o.junit, "junit", "", junit)
	fs.StringVar(&o.html, "html", "", html)
}

// write writes the cards: doc as JSON or the cards as text (coloured on
// a terminal unless NO_COLOR is set), then the files asked for, and
// returns the exit code: exitOK when the cards pass and every file was
// written, exitFail otherwise (a file that could not be written is said
// on stderr).
func (o cardOutputs) write(stdout, stderr io.Writer, cards []*scorecard.Card, pass bool, doc map[string]any, page scorecard.Page) int {
	if o.asJSON {
		doc["verdict"], doc["about"] = page.Verdict, page.About
		json.NewEncoder(stdout).Encode(doc)
	} else {
		color := isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && stdout == io.Writer(os.Stdout)
		scorecard.WritePageText(stdout, page, cards, color)
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"-junit", o.junit, func(w io.Writer) error { return scorecard.WriteJUnitPage(w, page, cards) }},
		{"-html", o.html, func(w io.Writer) error { return scorecard.WritePage(w, page, cards) }},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.write); err != nil {
			fmt.Fprintf(stderr, "streamprobe %s: %s: %v\n", o.cmd, out.flag, err)
			return exitFail
		}
	}
	if !pass {
		return exitFail
	}
	return exitOK
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runAll runs every job (samples n times, drills once) with at most conc
// in flight, and returns the runs by target.
func runAll(ctx context.Context, todo []jobs.Job, n, conc int, p *progress) map[string][]scorecard.Run {
	type task struct {
		j jobs.Job
	}
	var tasks []task
	for _, j := range todo {
		for range runsOf(j, n) {
			tasks = append(tasks, task{j})
		}
	}
	out := map[string][]scorecard.Run{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for _, t := range tasks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := t.j.Run(ctx, nil)
			if ctx.Err() != nil {
				return // cut by the interrupt: not a measurement
			}
			run := scorecard.FromResult(res)
			mu.Lock()
			out[t.j.Target.Name] = append(out[t.j.Target.Name], run)
			mu.Unlock()
			p.add(t.j, res.Record)
		}()
	}
	wg.Wait()
	return out
}

// progress says on stderr what check is doing: on a terminal one line
// kept up to date; otherwise (a CI log) one line per target/sample and
// target/drill, when its runs are done. Silent with -q.
type progress struct {
	w            io.Writer
	term, quiet  bool
	mu           sync.Mutex
	total, n, ko int
	want         map[string]int // runs a job has to make, by job name
	got, failed  map[string]int
}

func newProgress(w io.Writer, todo []jobs.Job, runs int, quiet bool) *progress {
	f, ok := w.(*os.File)
	p := &progress{w: w, term: ok && isTerminal(f), quiet: quiet, want: map[string]int{}, got: map[string]int{}, failed: map[string]int{}}
	for _, j := range todo {
		p.want[j.Name] = runsOf(j, runs)
		p.total += p.want[j.Name]
	}
	return p
}

func (p *progress) add(j jobs.Job, r probe.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.got[j.Name]++
	if !r.Passed() {
		p.ko++
		p.failed[j.Name]++
	}
	switch {
	case p.quiet:
	case p.term:
		fmt.Fprintf(p.w, "\r%d/%d runs done, %d failed so far", p.n, p.total, p.ko)
	case p.got[j.Name] == p.want[j.Name]:
		fmt.Fprintf(p.w, "streamprobe check: %s: %d run(s), %d failed (%d/%d runs done)\n", shown(j.Name), p.want[j.Name], p.failed[j.Name], p.n, p.total)
	}
}

func (p *progress) done() {
	if p.term && !p.quiet {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// runsOf is how many runs check makes of j: runs for a sample, one for a
// drill.
func runsOf(j jobs.Job, runs int) int {
	if j.Drill.Name != "" {
		return 1
	}
	return runs
}
