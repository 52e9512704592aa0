package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/report"
	"github.com/streamprobe/streamprobe/scorecard"
	"github.com/streamprobe/streamprobe/textgate"
)

const compareUsage = `Usage: streamprobe compare -config FILE -baseline TARGET -candidate TARGET [flags]
       streamprobe compare -config FILE -target TARGET -baseline-url URL -candidate-url URL [flags]
       streamprobe compare [-config FILE] -baseline-log FILE... -candidate-log FILE... [-baseline NAME] [-candidate NAME] [-since T] [-until T] [flags]

Is the candidate worse than its baseline? Two targets of one config, or one
target at two URLs, are probed from this host, their runs interleaved
(baseline, candidate, baseline, ...; -runs per sample each); or two sets of
results logs are read (offline). Per class and metric: the shift of the
median (TFC, tail) by Hodges-Lehmann with its Mann-Whitney interval, the
change of a p95 (and of the gaps' p50) by a bootstrap over runs (the run is
the unit), the stall, error and buffering shares by exact binomial
intervals; each against its margin ([compare.margin] in the config;
defaults TFC p50 +10%, p95s +20%, shares +5 points): worse when the whole
interval lies over the margin, inconclusive when it straddles it, better
when it lies under minus the margin, same otherwise. All the intervals hold
together at -confidence (Bonferroni over the metrics compared). A resume
verdict that fails on the candidate and never on the baseline is a hard
fail.

Exit 0 when nothing is worse and nothing inconclusive, 1 when a metric is
worse or a resume verdict fails on the candidate only, 3 when none is worse
but one is inconclusive (-inconclusive pass or fail counts it so instead),
2 for a config or usage error or unreadable data.

Flags:
`

// defaultCompareRuns is compare's runs per sample and side: with 27
// comparisons at 95% together, 164 runs bound a share seen at 0% or 100%
// on both sides within +-5 points (so "same" can be said of a healthy
// target's error share); fewer leave such shares inconclusive.
const defaultCompareRuns = 170

// maxCompareRuns bounds the runs compare keeps of one class of one side
// from logs: past it, a uniform sample of them (reservoir, seeded).
const maxCompareRuns = 20_000

// compareFlags are compare's flags.
type compareFlags struct {
	config                      string
	baseline, candidate, target string
	baseURL, candURL            string
	baseLogs, candLogs          listFlag
	since, until                string
	runs, conc                  int
	seed                        uint64
	quiet                       bool
	verdict                     verdictFlags
	asJSON                      bool
	junit, html                 string
}

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseCompareFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(err error) int {
		printErr(stderr, "compare", err)
		return exitUsage
	}
	var base, cand scorecard.CompareSide
	var about [][2]string
	var cfg *config.Config
	var err error
	if f.offline() {
		cfg = &config.Config{}
		if f.config != "" {
			if cfg, err = readConfig(ctx, f.config, nil); err != nil {
				return fail(err)
			}
		}
		base, cand, about, err = compareLogs(ctx, f, stderr)
	} else {
		if cfg, err = readConfig(ctx, f.config, os.Getenv); err != nil {
			return fail(err)
		}
		base, cand, about, err = compareLive(ctx, f, cfg, stderr)
	}
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "streamprobe compare: interrupted: nothing compared")
		return exitFail
	}
	c := scorecard.Compare(base, cand, scorecard.CompareOptions{Confidence: f.verdict.confidence, Margin: cfg.Margin, Seed: f.seed})
	about = append(about, [2]string{"version", version.String()})
	return writeComparison(f, c, about, stdout, stderr)
}

// writeComparison writes c as text or JSON, and the files asked for, and
// returns the exit code of its result.
func writeComparison(f *compareFlags, c *scorecard.Comparison, about [][2]string, stdout, stderr io.Writer) int {
	if f.asJSON {
		doc := map[string]any{}
		b, _ := json.Marshal(c)
		json.Unmarshal(b, &doc)
		ab := map[string]string{}
		for _, l := range about {
			ab[l[0]] = l[1]
		}
		doc["about"] = ab
		json.NewEncoder(stdout).Encode(doc)
	} else {
		color := isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && stdout == io.Writer(os.Stdout)
		io.WriteString(stdout, c.Text(color, about))
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"-junit", f.junit, func(w io.Writer) error { return scorecard.WriteCompareJUnit(w, c, about) }},
		{"-html", f.html, func(w io.Writer) error { return scorecard.WriteCompareHTML(w, c, about, time.Now()) }},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.write); err != nil {
			fmt.Fprintf(stderr, "streamprobe compare: %s: %v\n", out.flag, err)
			return exitFail
		}
	}
	return f.verdict.exit(c.Result)
}

func parseCompareFlags(args []string, stdout, stderr io.Writer) (*compareFlags, int, bool) {
	f := &compareFlags{}
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.StringVar(&f.config, "config", "", "the TOML config file: the targets (live), the margins ([compare.margin])")
	fs.StringVar(&f.baseline, "baseline", "", "the baseline target (live: of -config; offline: of the baseline's logs, when they hold several)")
	fs.StringVar(&f.candidate, "candidate", "", "the candidate target (live: of -config; offline: of the candidate's logs)")
	fs.StringVar(&f.target, "target", "", "with -baseline-url and -candidate-url: the target of -config probed at both")
	fs.StringVar(&f.baseURL, "baseline-url", "", "the baseline's URL for -target")
	fs.StringVar(&f.candURL, "candidate-url", "", "the candidate's URL for -target")
	fs.Var(&f.baseLogs, "baseline-log", "offline: a results log of the baseline, [REGION=]FILE or a shell pattern (repeatable)")
	fs.Var(&f.candLogs, "candidate-log", "offline: a results log of the candidate (repeatable)")
	fs.StringVar(&f.since, "since", "", "offline: runs started at or after this (RFC 3339, or a duration back from now)")
	fs.StringVar(&f.until, "until", "", "offline: runs started before this")
	fs.IntVar(&f.runs, "runs", defaultCompareRuns, "live: runs of each sample on each side")
	fs.IntVar(&f.conc, "concurrency", defaultCheckCon, "live: runs in flight at once")
	fs.Uint64Var(&f.seed, "seed", 1, "the bootstrap's seed: the same runs and seed give the same intervals")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	f.verdict.flags(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of the text (the fields Argo Rollouts' web metric reads: result, pass)")
	fs.StringVar(&f.junit, "junit", "", "also write JUnit XML to this file (a testcase per class and metric, and per resume line)")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML report (both sides' distributions on one axis) to this file")
	if code, ok := parseFlags(fs, args, stdout, stderr, compareUsage); !ok {
		return nil, code, false
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "streamprobe compare: %v\n", err)
		return nil, exitUsage, false
	}
	return f, exitOK, true
}

// offline reports whether f compares logs.
func (f *compareFlags) offline() bool { return len(f.baseLogs)+len(f.candLogs) > 0 }

// check checks that f names one way to compare, and its outputs.
func (f *compareFlags) check() error {
	mode := f.checkLive
	if f.offline() {
		mode = f.checkOffline
	}
	if err := mode(); err != nil {
		return err
	}
	if f.runs < 1 || f.conc < 1 {
		return errors.New("-runs and -concurrency must be 1 or more")
	}
	if err := f.verdict.check(); err != nil {
		return err
	}
	for _, o := range []struct{ flag, path string }{{"-junit", f.junit}, {"-html", f.html}} {
		if err := config.Writable(o.path); o.path != "" && err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	return nil
}

// urls reports whether f names the two-URL mode's flags.
func (f *compareFlags) urls() bool { return f.target != "" || f.baseURL != "" || f.candURL != "" }

// checkOffline checks the flags of a comparison of logs.
func (f *compareFlags) checkOffline() error {
	switch {
	case len(f.baseLogs) == 0 || len(f.candLogs) == 0:
		return errors.New("give both -baseline-log and -candidate-log")
	case f.urls():
		return errors.New("-baseline-log and -candidate-log compare logs: no -target, -baseline-url or -candidate-url")
	}
	return nil
}

// checkLive checks the flags of a comparison that probes.
func (f *compareFlags) checkLive() error {
	switch {
	case f.since != "" || f.until != "":
		return errors.New("-since and -until select runs of logs (-baseline-log, -candidate-log)")
	case f.urls() && (f.target == "" || f.baseURL == "" || f.candURL == "" || f.baseline != "" || f.candidate != ""):
		return errors.New("-target, -baseline-url and -candidate-url go together (and without -baseline and -candidate)")
	case !f.urls() && (f.baseline == "" || f.candidate == ""):
		return errors.New("give -baseline and -candidate (two targets of -config), or -target with -baseline-url and -candidate-url, or -baseline-log and -candidate-log")
	case f.config == "":
		return errors.New("-config is required to probe")
	}
	return nil
}

// compareLive probes the two sides f names, their runs interleaved.
func compareLive(ctx context.Context, f *compareFlags, cfg *config.Config, stderr io.Writer) (base, cand scorecard.CompareSide, about [][2]string, err error) {
	bt, ct, err := liveTargets(f, cfg)
	if err != nil {
		return base, cand, nil, err
	}
	base = scorecard.CompareSide{Name: describe(f, bt, f.baseURL), Runs: map[string][]probe.Record{}}
	cand = scorecard.CompareSide{Name: describe(f, ct, f.candURL), Runs: map[string][]probe.Record{}}
	// The sides by name (a target may be compared with itself).
	two := *cfg
	bt.Name, ct.Name = "baseline", "candidate"
	two.Targets = []config.Target{bt, ct}
	all, stop, err := startJobs(&two)
	if err != nil {
		return base, cand, nil, err
	}
	defer stop()
	var sides [2][]jobs.Job // the jobs of each side, in order
	for _, j := range all {
		if j.Target.Name == ct.Name {
			sides[1] = append(sides[1], j)
		} else {
			sides[0] = append(sides[0], j)
		}
	}
	for _, s := range dialect.SampleNames {
		if slices.Contains(bt.Samples, s) {
			base.Samples = append(base.Samples, s)
		}
		if slices.Contains(ct.Samples, s) {
			cand.Samples = append(cand.Samples, s)
		}
	}
	tasks := pairTasks(sides, f.runs)
	start := time.Now()
	n := 0
	runTasks(ctx, tasks, f.conc, time.Time{}, false, func(j jobs.Job, r scorecard.Run) {
		sd := &base
		if j.Target.Name == ct.Name {
			sd = &cand
		}
		if j.Drill.Name != "" {
			sd.Drills = append(sd.Drills, r.Record)
		} else {
			sd.Runs[j.Sample.Name] = append(sd.Runs[j.Sample.Name], r.Record)
		}
		n++
		if !f.quiet && n%50 == 0 {
			fmt.Fprintf(stderr, "streamprobe compare: %d/%d runs done\n", n, len(tasks))
		}
	})
	about = [][2]string{{"runs", fmt.Sprintf("%d per sample and side, interleaved baseline/candidate, %d in flight, %s", f.runs, f.conc, time.Since(start).Round(time.Second))}}
	if cfg.Host != "" {
		about = append(about, [2]string{"host", cfg.Host})
	}
	about = append(about, [2]string{"config", f.config})
	return base, cand, about, nil
}

// liveTargets are the baseline's and the candidate's targets: two of the
// config, or one at two URLs.
func liveTargets(f *compareFlags, cfg *config.Config) (config.Target, config.Target, error) {
	find := func(name string) (config.Target, error) {
		for _, t := range cfg.Targets {
			if t.Name == name {
				return t, nil
			}
		}
		return config.Target{}, fmt.Errorf("no target %q in %s", name, f.config)
	}
	if f.target == "" {
		bt, err := find(f.baseline)
		if err != nil {
			return bt, bt, err
		}
		ct, err := find(f.candidate)
		return bt, ct, err
	}
	t, err := find(f.target)
	if err != nil {
		return t, t, err
	}
	at := func(flagName, raw string) (config.Target, error) {
		var u config.URL
		if err := u.UnmarshalText([]byte(raw)); err != nil {
			return t, fmt.Errorf("%s: %w", flagName, err)
		}
		c := t
		c.URL, c.Builtin = u, false
		return c, nil
	}
	bt, err := at("-baseline-url", f.baseURL)
	if err != nil {
		return bt, bt, err
	}
	ct, err := at("-candidate-url", f.candURL)
	return bt, ct, err
}

// describe names a side: its target, and its URL (without secrets) when
// compare was given one.
func describe(f *compareFlags, t config.Target, url string) string {
	if url == "" {
		return t.Name
	}
	return t.Name + " at " + textgate.RedactURL(url)
}

// pairTasks orders the runs of both sides: each drill of each side once,
// then round after round one run of each sample on the baseline, then on
// the candidate (A B A B), so that both see the same minutes.
func pairTasks(sides [2][]jobs.Job, runs int) []jobs.Job {
	var tasks []jobs.Job
	for k := range max(len(sides[0]), len(sides[1])) {
		for i := range sides {
			if k < len(sides[i]) && sides[i][k].Drill.Name != "" {
				tasks = append(tasks, sides[i][k])
			}
		}
	}
	for range runs {
		for k := range max(len(sides[0]), len(sides[1])) {
			for i := range sides {
				if k < len(sides[i]) && sides[i][k].Drill.Name == "" {
					tasks = append(tasks, sides[i][k])
				}
			}
		}
	}
	return tasks
}

// compareLogs reads each side's runs from its results logs.
func compareLogs(ctx context.Context, f *compareFlags, stderr io.Writer) (base, cand scorecard.CompareSide, about [][2]string, err error) {
	now := time.Now()
	var filter report.Filter
	if filter.Since, err = parseWhen(f.since, now); err != nil {
		return base, cand, nil, fmt.Errorf("-since: %w", err)
	}
	if filter.Until, err = parseWhen(f.until, now); err != nil {
		return base, cand, nil, fmt.Errorf("-until: %w", err)
	}
	rng := rand.New(rand.NewPCG(f.seed, 0))
	for i, s := range []struct {
		flag string
		logs []string
		name string
		side *scorecard.CompareSide
	}{{"-baseline-log", f.baseLogs, f.baseline, &base}, {"-candidate-log", f.candLogs, f.candidate, &cand}} {
		files, err := logFiles(s.logs)
		if err != nil {
			return base, cand, nil, fmt.Errorf("%s: %w", s.flag, err)
		}
		byTarget := map[string]*logSide{}
		l, err := report.ReadLogsEach(ctx, files, filter, func(_ string, rec probe.Record) {
			ls := byTarget[rec.Target]
			if ls == nil {
				ls = &logSide{runs: map[string][]probe.Record{}, seen: map[string]int{}}
				byTarget[rec.Target] = ls
			}
			ls.add(rec, rng)
		})
		if err != nil {
			return base, cand, nil, fmt.Errorf("%s: %w", s.flag, err)
		}
		target := s.name
		if target == "" {
			if len(byTarget) != 1 {
				return base, cand, nil, fmt.Errorf("%s: the logs hold %d targets (%s): name one with %s", s.flag, len(byTarget),
					strings.Join(slices.Sorted(maps.Keys(byTarget)), ", "), []string{"-baseline", "-candidate"}[i])
			}
			for t := range byTarget {
				target = t
			}
		}
		ls := byTarget[target]
		if ls == nil {
			return base, cand, nil, fmt.Errorf("%s: no run of target %q in the window", s.flag, target)
		}
		*s.side = scorecard.CompareSide{Name: target + " from " + strings.Join(s.logs, ", "), Runs: ls.runs, Drills: ls.drills}
		for _, smp := range dialect.SampleNames {
			if len(ls.runs[smp]) > 0 {
				s.side.Samples = append(s.side.Samples, smp)
			}
		}
		fmt.Fprintf(stderr, "streamprobe compare: %s: %d line(s), %d run(s) kept, %d of target %s\n", s.flag, l.Lines, l.Kept, ls.n, target)
	}
	about = [][2]string{{"window", windowText(filter)}}
	return base, cand, about, nil
}

// logSide is one target's runs read from logs: by sample, each sample's
// kept to maxCompareRuns (a uniform sample of them past it), and the
// drills.
type logSide struct {
	runs   map[string][]probe.Record
	seen   map[string]int
	drills []probe.Record
	n      int
}

func (ls *logSide) add(rec probe.Record, rng *rand.Rand) {
	ls.n++
	if rec.Drill != "" && rec.Drill != probe.DrillNone {
		if len(ls.drills) < maxCompareRuns {
			ls.drills = append(ls.drills, rec)
		}
		return
	}
	s := rec.Sample
	ls.seen[s]++
	switch k := ls.seen[s]; {
	case k <= maxCompareRuns:
		ls.runs[s] = append(ls.runs[s], rec)
	default:
		if i := rng.IntN(k); i < maxCompareRuns {
			ls.runs[s][i] = rec
		}
	}
}
