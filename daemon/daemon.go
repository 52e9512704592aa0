// Package daemon runs streamprobe's probes on a schedule and sends what
// they measure to the sinks: the metrics set (pushed, and served on
// /metrics), the results log and the daemon's own log.
//
// The files, one idea each: daemon.go the lifecycle (New, Run, the
// shutdown); reload.go a config made the running one, whole or not at
// all; schedule.go the jobs' times across schedulers; runner.go a job's
// task (Retry-After, overlap, the concurrency slots, the run and its
// sinks); http.go the listen address (/metrics, /healthz, /); push.go the
// push; health.go, status.go and overview.go what /healthz and / say.
package daemon

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// Daemon is the scheduled probe agent. Its state is grouped by concern,
// each group with its own lock (or none, where one goroutine alone
// touches it); no lock guards the state of two concerns.
type Daemon struct {
	// Set before Run and never changed after.

	Log     *slog.Logger
	Metrics *Metrics
	// Getenv looks up secrets; nil means os.Getenv.
	Getenv func(string) string
	// Client, when set, replaces every target's own client (a test seam);
	// nil means each target's (probe.NewClient).
	Client *resumeclient.Client
	// Clock, when set, drives the schedules (a test seam: a fake clock
	// makes runs come due when the test advances it); nil means the real
	// clock. Probes always measure on the real monotonic clock.
	Clock clockwork.Clock
	// Reloaded, when set, is called with each config a reload applied
	// (the command uses it for the log level).
	Reloaded func(*config.Config)
	// Listener, when set, is the config's listen address already bound
	// (Listen): the command binds it before it starts anything, so a
	// taken port stops it before the built-in target or a schedule starts.
	// Run serves on it; nil means Run binds the address itself.
	Listener net.Listener
	// jitterN, when set, is the random wait in [0, n) a job's jitter
	// draws (a test seam: a fixed wait makes a jitter wait's end known);
	// nil means math/rand/v2's N.
	jitterN func(n time.Duration) time.Duration

	life lifecycle // Run's contexts, phase and waits (this file)
	cur  current   // the config in force and its scheduler (reload.go)
	web  listener  // the server on the listen address (http.go)
	// builtin is the built-in reference target, started by the first
	// config that needs it (reload.go) and closed when Run returns. Only
	// Run's goroutine touches it: no lock.
	builtin *refserver.Server

	// For the daemon's lifetime, whatever the reloads: one concurrency
	// limit, one "a job never overlaps itself", one Retry-After memory,
	// one results log writer (runner.go). Each has its own lock; slots
	// and results are made by Run before it starts anything.
	slots   *slots
	busy    busyJobs
	waits   waits // the waits before a run: jitter, a first run's start (schedule.go)
	backoff retryAfter
	results *resultsLog
	dropLog atomic.Int64 // when a results log drop was last logged (Unix ns)

	pushed pushState    // the push loop and the last push's outcome (push.go)
	reload reloadState  // why the last reload was refused (reload.go)
	source configSource // the config's URL and its fetches (configsource.go)
	otlp   otlpSink     // the OTLP export (otlp.go)
	status status       // the page on / (status.go)
}

// lifecycle is where Run is: its contexts, its phase and what it waits
// for when it stops.
type lifecycle struct {
	// Made by Run before it starts anything and never changed after, so
	// read without a lock.
	runCtx    context.Context // cancelled shutdown_timeout after the stop: in-flight runs stop
	cancelRun context.CancelFunc
	stopCtx   context.Context // cancelled at the stop: no run starts, none waits on
	stopNow   context.CancelFunc

	mu       sync.Mutex // guards started and stopping; held across runs.Add (see begin)
	started  time.Time  // when Run started
	stopping bool       // Run is shutting down: no run may start

	runs    sync.WaitGroup // runs in flight
	retired sync.WaitGroup // schedulers and listeners a reload replaced, stopping
}

// begin counts a run in flight; false once Run is shutting down, so that
// no run starts after Run has waited for the runs in flight. end must
// follow a true.
func (l *lifecycle) begin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping || l.runCtx.Err() != nil {
		return false
	}
	l.runs.Add(1)
	return true
}

func (l *lifecycle) end() { l.runs.Done() }

// since is when Run started; zero before.
func (l *lifecycle) since() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started
}

// New returns a daemon for cfg; Run runs it.
func New(cfg *config.Config, log *slog.Logger) *Daemon {
	d := &Daemon{Log: log, Metrics: NewMetrics(cfg)}
	d.cur.cfg = cfg
	d.pushed.reset = make(chan struct{}, 1)
	return d
}

func (d *Daemon) getenv(k string) string {
	if d.Getenv != nil {
		return d.Getenv(k)
	}
	return os.Getenv(k)
}

// Run starts the schedule, the push loop and the listener, and blocks until
// ctx is done; then it stops scheduling, cancels the runs in flight (they
// are recorded as cancelled by shutdown), pushes once more and returns.
// reload delivers new configs (SIGHUP): each is applied whole (see apply)
// or, when it cannot be, not at all, and the old one keeps running.
func (d *Daemon) Run(ctx context.Context, reload <-chan *config.Config) error {
	d.life.runCtx, d.life.cancelRun = context.WithCancel(context.Background())
	defer d.life.cancelRun()
	d.life.stopCtx, d.life.stopNow = context.WithCancel(context.Background())
	defer d.life.stopNow()
	d.life.mu.Lock()
	d.life.started = time.Now()
	d.life.mu.Unlock()
	cfg := d.config()
	d.slots = newSlots(cfg.MaxConcurrent)
	d.results = newResultsLog(resultsQueueLen, d.resultsLogFailed, d.resultsLogDropped)
	if err := d.apply(cfg); err != nil {
		d.results.close()
		if d.Listener != nil { // the apply failed before it took it
			d.Listener.Close()
			d.Listener = nil
		}
		return err
	}
	d.Metrics.Reloaded(true, time.Now())
	pushDone := make(chan struct{})
	pushCtx, stopPush := context.WithCancel(context.Background())
	go func() { defer close(pushDone); d.pushLoop(pushCtx) }()

	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case nc := <-reload:
			d.reloadTo(nc)
		}
	}
	d.stopRuns()
	stopPush()
	<-pushDone
	d.push(context.Background()) // the last numbers, cumulative as always
	d.otlpClose(d.config().OTLP.Timeout.Duration)
	d.pushTransport().CloseIdleConnections()
	d.web.close()
	d.results.close()
	if d.builtin != nil {
		d.builtin.Close()
	}
	return nil
}

// stopRuns stops scheduling and waits for the runs in flight up to
// shutdown_timeout, then cancels those left (they are recorded as
// cancelled by shutdown) and waits for them and for every scheduler and
// listener a reload retired.
func (d *Daemon) stopRuns() {
	d.cur.mu.Lock()
	sched, grace := d.cur.sched, d.cur.cfg.ShutdownTimeout.Duration
	d.cur.mu.Unlock()
	d.life.mu.Lock()
	d.life.stopping = true
	d.life.mu.Unlock()
	d.life.stopNow()
	d.Log.Info("shutting down: waiting for runs in flight", "shutdown_timeout", grace)
	finished := make(chan struct{})
	go func() { d.life.runs.Wait(); close(finished) }()
	t := time.NewTimer(grace)
	select {
	case <-finished:
	case <-t.C:
		d.Log.Info("shutdown_timeout passed: cancelling runs in flight")
	}
	t.Stop()
	d.life.cancelRun()
	if err := sched.Shutdown(); err != nil {
		d.Log.Warn("scheduler shutdown", "err", err)
	}
	d.life.runs.Wait()
	d.life.retired.Wait()
}
