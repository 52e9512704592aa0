package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/stats"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// measured is what check's runs gave: the runs by target, and for each
// sample job the look it ended on, whose alpha its cells are judged at.
type measured struct {
	results     map[string][]scorecard.Run
	plan        stats.Plan
	ended       map[string]int // job name (target/sample) -> look index
	why         map[string]string
	looks       int // looks made
	capped      string
	interrupted bool
	// stop is how far an interrupted check got (nil otherwise).
	stop    *scorecard.Interruption
	maxRuns int
	maxTime time.Duration
	auto    bool
}

// alphaOf is the alpha each class of target is judged at: that of the
// look its runs ended on.
func (m *measured) alphaOf(target string) func(string) float64 {
	return func(sample string) float64 {
		k, ok := m.ended[target+"/"+sample]
		if !ok {
			k = max(0, m.looks-1)
		}
		return m.plan.Alpha[k]
	}
}

// planText is the plan in one line, for the page's head.
func (m *measured) planText() string {
	if !m.auto {
		return fmt.Sprintf("%d runs per sample, one look at %s confidence", m.plan.Looks[0], pct(1-m.plan.Alpha[0]))
	}
	s := fmt.Sprintf("sequential (-runs auto): %s; up to %d runs per sample and %s; %d look(s) made", m.plan, m.maxRuns, m.maxTime, m.looks)
	if m.capped != "" {
		s += "; stopped by " + m.capped
	}
	return s
}

// planDoc is the plan for -json.
func (m *measured) planDoc() map[string]any {
	d := map[string]any{"looks": m.plan.Looks, "alpha": m.plan.Alpha, "looks_made": m.looks, "auto": m.auto}
	if m.auto {
		d["max_runs"], d["max_time_s"] = m.maxRuns, m.maxTime.Seconds()
	}
	if m.capped != "" {
		d["stopped_by"] = m.capped
	}
	ended := map[string]any{}
	for job, k := range m.ended {
		ended[job] = map[string]any{"look": k + 1, "runs": m.plan.Looks[k], "alpha": m.plan.Alpha[k], "why": m.why[job]}
	}
	d["classes"] = ended
	return d
}

func pct(v float64) string {
	s := fmt.Sprintf("%.2f", v*100)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s + "%"
}

// measure runs the jobs of the selected targets by f's plan: each look
// brings every sample job still undecided to the look's runs (the runs
// interleaved across jobs, at most f.conc in flight), drills run once in
// the first look; after each look a job whose class has every cell
// decided at the look's alpha ends there. A cap (-max-time, or the last
// look) ends every job; the runs in flight finish first, so no run is left
// out for being slow. Interrupted when ctx ended first, and then says so on
// stderr.
func measure(ctx context.Context, f *checkFlags, cfg *config.Config, all []jobs.Job, stderr io.Writer) *measured {
	m := &measured{results: map[string][]scorecard.Run{}, plan: f.plan(), ended: map[string]int{}, why: map[string]string{},
		maxRuns: f.maxRuns, maxTime: f.maxTime, auto: f.runs.n == 0}
	var samples, drills []jobs.Job
	for _, j := range all {
		switch {
		case len(f.targets) > 0 && !slices.Contains(f.targets, j.Target.Name):
		case j.Drill.Name != "":
			drills = append(drills, j)
		default:
			samples = append(samples, j)
		}
	}
	budgets := scorecard.BudgetsOf(cfg)
	progress := newProgress(stderr, samples, drills, m, f.quiet)
	deadline := time.Now().Add(f.maxTime)
	active := slices.Clone(samples)
	runs := map[string][]scorecard.Run{} // by job
	for k, want := range m.plan.Looks {
		var tasks []jobs.Job
		if k == 0 {
			tasks = append(tasks, drills...)
		}
		tasks = append(tasks, interleave(active, func(j jobs.Job) int { return want - len(runs[j.Name]) })...)
		progress.look(k, want, len(active))
		capped := runTasks(ctx, tasks, f.conc, deadline, m.auto, func(j jobs.Job, r scorecard.Run) {
			if j.Drill.Name == "" {
				runs[j.Name] = append(runs[j.Name], r)
			}
			m.results[j.Target.Name] = append(m.results[j.Target.Name], r)
			progress.add(j, r.Record)
		})
		m.looks = k + 1
		if ctx.Err() != nil {
			m.interrupted = true
			break
		}
		if capped {
			m.capped = fmt.Sprintf("-max-time %s at look %d", f.maxTime, k+1)
		}
		var still []jobs.Job
		for _, j := range active {
			cl := scorecard.ClassOf(j.Sample.Name, runs[j.Name])
			switch {
			case scorecard.ClassDecided(&cl, budgets.For(j.Target.Name, j.Sample.Name), m.plan.Alpha[k]):
				m.ended[j.Name], m.why[j.Name] = k, "every cell decided"
			case capped || k == len(m.plan.Looks)-1:
				m.ended[j.Name], m.why[j.Name] = k, "cap reached with a cell inconclusive"
			default:
				still = append(still, j)
				continue
			}
			progress.ended(j, len(runs[j.Name]), k)
		}
		active = still
		if len(active) == 0 || capped {
			break
		}
	}
	progress.done()
	if m.interrupted {
		n := 0
		for _, rs := range m.results {
			n += len(rs)
		}
		m.stop = &scorecard.Interruption{Done: n, Planned: progress.total()}
		fmt.Fprintf(stderr, "streamprobe check: interrupted after %d of %d runs: the report covers those, and fails\n", n, progress.total())
	}
	return m
}

// interleave orders the runs the jobs still need round-robin, one run of
// each job in turn, so that a slow minute hits every sample and target
// alike.
func interleave(js []jobs.Job, need func(jobs.Job) int) []jobs.Job {
	left := map[string]int{}
	total := 0
	for _, j := range js {
		left[j.Name] = max(0, need(j))
		total += left[j.Name]
	}
	out := make([]jobs.Job, 0, total)
	for len(out) < total {
		for _, j := range js {
			if left[j.Name] > 0 {
				out = append(out, j)
				left[j.Name]--
			}
		}
	}
	return out
}

// runTasks runs the tasks in order with at most conc in flight, and hands
// each finished run to got. With timed set, it starts no task after
// deadline and reports that it stopped so; the runs in flight finish
// either way. A run cut by ctx is no measurement and is dropped.
func runTasks(ctx context.Context, tasks []jobs.Job, conc int, deadline time.Time, timed bool, got func(jobs.Job, scorecard.Run)) (capped bool) {
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
		if timed && time.Now().After(deadline) {
			<-sem
			capped = true
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := t.Run(ctx, nil)
			if ctx.Err() != nil {
				return // cut by the interrupt: not a measurement
			}
			run := scorecard.FromResult(res)
			mu.Lock()
			defer mu.Unlock()
			got(t, run)
		}()
	}
	wg.Wait()
	return capped
}

// progress says on stderr what check is doing: on a terminal one line
// kept up to date; otherwise (a CI log) one line per target/sample when
// its class ends (its runs all done) and per target/drill when it ran,
// and, with -runs auto, a line per look. Silent with -q.
type progress struct {
	w           io.Writer
	term, quiet bool
	m           *measured
	mu          sync.Mutex
	n, ko       int
	want        int // runs planned so far (a fixed plan: all of them)
	got, failed map[string]int
}

func newProgress(w io.Writer, samples, drills []jobs.Job, m *measured, quiet bool) *progress {
	f, ok := w.(*os.File)
	p := &progress{w: w, term: ok && isTerminal(f), quiet: quiet, m: m, got: map[string]int{}, failed: map[string]int{}}
	p.want = len(drills)
	if !m.auto {
		p.want += len(samples) * m.plan.Looks[0]
	}
	return p
}

// look starts look k (0-based), which brings active jobs to want runs.
func (p *progress) look(k, want, active int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.m.auto {
		return
	}
	p.want += active * (want - p.prev(k))
	if !p.quiet && !p.term {
		fmt.Fprintf(p.w, "streamprobe check: look %d of %d: %d class(es) undecided, to %d runs each\n", k+1, len(p.m.plan.Looks), active, want)
	}
}

func (p *progress) prev(k int) int {
	if k == 0 {
		return 0
	}
	return p.m.plan.Looks[k-1]
}

func (p *progress) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want
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
		fmt.Fprintf(p.w, "\r%d/%d runs done, %d failed so far", p.n, p.want, p.ko)
	case j.Drill.Name != "":
		fmt.Fprintf(p.w, "streamprobe check: %s: %d run(s), %d failed (%d/%d runs done)\n", shown(j.Name), p.got[j.Name], p.failed[j.Name], p.n, p.want)
	}
}

// ended says that a sample job's class needs no more runs.
func (p *progress) ended(j jobs.Job, runs, k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet || p.term {
		return
	}
	line := fmt.Sprintf("streamprobe check: %s: %d run(s), %d failed (%d/%d runs done)", shown(j.Name), runs, p.failed[j.Name], p.n, p.want)
	if p.m.auto {
		line += fmt.Sprintf("; %s at look %d", p.m.why[j.Name], k+1)
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) done() {
	if p.term && !p.quiet {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
