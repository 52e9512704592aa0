package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/stats"
	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/scorecard"
)

const checkUsage = `Usage: streamprobe check -config FILE [-target NAME]... [-runs auto|N] [-max-runs N] [-max-time D]
       [-confidence C] [-inconclusive 3|pass|fail] [-concurrency C] [-q] [-json] [-junit FILE] [-html FILE]

The acceptance check before a rollout: runs each configured sample per
target (and each configured drill once), and prints a scorecard per
target: columns short, long, cancel; rows TFC, gap, tail, close, the share
of runs that stalled over 250 ms (budget stall_share, default 5%),
suspected proxy buffering (red in half the runs or more), and outcome
counts. Each timing cell shows p50 and p95, and the p95's distribution-free
confidence interval (order statistics) against the [budget.<sample>] p95
budget (a target's [target.budget.<sample>] first); the shares have exact
binomial intervals. A cell is PASS when its whole interval is within its
budget, FAIL when wholly over, INCONCLUSIVE otherwise, with the runs that
would decide it. Red cells get the scorecard article's triage.

-runs auto (the default) runs in looks (20, 40, then every 40 more runs per
sample, interleaved across samples and targets) until every cell of a class
is decided, or -max-runs or -max-time is reached; the error rate of the
whole procedure stays within 1 - confidence (alpha spent over the looks in
proportion to their runs). -runs N is one look at N runs.

Exit 0 when every cell passes and every drill passes, 1 when a cell or a
drill fails, 3 when none fails but a cell is inconclusive (-inconclusive
pass or fail counts it so instead), 2 for a config or usage error.
Interrupted (Ctrl-C, SIGTERM): the page of the runs that finished, its
verdict "INTERRUPTED after N of M runs (...)", exit 1; a target with no
finished run is never PASS.

Without -config it reads ` + defaultConfig + `, and its first line
says so.

Flags:
`

// The plan of check's -runs auto: the first look, and the caps.
const (
	firstLook       = 20
	defaultMaxRuns  = 200
	defaultMaxTime  = 10 * time.Minute
	defaultCheckCon = 4
)

// checkFlags are check's flags.
type checkFlags struct {
	config  string
	targets listFlag
	runs    runsFlag
	maxRuns int
	maxTime time.Duration
	conc    int
	quiet   bool
	verdict verdictFlags
	out     cardOutputs
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
	m := measure(ctx, f, cfg, all, stderr)
	cards := scorecard.Cards(cfg, f.targets, m.results)
	for _, c := range cards {
		c.Judge(m.alphaOf(c.Target))
	}
	if m.interrupted && !f.out.asJSON {
		fmt.Fprintln(stdout, "INTERRUPTED: the cards below hold only the runs that finished before the interrupt")
	}
	result := scorecard.Result(cards, m.interrupted)
	doc := map[string]any{"pass": result == scorecard.Pass, "result": result, "interrupted": m.interrupted, "targets": cards, "plan": m.planDoc()}
	if m.stop != nil {
		doc["runs_done"], doc["runs_planned"] = m.stop.Done, m.stop.Planned
	}
	runsPerSample := 0
	if f.runs.n > 0 {
		runsPerSample = f.runs.n
		doc["runs_per_sample"] = f.runs.n
	}
	about := &scorecard.About{Command: "check", Version: version.String(), Host: cfg.Host, Config: f.config, Plan: m.planText()}
	return f.out.write(stdout, stderr, cards, f.verdict.exit(result), doc, scorecard.Page{Title: "streamprobe check", Generated: time.Now(), RunsPerSample: runsPerSample,
		Verdict: scorecard.Verdict(cards, m.stop, "target"), About: about})
}

// parseCheckFlags reads check's flags and checks them, and that the output
// files can be written, before anything runs.
func parseCheckFlags(args []string, stdout, stderr io.Writer) (*checkFlags, int, bool) {
	f := &checkFlags{out: cardOutputs{cmd: "check"}}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := configFlag(fs)
	fs.Var(&f.targets, "target", "only this target (repeatable; default: every target)")
	fs.Var(&f.runs, "runs", "runs of each sample per target: auto (looks of runs until every cell is decided, up to -max-runs and -max-time) or a number (one look)")
	fs.IntVar(&f.maxRuns, "max-runs", defaultMaxRuns, "-runs auto: the most runs of each sample per target")
	fs.DurationVar(&f.maxTime, "max-time", defaultMaxTime, "-runs auto: the longest the runs may take; then the runs in flight finish and no look starts")
	fs.IntVar(&f.conc, "concurrency", defaultCheckCon, "runs in flight at once")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr (by default one line per target/sample as its runs finish; on a terminal one line kept up to date)")
	f.verdict.flags(fs)
	f.out.flags(fs, "print one JSON summary instead of the tables", "also write JUnit XML to this file (one testcase per cell and per drill)",
		"also write a self-contained HTML report with timelines to this file")
	if code, ok := parseFlags(fs, args, stdout, stderr, checkUsage); !ok {
		return nil, code, false
	}
	noteDefaultConfig(fs, stderr)
	f.config = *path
	switch {
	case f.maxRuns < 1 || f.conc < 1:
		fmt.Fprintf(stderr, "streamprobe check: -max-runs and -concurrency must be 1 or more\n")
		return nil, exitUsage, false
	case f.maxTime <= 0:
		fmt.Fprintf(stderr, "streamprobe check: -max-time must be a positive duration\n")
		return nil, exitUsage, false
	}
	if err := f.verdict.check(); err != nil {
		fmt.Fprintf(stderr, "streamprobe check: %v\n", err)
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

// plan is the statistical plan f asks for: one look at -runs N, or the
// looks of -runs auto up to -max-runs.
func (f *checkFlags) plan() stats.Plan {
	alpha := 1 - f.verdict.confidence
	if f.runs.n > 0 {
		return stats.FixedPlan(f.runs.n, alpha)
	}
	return stats.SpendingPlan(firstLook, f.maxRuns, alpha)
}

// runsFlag is -runs: "auto" (n 0) or a number of runs.
type runsFlag struct{ n int }

func (r *runsFlag) String() string {
	if r == nil || r.n == 0 {
		return "auto"
	}
	return strconv.Itoa(r.n)
}

func (r *runsFlag) Set(v string) error {
	if v == "auto" {
		r.n = 0
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return errors.New("want auto or a number of runs, 1 or more")
	}
	r.n = n
	return nil
}

// verdictFlags are -confidence and -inconclusive, which check, report
// and compare share: the level of the intervals, and the exit code of an
// inconclusive page.
type verdictFlags struct {
	confidence   float64
	inconclusive string
}

func (v *verdictFlags) flags(fs *flag.FlagSet) {
	fs.Float64Var(&v.confidence, "confidence", scorecard.DefaultConfidence, "the confidence of the intervals and of the verdicts, from 0.5 to 0.9999")
	fs.StringVar(&v.inconclusive, "inconclusive", "3", "the exit code of an inconclusive verdict: 3, or pass (0) or fail (1) for CI systems that know only two")
}

func (v *verdictFlags) check() error {
	if !(v.confidence >= 0.5 && v.confidence <= 0.9999) {
		return fmt.Errorf("-confidence %g: want a level from 0.5 to 0.9999 (0.95 is 95%%)", v.confidence)
	}
	if !slices.Contains([]string{"3", "pass", "fail"}, v.inconclusive) {
		return fmt.Errorf("-inconclusive %q: want 3, pass or fail", v.inconclusive)
	}
	return nil
}

// exit is the exit code of a page's result.
func (v *verdictFlags) exit(result string) int {
	switch {
	case result == scorecard.Pass:
		return exitOK
	case result == scorecard.Fail:
		return exitFail
	case v.inconclusive == "pass":
		return exitOK
	case v.inconclusive == "fail":
		return exitFail
	}
	return exitInconclusive
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
// returns the exit code: code when every file was written, exitFail
// otherwise (a file that could not be written is said on stderr).
func (o cardOutputs) write(stdout, stderr io.Writer, cards []*scorecard.Card, code int, doc map[string]any, page scorecard.Page) int {
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
	return code
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
