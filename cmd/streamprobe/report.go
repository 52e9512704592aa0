package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/report"
	"github.com/streamprobe/streamprobe/scorecard"
)

const reportUsage = `Usage: streamprobe report -config FILE (-log [REGION=]FILE... | -vm URL) [-since T] [-until T]
       [-target NAME]... [-region NAME]... [-confidence C] [-inconclusive 3|pass|fail] [-json] [-junit FILE] [-html FILE]

The scorecard over a window of data that already exists, without probing
anything: the records of the daemons' results logs (-log, JSON lines as
results_log writes them; repeatable, shell patterns allowed, so
-log 'results.jsonl*' takes rotated files too), or the histogram buckets
and counters they pushed to VictoriaMetrics (-vm). One card per region and
target, plus the fleet's card (every region together) when there are
several regions; the same rows, budgets ([budget.<sample>] of -config),
triage and verdict as check. Percentiles come from the pooled per-run
values (logs) or the summed buckets (VictoriaMetrics: the card says the
bucket resolution), never from averaging percentiles. Drill runs are summed
per drill: red when any run failed.

A record's region is its "region" field when it has one, else the REGION
of its -log, else "none". -since and -until take an RFC 3339 time or a
duration back from now (24h); the window holds runs started at or after
-since and before -until (a record's started_at). With -vm the window ends
at -until (default now) and starts at -since (default 24h before).

Each budgeted cell has a distribution-free confidence interval (order
statistics for the p95, exact binomial for the shares) at -confidence, and
is PASS, FAIL or INCONCLUSIVE by where it lies against the budget, as in
check.

Exit 0 when every card passes, 1 when a card has a red cell or a failing
drill, or no run is in the window, 3 when none fails but a cell is
inconclusive (-inconclusive pass or fail counts it so instead), 2 for a
config or usage error or unreadable data.

Without -config it reads ` + defaultConfig + `, and its first line
says so.

Flags:
`

// reportFlags are report's flags.
type reportFlags struct {
	config                 string
	logs, targets, regions listFlag
	vm, since, until       string
	allTargets             bool
	verdict                verdictFlags
	out                    cardOutputs
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "streamprobe report: "+format+"\n", a...)
		return exitUsage
	}
	rf, code, ok := parseReportFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if os.Getenv("GOGC") == "" {
		// A report over a day of logs decodes a record a line: a fast
		// stream of short-lived garbage over a small live set (tens of
		// MB). A heap goal of 1.5 times the live set, not 2, keeps its
		// peak under 100 MiB on a busy machine (bench/README.md).
		debug.SetGCPercent(50)
	}
	if (len(rf.logs) == 0) == (rf.vm == "") {
		return fail("give -log FILE or -vm URL (one of them)")
	}
	now := time.Now()
	f, err := rf.filter(now)
	if err != nil {
		return fail("%v", err)
	}
	// A report sends no request: the config is read for its budgets,
	// and no secret it names is looked up (no getenv).
	cfg, err := readConfig(ctx, rf.config, nil)
	if err != nil {
		return fail("%v", err)
	}
	f.Known = []string{}
	for _, t := range cfg.Targets {
		f.Known = append(f.Known, t.Name)
	}
	var cards []*scorecard.Card
	var source map[string]any
	var budget []report.BudgetLine
	about := &scorecard.About{Command: "report", Version: version.String()}
	if rf.vm != "" {
		cards, source, err = vmCards(ctx, rf.vm, &f, now, scorecard.BudgetsOf(cfg), stderr, about)
		if err == nil && len(cfg.SLOs) > 0 {
			vm := report.VM{URL: rf.vm, HTTP: &http.Client{Timeout: time.Minute}}
			budget, err = vm.ErrorBudget(ctx, f, objectives(cfg))
		}
	} else {
		var l *report.Logs
		cards, source, l, err = logCards(ctx, rf.logs, f, cfg, stderr, about)
		if err == nil {
			budget = l.ErrorBudget(objectives(cfg))
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "streamprobe report: interrupted: no report")
		return exitFail
	}
	if err != nil {
		return fail("%v", err)
	}
	if !f.Since.IsZero() {
		source["since"] = f.Since.UTC().Format(time.RFC3339)
	}
	if !f.Until.IsZero() {
		source["until"] = f.Until.UTC().Format(time.RFC3339)
	}
	if len(cards) == 0 {
		fmt.Fprintln(stderr, "streamprobe report: no run in the window")
		return exitFail
	}
	alpha := 1 - rf.verdict.confidence
	for _, c := range cards {
		c.Judge(func(string) float64 { return alpha })
	}
	result := scorecard.Result(cards, false)
	about.Window = windowText(f)
	if rf.vm != "" {
		about.Window += " (the buckets hold no run's start time)"
	}
	doc := map[string]any{"pass": result == scorecard.Pass, "result": result, "source": source, "cards": cards}
	if budget != nil {
		doc["error_budget"] = budget
	}
	code = rf.out.write(stdout, stderr, cards, rf.verdict.exit(result), doc, scorecard.Page{Title: "streamprobe report", Generated: now,
		Verdict: scorecard.Verdict(cards, nil, "card"), About: about})
	if len(budget) > 0 && !rf.out.asJSON {
		fmt.Fprintf(stdout, "\nerror budget over the window ([slo.<sample>] objectives; %s)\n", about.Window)
		for _, b := range budget {
			fmt.Fprintf(stdout, "  %s\n", b)
		}
	}
	return code
}

// objectives are the config's SLO objectives by class and SLI.
func objectives(cfg *config.Config) report.Objectives {
	out := report.Objectives{}
	for sample, o := range cfg.SLOs {
		out[sample] = o.Objectives()
	}
	return out
}

// parseReportFlags reads report's flags.
func parseReportFlags(args []string, stdout, stderr io.Writer) (*reportFlags, int, bool) {
	rf := &reportFlags{out: cardOutputs{cmd: "report"}}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	path := configFlag(fs)
	fs.Var(&rf.logs, "log", "a results log, [REGION=]FILE or a shell pattern (repeatable); REGION is the region of its records that carry none")
	fs.StringVar(&rf.vm, "vm", "", "VictoriaMetrics query API base URL (http://host:8428, or vmselect's http://host:8481/select/0/prometheus) instead of -log")
	fs.StringVar(&rf.since, "since", "", "window start: RFC 3339 time, or a duration back from now (24h); default: no bound (-vm: 24h before -until)")
	fs.StringVar(&rf.until, "until", "", "window end (exclusive): RFC 3339 time, or a duration back from now; default: now")
	fs.Var(&rf.targets, "target", "only this target (repeatable; default: every target)")
	fs.Var(&rf.regions, "region", "only this region (repeatable; default: every region)")
	fs.BoolVar(&rf.allTargets, "all-targets", false, "also make cards for targets the config does not name (by default their runs are counted and skipped)")
	rf.verdict.flags(fs)
	rf.out.flags(fs, "print one JSON object instead of the tables", "also write JUnit XML to this file (one testsuite per card)",
		"also write a self-contained HTML report to this file")
	if code, ok := parseFlags(fs, args, stdout, stderr, reportUsage); !ok {
		return nil, code, false
	}
	noteDefaultConfig(fs, stderr)
	rf.config = *path
	if err := rf.verdict.check(); err != nil {
		fmt.Fprintf(stderr, "streamprobe report: %v\n", err)
		return nil, exitUsage, false
	}
	return rf, exitOK, true
}

// filter is the window and the selections the flags ask for.
func (rf *reportFlags) filter(now time.Time) (report.Filter, error) {
	f := report.Filter{Targets: rf.targets, Regions: rf.regions, AllTargets: rf.allTargets}
	var err error
	if f.Since, err = parseWhen(rf.since, now); err != nil {
		return f, fmt.Errorf("-since: %w", err)
	}
	if f.Until, err = parseWhen(rf.until, now); err != nil {
		return f, fmt.Errorf("-until: %w", err)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, fmt.Errorf("-since (%s) must be before -until (%s)", f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339))
	}
	return f, nil
}

// vmCards are the cards of the window read from VictoriaMetrics at url:
// the window ends at -until (default now) and starts at -since (default
// report.DefaultWindow before), set in f.
func vmCards(ctx context.Context, url string, f *report.Filter, now time.Time, budgets scorecard.Budgets, stderr io.Writer, about *scorecard.About) ([]*scorecard.Card, map[string]any, error) {
	if f.Until.IsZero() {
		f.Until = now
	}
	if f.Since.IsZero() {
		f.Since = f.Until.Add(-report.DefaultWindow)
	}
	vm := report.VM{URL: url, HTTP: &http.Client{Timeout: time.Minute}}
	cards, seen, err := vm.CardsSeen(ctx, *f, budgets)
	shown := report.ShownURL(url)
	about.Sources, about.Hosts, about.Regions = []string{"VictoriaMetrics " + shown}, seen.Hosts, seen.Regions
	source := map[string]any{"victoriametrics": shown}
	notSeen(seen, "series", source, stderr)
	return cards, source, err
}

// notSeen says what a report read and did not judge, on stderr and in
// the JSON's source: runs or series (what) of targets the config does not
// name, values that are no count, series past the report's bounds.
func notSeen(seen report.Seen, what string, source map[string]any, stderr io.Writer) {
	if seen.Unknown > 0 {
		more := ""
		if seen.UnknownTargets >= report.MaxNames {
			more = " or more"
		}
		fmt.Fprintf(stderr, "streamprobe report: skipped %d %s of %d%s target(s) the config does not name (-all-targets makes their cards)\n", seen.Unknown, what, seen.UnknownTargets, more)
		source["skipped_unknown_targets"] = seen.Unknown
	}
	if seen.Bad > 0 {
		fmt.Fprintf(stderr, "streamprobe report: bad data: %d value(s) that are no count of runs (non-finite, negative or over 1e12: an overflowed or forged counter), not judged\n", seen.Bad)
		source["bad_values"] = seen.Bad
	}
	if seen.OverCap > 0 {
		fmt.Fprintf(stderr, "streamprobe report: skipped %d %s past the report's bounds (%d classes, %d buckets a row): narrow it with -target or -region\n", seen.OverCap, what, report.MaxClasses, report.MaxBuckets)
		source["skipped_over_bounds"] = seen.OverCap
	}
}

// logCards are the cards of the runs f selects in the -log files, with a
// line on stderr counting what was read, and the runs read (for their
// error budget).
func logCards(ctx context.Context, logs []string, f report.Filter, cfg *config.Config, stderr io.Writer, about *scorecard.About) ([]*scorecard.Card, map[string]any, *report.Logs, error) {
	files, err := logFiles(logs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-log: %w", err)
	}
	// Each class's TFC budget: a target's own ("target/sample"), else
	// the sample's.
	tfc := map[string]float64{}
	for key, b := range scorecard.BudgetsOf(cfg) {
		tfc[key] = b.TFC
	}
	l, err := report.ReadLogsSLO(ctx, files, f, tfc)
	if err != nil {
		return nil, nil, nil, err
	}
	fmt.Fprintf(stderr, "streamprobe report: %d line(s) in %d file(s): %d run(s) kept, %d outside the window or filters, %d not a record, %d over %d MiB, %d without a start time, %d cut by a shutdown\n",
		l.Lines, len(files), l.Kept, l.Outside, l.Bad, l.Oversized, report.MaxLine>>20, l.NoTime, l.Shutdown)
	var paths []string
	for _, lf := range files {
		paths = append(paths, lf.Path)
		if lf.Region != "" {
			about.Sources = append(about.Sources, lf.Region+"="+lf.Path)
		} else {
			about.Sources = append(about.Sources, lf.Path)
		}
	}
	seen := l.Seen()
	about.Hosts, about.Regions = seen.Hosts, seen.Regions
	if !seen.First.IsZero() {
		about.FirstRun, about.LastRun = seen.First.UTC().Format(time.RFC3339), seen.Last.UTC().Format(time.RFC3339)
	}
	source := map[string]any{"logs": paths, "runs": l.Kept, "lines_not_a_record": l.Bad, "lines_oversized": l.Oversized}
	notSeen(seen, "run(s)", source, stderr)
	if l.Oversized > 0 {
		fmt.Fprintf(stderr, "streamprobe report: skipped %d line(s) over %d MiB, the first at %s\n", l.Oversized, report.MaxLine>>20, l.FirstOversized)
		source["first_oversized"] = l.FirstOversized
	}
	return l.Cards(scorecard.BudgetsOf(cfg)), source, l, nil
}

// parseWhen reads an RFC 3339 time or a duration back from now; "" is no
// bound.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-12-03T00:00:00Z) nor a duration back from now (24h)", s)
}

// logFiles expands the -log arguments: [REGION=]PATH, PATH a file or a
// shell pattern. A PATH that exists as given is never split at "=".
func logFiles(args []string) ([]report.LogFile, error) {
	var out []report.LogFile
	for _, a := range args {
		region, p := "", a
		if _, err := os.Stat(a); err != nil {
			if r, rest, ok := strings.Cut(a, "="); ok && r != "" {
				region, p = r, rest
			}
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%q: no such file", p)
		}
		for _, m := range matches {
			out = append(out, report.LogFile{Path: m, Region: region})
		}
	}
	return out, nil
}

func windowText(f report.Filter) string {
	switch {
	case f.Since.IsZero() && f.Until.IsZero():
		return "every run in the data"
	case f.Since.IsZero():
		return "runs before " + f.Until.UTC().Format(time.RFC3339)
	case f.Until.IsZero():
		return "runs from " + f.Since.UTC().Format(time.RFC3339)
	}
	return "runs from " + f.Since.UTC().Format(time.RFC3339) + " to " + f.Until.UTC().Format(time.RFC3339)
}
