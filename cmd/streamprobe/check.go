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
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := configFlag(fs)
	var targets listFlag
	fs.Var(&targets, "target", "only this target (repeatable; default: every target)")
	runs := fs.Int("runs", 20, "runs of each sample per target")
	conc := fs.Int("concurrency", 4, "runs in flight at once")
	asJSON := fs.Bool("json", false, "print one JSON summary instead of the tables")
	junit := fs.String("junit", "", "also write JUnit XML to this file (one testcase per cell and per drill)")
	htmlOut := fs.String("html", "", "also write a self-contained HTML report with timelines to this file")
	if code, ok := parseFlags(fs, args, stdout, stderr, `Usage: streamprobe check -config FILE [-target NAME]... [-runs N] [-concurrency C] [-json] [-junit FILE] [-html FILE]

The acceptance check before a rollout: runs each configured sample N times
per target (and each configured drill once), and prints a scorecard per
target: columns short, long, cancel; rows TFC, gap, tail, close, the share
of runs that stalled over 250 ms (red over the class's stall_share, default
5%), suspected proxy buffering (red in half the runs or more), and outcome
counts. Each cell shows p50 and p95 against the [budget.<sample>] p95
budget. Red cells get the scorecard article's triage in its fixed order. Exit 0 when every cell is within budget
and every drill passes, 1 otherwise, 2 for a config or usage error.

Flags:
`); !ok {
		return code
	}
	if *runs < 1 || *conc < 1 {
		fmt.Fprintf(stderr, "streamprobe check: -runs and -concurrency must be 1 or more\n")
		return exitUsage
	}
	for _, o := range []struct{ flag, path string }{{"-junit", *junit}, {"-html", *htmlOut}} {
		if err := config.Writable(o.path); o.path != "" && err != nil {
			fmt.Fprintf(stderr, "streamprobe check: %s: %v\n", o.flag, err)
			return exitUsage
		}
	}
	cfg, err := config.Load(*path, jobs.Env(os.Getenv))
	if err != nil {
		printErr(stderr, "check", err)
		return exitUsage
	}
	for _, t := range targets {
		if !slices.ContainsFunc(cfg.Targets, func(c config.Target) bool { return c.Name == t }) {
			fmt.Fprintf(stderr, "streamprobe check: -target %q: no such target in %s\n", t, *path)
			return exitUsage
		}
	}
	builtinURL := ""
	if slices.ContainsFunc(cfg.Targets, func(c config.Target) bool { return c.Builtin }) {
		srv := probe.NewDemoServer()
		srv.KeepConns = 16
		srv.Start()
		defer srv.Close()
		builtinURL = srv.URL
	}
	all, err := jobs.Build(cfg, builtinURL, os.Getenv)
	if err != nil {
		printErr(stderr, "check", err)
		return exitUsage
	}
	defer func() {
		for _, j := range all {
			j.Client.HTTP.CloseIdleConnections()
		}
	}()
	budgets := map[string]scorecard.Budget{}
	for s, b := range cfg.Budgets {
		budgets[s] = scorecard.Budget{TFC: ms(b.TFC.Duration), Gap: ms(b.Gap.Duration), Tail: ms(b.Tail.Duration), StallShare: b.StallShare}
	}
	var todo []jobs.Job
	for _, j := range all {
		if len(targets) == 0 || slices.Contains(targets, j.Target.Name) {
			todo = append(todo, j)
		}
	}
	total := 0
	for _, j := range todo {
		if j.Drill.Name == "" {
			total += *runs
		} else {
			total++
		}
	}
	progress := newProgress(stderr, total)
	results := runAll(ctx, todo, *runs, *conc, progress)
	progress.done()
	interrupted := ctx.Err() != nil
	if interrupted {
		n := 0
		for _, rs := range results {
			n += len(rs)
		}
		fmt.Fprintf(stderr, "streamprobe check: interrupted after %d of %d runs: the report covers those, and fails\n", n, total)
	}
	var cards []*scorecard.Card
	for _, ct := range cfg.Targets {
		if len(targets) > 0 && !slices.Contains(targets, ct.Name) {
			continue
		}
		var samples []string
		for _, s := range probe.SampleNames {
			if slices.Contains(ct.Samples, s) {
				samples = append(samples, s)
			}
		}
		bySample := map[string][]scorecard.Run{}
		var drills []scorecard.Run
		for _, r := range results[ct.Name] {
			if r.Record.Drill != probe.DrillNone {
				drills = append(drills, r)
			} else {
				bySample[r.Record.Sample] = append(bySample[r.Record.Sample], r)
			}
		}
		cards = append(cards, scorecard.Build(ct.Name, samples, bySample, drills, budgets))
	}
	pass := !interrupted
	for _, c := range cards {
		pass = pass && c.Pass
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(map[string]any{"pass": pass, "interrupted": interrupted, "runs_per_sample": *runs, "targets": cards})
	} else {
		color := isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && stdout == io.Writer(os.Stdout)
		if interrupted {
			fmt.Fprintln(stdout, "INTERRUPTED: the cards below hold only the runs that finished before the interrupt")
		}
		for i, c := range cards {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			io.WriteString(stdout, c.Text(color, *runs))
		}
	}
	if *junit != "" {
		if err := writeFile(*junit, func(w io.Writer) error { return scorecard.WriteJUnit(w, cards) }); err != nil {
			fmt.Fprintf(stderr, "streamprobe check: -junit: %v\n", err)
			return exitFail
		}
	}
	if *htmlOut != "" {
		if err := writeFile(*htmlOut, func(w io.Writer) error { return scorecard.WriteHTML(w, cards, *runs, time.Now()) }); err != nil {
			fmt.Fprintf(stderr, "streamprobe check: -html: %v\n", err)
			return exitFail
		}
	}
	if pass {
		return exitOK
	}
	return exitFail
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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

// runAll runs every job (samples n times, drills once) with at most conc
// in flight, and returns the runs by target.
func runAll(ctx context.Context, todo []jobs.Job, n, conc int, p *progress) map[string][]scorecard.Run {
	type task struct {
		j jobs.Job
	}
	var tasks []task
	for _, j := range todo {
		k := n
		if j.Drill.Name != "" {
			k = 1
		}
		for range k {
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
			p.add(res.Record)
		}()
	}
	wg.Wait()
	return out
}

// progress is the line a terminal shows while runs are in flight; silent
// when stderr is not a terminal.
type progress struct {
	w            io.Writer
	on           bool
	mu           sync.Mutex
	total, n, ko int
}

func newProgress(w io.Writer, total int) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, total: total, on: ok && isTerminal(f)}
}

func (p *progress) add(r probe.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if !r.Passed() {
		p.ko++
	}
	if p.on {
		fmt.Fprintf(p.w, "\r%d/%d runs done, %d failed so far", p.n, p.total, p.ko)
	}
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
