package daemon

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/robfig/cron/v3"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// A reload replaces the scheduler, but not the jobs' times: what follows
// is kept by job name across schedulers, so that a reload never starts a
// run. A job new to the daemon starts as every job does at daemon start
// (an interval job at once, after a random 0..jitter); a job it already
// runs keeps its next run time, or, when its schedule changed, takes the
// new schedule's next slot counted from its last run; a cron job takes its
// cron's next slot.

// jobPlan is how a job is scheduled in the running scheduler.
type jobPlan struct {
	every  config.Schedule
	jitter time.Duration
	gen    uint64    // the scheduler generation it belongs to
	fresh  bool      // started as a new job: at once, after 0..jitter
	start  time.Time // else its first run there (zero for cron: the cron's next slot)
	job    gocron.Job
}

// fired is when a job's task last fired (on the schedule's clock), and in
// which scheduler generation.
type fired struct {
	at  time.Time
	gen uint64
}

// firstRun is when a job's first run in a new scheduler is: fresh (at
// once, after 0..jitter), at a time, or, both zero, the schedule's own
// next slot (cron).
type firstRun struct {
	fresh bool
	at    time.Time
}

// maxStartMargin bounds startMargin.
const maxStartMargin = time.Second

// startMargin is how far in the future a first run must be to be given to
// gocron as a start time. gocron postpones by a whole interval a start
// time that passed before the scheduler started, so a nearer one is
// started at once and waited for in the task.
func startMargin(every time.Duration) time.Duration { return min(maxStartMargin, every/4) }

// planFirst decides the first run, at now, of a job with schedule every
// and jitter in a new scheduler. prev is how the job was scheduled in the
// running one (nil: it is not in the running config); last is when its
// task last fired, ok false if never; next is the running scheduler's
// next run of the job when prev has the same schedule (zero if unknown).
// rnd returns a random duration in [0, n).
func planFirst(prev *jobPlan, last fired, ok bool, next time.Time, every config.Schedule, jitter time.Duration, now time.Time, rnd func(time.Duration) time.Duration) firstRun {
	if every.Cron != "" {
		return firstRun{}
	}
	// prev's first run has not fired yet: the job is as it was then.
	pending := prev != nil && (!ok || last.gen < prev.gen)
	if (prev == nil && !ok) || (pending && prev.fresh) {
		return firstRun{fresh: true}
	}
	same := prev != nil && prev.every == every && prev.jitter == jitter
	if same && pending && !prev.start.IsZero() {
		return firstRun{at: prev.start}
	}
	if same && !pending && next.After(now) {
		return firstRun{at: next}
	}
	d := every.Every
	anchor := now // a cron job that never ran, now on an interval
	if ok {
		anchor = last.at
	}
	at := anchor.Add(d)
	if jitter > 0 {
		at = at.Add(rnd(jitter))
	}
	if at.Before(now) {
		at = at.Add((now.Sub(at) + d - 1) / d * d)
	}
	return firstRun{at: at}
}

// nextAfter returns the first of j's next runs in its scheduler that is
// after now; zero when there is none or the scheduler cannot say.
func nextAfter(j gocron.Job, now time.Time) time.Time {
	if j == nil {
		return time.Time{}
	}
	runs, err := j.NextRuns(2)
	if err != nil {
		return time.Time{}
	}
	for _, t := range runs {
		if t.After(now) {
			return t
		}
	}
	return time.Time{}
}

// minGap is the shortest time between two runs of a job on schedule every
// that fired last at last: half its interval, or half the gap between its
// cron's slots. Two firings closer than that in two schedulers are one slot
// run twice (the old scheduler fired while a reload replaced it).
func minGap(every config.Schedule, last time.Time) time.Duration {
	if every.Cron == "" {
		return every.Every / 2
	}
	s, err := cron.ParseStandard(every.Cron)
	if err != nil {
		return 0
	}
	return s.Next(last).Sub(last) / 2
}

// randN is a random duration in [0, n): the jitter's draw.
func (d *Daemon) randN(n time.Duration) time.Duration {
	if d.jitterN != nil {
		return d.jitterN(n)
	}
	return rand.N(n)
}

func (d *Daemon) clock() clockwork.Clock {
	if d.Clock != nil {
		return d.Clock
	}
	return clockwork.NewRealClock()
}

// schedule adds job j to s, the scheduler of generation gen, with its
// first run planned from prev, last and ok (see planFirst), at now.
func (d *Daemon) schedule(s gocron.Scheduler, j jobs.Job, gen uint64, prev *jobPlan, last fired, ok bool, now time.Time) (*jobPlan, error) {
	every := j.Conf.Every
	if j.Drill.Name != "" {
		every = j.Conf.DrillEvery
	}
	jitter := j.Conf.Jitter.Duration
	var def gocron.JobDefinition
	switch {
	case every.Cron != "":
		def = gocron.CronJob(every.Cron, false)
	case jitter == 0:
		def = gocron.DurationJob(every.Every)
	default:
		// The interval varies by up to the jitter, so hosts that started
		// together drift apart.
		def = gocron.DurationRandomJob(every.Every, every.Every+jitter)
	}
	var next time.Time
	if prev != nil && prev.every == every && prev.jitter == jitter {
		next = nextAfter(prev.job, now)
	}
	first := planFirst(prev, last, ok, next, every, jitter, now, d.randN)
	// The first run of a new interval job waits a random 0..jitter, so
	// hosts started together do not fire together; a cron job waits that
	// long at every run.
	var delay func() time.Duration
	if jitter > 0 && (first.fresh || every.Cron != "") {
		var started atomic.Bool
		delay = func() time.Duration {
			if every.Cron == "" && started.Swap(true) {
				return 0
			}
			return d.randN(jitter)
		}
	}
	// No gocron singleton mode: its guarantee holds per scheduler only,
	// and its skips are silent. runJob's busy flag holds across reloads
	// and counts every skip.
	opts := []gocron.JobOption{gocron.WithName(j.Name)}
	var waitUntil time.Time
	switch {
	case first.fresh:
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
	case first.at.IsZero():
	case first.at.Sub(now) < startMargin(every.Every):
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
		waitUntil = first.at
	default:
		opts = append(opts, gocron.WithStartAt(gocron.WithStartDateTimePast(first.at)))
	}
	var waited atomic.Bool
	task := func() {
		if !waitUntil.IsZero() && !waited.Swap(true) && !d.waitUntil(j.Name, waitUntil) {
			return
		}
		if !d.fire(j.Name, gen, every) {
			return
		}
		d.runJob(j, delay)
	}
	gj, err := s.NewJob(def, gocron.NewTask(task), opts...)
	if err != nil {
		return nil, err
	}
	start := first.at
	if first.fresh {
		start = now
	}
	return &jobPlan{every: every, jitter: jitter, gen: gen, fresh: first.fresh, start: start, job: gj}, nil
}

// waits are, by job name, the ends of the waits its task is in before
// its run (its first run's start time, a jitter): the scheduler already
// plans the run after, so while a wait lasts its end is the job's next run.
type waits struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// until is the end of the wait job is in, if it is in one.
func (w *waits) until(job string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.m[job]
	return t, ok
}

// during notes that job waits until t while wait runs; wait's result.
func (w *waits) during(job string, t time.Time, wait func() bool) bool {
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]time.Time{}
	}
	w.m[job] = t
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.m, job)
		w.mu.Unlock()
	}()
	return wait()
}

// waitUntil is waitOnClock(t) for job's task, noted in d.waits.
func (d *Daemon) waitUntil(job string, t time.Time) bool {
	return d.waits.during(job, t, func() bool { return d.waitOnClock(t) })
}

// waitOnClock waits until t on the schedule's clock; false when the
// daemon began to stop first.
func (d *Daemon) waitOnClock(t time.Time) bool {
	c := d.clock()
	wait := t.Sub(c.Now())
	if wait <= 0 {
		return true
	}
	tm := c.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-tm.Chan():
		return true
	case <-d.life.stopCtx.Done():
		return false
	}
}

// fire notes that job's task of scheduler generation gen fired now. It
// reports false, and the task makes no run, when a task of another
// scheduler fired for the same job less than minGap ago: the old and the
// new scheduler of a reload both fired for one slot.
func (d *Daemon) fire(job string, gen uint64, every config.Schedule) bool {
	now := d.clock().Now()
	d.cur.mu.Lock()
	defer d.cur.mu.Unlock()
	if f, ok := d.cur.fired[job]; ok && f.gen != gen && now.Sub(f.at) < minGap(every, f.at) {
		d.Log.Debug("run not made: the scheduler a reload replaced made this slot's run", "job", job)
		return false
	}
	if d.cur.fired == nil {
		d.cur.fired = map[string]fired{}
	}
	d.cur.fired[job] = fired{at: now, gen: gen}
	return true
}
