// Package daemon runs streamprobe's probes on a schedule and sends what
// they measure to the sinks: the metrics set (pushed, and served on
// /metrics), the results log and the daemon's own log.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// Daemon is the scheduled probe agent.
type Daemon struct {
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

	mu        sync.Mutex
	cfg       *config.Config
	sched     gocron.Scheduler
	runCtx    context.Context // cancelled shutdown_timeout after SIGTERM: in-flight runs stop
	cancelRun context.CancelFunc
	stopCtx   context.Context // cancelled at SIGTERM: no run starts, none waits on
	stopNow   context.CancelFunc
	builtin   *refserver.Server
	wg        sync.WaitGroup // runs in flight
	retired   sync.WaitGroup // schedulers and listeners a reload replaced, stopping
	listen    string         // the address srv listens on
	srv       *http.Server

	// For the daemon's lifetime, whatever the reloads: one concurrency
	// limit, one "a job never overlaps itself", one results log writer.
	slots     *slots
	busy      busyJobs
	results   *resultsLog
	pushReset chan struct{} // a reload changed the push settings
	dropLog   atomic.Int64  // when a results log drop was last logged (Unix ns)

	backoff  map[string]time.Time // job name -> no run before (Retry-After)
	plans    map[string]*jobPlan  // job name -> how the running scheduler has it (schedule.go)
	fired    map[string]fired     // job name -> when its task last fired, in which scheduler
	gen      uint64               // the running scheduler's generation, 1 at start
	stopping bool                 // Run is shutting down: no run may start

	pushMu      sync.Mutex
	pushTr      *http.Transport // the push's own (push.go)
	lastPushErr string
	lastPushAt  time.Time
	lastPushOK  time.Time // the last push that succeeded
	started     time.Time // when Run started
	reloadErr   string    // why the last reload was refused; "" after one applied

	status status // the page on / (status.go)
}

// New returns a daemon for cfg; Start runs it.
func New(cfg *config.Config, log *slog.Logger) *Daemon {
	return &Daemon{cfg: cfg, Log: log, Metrics: NewMetrics(cfg)}
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
	d.runCtx, d.cancelRun = context.WithCancel(context.Background())
	defer d.cancelRun()
	d.stopCtx, d.stopNow = context.WithCancel(context.Background())
	defer d.stopNow()
	d.pushMu.Lock()
	d.started = time.Now()
	d.pushMu.Unlock()
	d.slots = newSlots(d.cfg.MaxConcurrent)
	d.pushReset = make(chan struct{}, 1)
	d.results = newResultsLog(resultsQueueLen, d.resultsLogFailed, d.resultsLogDropped)
	if err := d.apply(d.cfg); err != nil {
		d.results.close()
		d.mu.Lock()
		if d.builtin != nil {
			d.builtin.Close()
		}
		d.mu.Unlock()
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
			if err := d.apply(nc); err != nil {
				d.ReloadFailed(err)
				continue
			}
			d.Metrics.Reloaded(true, time.Now())
			d.pushMu.Lock()
			d.reloadErr = ""
			d.pushMu.Unlock()
			d.Log.Info("config reloaded", "file", nc.File(), "targets", len(nc.Targets))
			if d.Reloaded != nil {
				d.Reloaded(nc)
			}
		}
	}
	d.mu.Lock()
	sched, grace := d.sched, d.cfg.ShutdownTimeout.Duration
	d.stopping = true
	d.mu.Unlock()
	d.stopNow()
	d.Log.Info("shutting down: waiting for runs in flight", "shutdown_timeout", grace)
	finished := make(chan struct{})
	go func() { d.wg.Wait(); close(finished) }()
	t := time.NewTimer(grace)
	select {
	case <-finished:
	case <-t.C:
		d.Log.Info("shutdown_timeout passed: cancelling runs in flight")
	}
	t.Stop()
	d.cancelRun()
	if err := sched.Shutdown(); err != nil {
		d.Log.Warn("scheduler shutdown", "err", err)
	}
	d.wg.Wait()
	d.retired.Wait()
	stopPush()
	<-pushDone
	d.push(context.Background()) // the last numbers, cumulative as always
	d.pushTransport().CloseIdleConnections()
	d.mu.Lock()
	srv := d.srv
	d.mu.Unlock()
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}
	d.results.close()
	d.mu.Lock()
	if d.builtin != nil {
		d.builtin.Close()
	}
	d.mu.Unlock()
	return nil
}

// ReloadFailed records a reload that was refused, whether the file did
// not load or apply could not use it: the old config keeps running.
func (d *Daemon) ReloadFailed(err error) {
	d.Metrics.Reloaded(false, time.Now())
	d.pushMu.Lock()
	d.reloadErr = err.Error()
	d.pushMu.Unlock()
	d.status.reloadRefused(time.Now())
	d.Log.Error("reload failed; the old config keeps running", "err", err)
}

// apply makes cfg the running config, whole or not at all. First
// everything that can fail: the jobs (secrets), the results log (opened
// again on every reload, so a rotated log is let go), the listen address
// when it changed (the new one is bound before the old one is closed),
// the scheduler. Then the swap: the new scheduler starts and the old one
// stops (its runs in flight finish; no run starts because of the reload:
// every job the daemon already ran keeps its next run, see schedule.go),
// the concurrency limit is resized,
// the push loop takes the push settings, and the metrics take the new
// labels and budgets and drop the series of removed jobs.
func (d *Daemon) apply(cfg *config.Config) (err error) {
	d.mu.Lock()
	builtinURL := ""
	for _, t := range cfg.Targets {
		if t.Builtin && d.builtin == nil {
			d.builtin = probe.NewDemoServer()
			d.builtin.KeepConns = 16
			d.builtin.Start()
			d.Log.Info("built-in reference target started", "url", d.builtin.URL)
		}
	}
	if d.builtin != nil {
		builtinURL = d.builtin.URL
	}
	curListen, first := d.listen, d.sched == nil
	gen, plans, last := d.gen+1, d.plans, maps.Clone(d.fired)
	d.mu.Unlock()
	jobs, err := jobs.Build(cfg, builtinURL, d.getenv)
	if err != nil {
		return err
	}
	var rf *os.File
	if cfg.ResultsLog != "" {
		rf, err = os.OpenFile(cfg.ResultsLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return fmt.Errorf("results_log: %w", err)
		}
		defer func() {
			if err != nil {
				rf.Close()
			}
		}()
	}
	var ln net.Listener
	if cfg.Listen != "" && (first || cfg.Listen != curListen) {
		ln, err = net.Listen("tcp", cfg.Listen)
		if err != nil {
			return fmt.Errorf("listen %s: %w", cfg.Listen, err)
		}
		defer func() {
			if err != nil {
				ln.Close()
			}
		}()
	}
	opts := []gocron.SchedulerOption{gocron.WithLogger(d.Log), gocron.WithStopTimeout(cfg.ShutdownTimeout.Duration)}
	if d.Clock != nil {
		opts = append(opts, gocron.WithClock(d.Clock))
	}
	s, err := gocron.NewScheduler(opts...)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	now, newPlans := d.clock().Now(), map[string]*jobPlan{}
	for _, j := range jobs {
		f, ok := last[j.Name]
		p, err := d.schedule(s, j, gen, plans[j.Name], f, ok, now)
		if err != nil {
			s.Shutdown()
			return fmt.Errorf("job %s: %w", j.Name, err)
		}
		newPlans[j.Name] = p
	}

	d.mu.Lock()
	old, oldSrv := d.sched, (*http.Server)(nil)
	d.sched, d.cfg = s, cfg
	d.plans, d.gen = newPlans, gen
	if first || cfg.Listen != curListen {
		oldSrv, d.srv, d.listen = d.srv, nil, cfg.Listen
		if ln != nil {
			d.srv = &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
			go d.srv.Serve(ln)
			d.Log.Info("serving /metrics and /healthz", "addr", ln.Addr().String())
		}
	}
	d.mu.Unlock()
	if oldSrv != nil {
		d.retired.Add(1)
		go func() {
			defer d.retired.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			oldSrv.Shutdown(sctx)
		}()
	}
	d.slots.resize(cfg.MaxConcurrent)
	d.results.swap(rf)
	d.Metrics.Reconfigure(cfg, jobs)
	d.status.configured(cfg, jobs, time.Now())
	select {
	case d.pushReset <- struct{}{}:
	default:
	}
	for _, t := range cfg.Targets {
		if t.InsecureSkipVerify {
			d.Log.Warn("TLS CERTIFICATE VERIFICATION IS OFF for this target (insecure_skip_verify = true): its results prove nothing about its certificate", "target", t.Name)
		}
	}
	s.Start()
	if old != nil {
		// Runs of the old config finish on their own, holding their slots
		// and their jobs' busy flags; no new ones start.
		d.retired.Add(1)
		go func() {
			defer d.retired.Done()
			old.Shutdown()
		}()
	}
	d.Log.Info("scheduled", "jobs", len(jobs), "max_concurrent", cfg.MaxConcurrent)
	return nil
}

// runJob runs one job now, within the host's concurrency bound, unless a
// run of the same job (of this config or of one before a reload) is not
// done yet: then this one is skipped and counted.
func (d *Daemon) runJob(j jobs.Job, delay func() time.Duration) {
	ctx, stop := d.runCtx, d.stopCtx
	d.mu.Lock()
	if d.stopping || ctx.Err() != nil {
		// A run of a scheduler that is stopping must not start after
		// Run has waited for the runs in flight.
		d.mu.Unlock()
		return
	}
	d.wg.Add(1)
	d.mu.Unlock()
	defer d.wg.Done()
	defer func() { d.Metrics.Scheduled(j, time.Now()) }()
	d.Metrics.Due()
	if st, ok := d.busy.claim(j.Name); !ok {
		reason := "overlap"
		if st == jobWaiting {
			reason = "no_slot"
		}
		d.Metrics.SkippedFor(j, reason).Inc()
		d.Log.Debug("run skipped: the job's previous run is not done", "job", j.Name, "reason", reason)
		return
	}
	defer d.busy.set(j.Name, jobIdle)
	var wait time.Duration
	if delay != nil {
		wait = delay()
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop.Done():
			t.Stop()
			return
		}
	}
	// Decided before a slot is taken or the lag recorded: a skipped run
	// holds no slot another job could use, and is no lag.
	if until, ok := d.notBefore(j.Name); ok {
		d.Metrics.Skipped(j).Inc()
		d.Log.Debug("run skipped: the target asked to wait (Retry-After)", "job", j.Name, "until", until.UTC().Format(time.RFC3339))
		return
	}
	due, delayed := time.Now(), false
	if !d.slots.tryAcquire() {
		delayed = true
		d.busy.set(j.Name, jobWaiting)
		if !d.slots.acquire(stop) {
			return
		}
		d.busy.set(j.Name, jobRunning)
	}
	defer d.slots.release()
	if stop.Err() != nil {
		return // the shutdown began while this run waited
	}
	d.Metrics.Started(time.Since(due), delayed)
	res := j.Run(ctx, d.Client)
	d.record(res.Record, ctx.Err() != nil)
	if ctx.Err() == nil {
		d.status.observe(res)
	}
	if wait := probe.RetryAfterWait(res.Record.RetryAfterMs); wait > 0 && (res.Record.HTTPStatus == http.StatusTooManyRequests || res.Record.HTTPStatus == http.StatusServiceUnavailable) {
		d.mu.Lock()
		if d.backoff == nil {
			d.backoff = map[string]time.Time{}
		}
		d.backoff[j.Name] = time.Now().Add(wait)
		d.mu.Unlock()
	}
}

// notBefore reports whether job must not run yet, and until when.
func (d *Daemon) notBefore(job string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	until, ok := d.backoff[job]
	if ok && time.Now().Before(until) {
		return until, true
	}
	delete(d.backoff, job)
	return time.Time{}, false
}

// record sends a finished run to the sinks.
func (d *Daemon) record(r probe.Record, shutdown bool) {
	if shutdown {
		r.Error = "cancelled by shutdown"
		d.Metrics.CancelledByShutdown()
		d.Log.Info("run cancelled by shutdown", "target", r.Target, "sample", r.Sample, "drill", r.Drill, "request_id", r.RequestID)
	} else {
		d.Metrics.Observe(r)
		attrs := []any{"target", r.Target, "sample", r.Sample, "drill", r.Drill, "outcome", r.Outcome, "request_id", r.RequestID}
		if r.TFCMs != nil {
			attrs = append(attrs, "tfc_ms", *r.TFCMs)
		}
		if r.Gaps.P95Ms != nil {
			attrs = append(attrs, "gap_p95_ms", *r.Gaps.P95Ms)
		}
		if r.Verdict != "" {
			attrs = append(attrs, "verdict", r.Verdict)
		}
		level := slog.LevelInfo
		if !r.Passed() {
			level = slog.LevelWarn
			if r.Error != "" {
				attrs = append(attrs, "error", r.Error)
			}
			if r.ResumeDetail != "" && r.Verdict.Failed() {
				attrs = append(attrs, "resume_detail", r.ResumeDetail)
			}
		}
		d.Log.Log(context.Background(), level, "run", attrs...)
	}
	if d.results.enabled.Load() {
		// Queued, never written here: a slow disk does not hold the run.
		b, _ := json.Marshal(r)
		d.results.add(append(b, '\n'))
	}
}

func (d *Daemon) resultsLogFailed(err error) {
	d.Metrics.ResultsLogFailed()
	d.Log.Error("results log write failed; the record is in the metrics only", "err", err)
}

// resultsLogDropped counts a record the results log had no room for, and
// says so in the log at most once a minute.
func (d *Daemon) resultsLogDropped() {
	d.Metrics.ResultsLogDropped()
	now := time.Now().UnixNano()
	if last := d.dropLog.Load(); now-last >= int64(time.Minute) && d.dropLog.CompareAndSwap(last, now) {
		d.Log.Error("results log queue full (the disk is not keeping up): records dropped, counted in streamprobe_results_log_dropped_total", "queue", resultsQueueLen)
	}
}

func (d *Daemon) pushConfig() config.Push {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg.Push
}

// pushLoop pushes the set every interval. A push runs apart from the
// probes: a slow or dead endpoint never delays a run. A reload's new
// interval takes effect at once; its URL at the next push.
func (d *Daemon) pushLoop(ctx context.Context) {
	every := d.pushConfig().Interval.Duration
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.pushReset:
			if p := d.pushConfig().Interval.Duration; p != every {
				every = p
				t.Reset(every)
			}
		case <-t.C:
			d.push(ctx)
		}
	}
}

// push sends the set once (sendPush). Counters and buckets are
// cumulative, so a failed push loses nothing: the next one carries it.
func (d *Daemon) push(ctx context.Context) {
	p := d.pushConfig()
	if p.URL.URL == nil {
		return
	}
	auth, err := config.Secret(p.AuthorizationEnv, p.AuthorizationFile, d.getenv)
	if err != nil {
		d.Log.Error("push: authorization", "err", err)
		auth = ""
	}
	err = d.sendPush(ctx, p, auth)
	if errors.Is(err, errPushCancelled) {
		return
	}
	d.pushMu.Lock()
	d.lastPushAt = time.Now()
	if err != nil {
		d.lastPushErr = err.Error()
	} else {
		d.lastPushErr = ""
		d.lastPushOK = d.lastPushAt
	}
	d.pushMu.Unlock()
	if err != nil {
		d.Metrics.PushFailed()
		d.Log.Warn("push failed; the next push carries everything", "err", err)
	}
}

// Handler serves /metrics (the same set as the push), /healthz (200 and
// {"status":"ok"} when healthy, 503 and {"status":"unhealthy"} with the
// reasons otherwise, see Daemon.health) and the status page on /.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.serveStatus)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		d.Metrics.Set.WritePrometheus(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		h := d.health(time.Now())
		w.Header().Set("Content-Type", "application/json")
		if h.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(h)
	})
	return mux
}
