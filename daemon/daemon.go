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
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/go-co-op/gocron/v2"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
	"github.com/streamprobe/streamprobe/resumeclient/ssetest"
)

// Daemon is the scheduled probe agent.
type Daemon struct {
	Log     *slog.Logger
	Metrics *Metrics
	// Getenv looks up secrets; nil means os.Getenv.
	Getenv func(string) string
	// Client is the probes' transport; nil means a plain one.
	Client *resumeclient.Client

	mu        sync.Mutex
	cfg       *config.Config
	sched     gocron.Scheduler
	sem       chan struct{}
	runCtx    context.Context // cancelled on shutdown: in-flight runs stop
	cancelRun context.CancelFunc
	builtin   *ssetest.Server
	results   *os.File
	wg        sync.WaitGroup // runs in flight

	backoff  map[string]time.Time // job name -> no run before (Retry-After)
	stopping bool                 // Run is shutting down: no run may start

	pushMu      sync.Mutex
	lastPushErr string
	lastPushAt  time.Time
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
// reload delivers new configs (SIGHUP): each replaces the jobs; a config
// that cannot be used is logged and the old one keeps running.
func (d *Daemon) Run(ctx context.Context, reload <-chan *config.Config) error {
	d.runCtx, d.cancelRun = context.WithCancel(context.Background())
	defer d.cancelRun()
	if d.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		d.Client = &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
	}
	cfg := d.cfg
	if cfg.ResultsLog != "" {
		f, err := os.OpenFile(cfg.ResultsLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return fmt.Errorf("results_log: %w", err)
		}
		d.results = f
		defer f.Close()
	}
	var srv *http.Server
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return fmt.Errorf("listen %s: %w", cfg.Listen, err)
		}
		srv = &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		d.Log.Info("serving /metrics and /healthz", "addr", ln.Addr().String())
	}
	if err := d.apply(cfg); err != nil {
		if srv != nil {
			srv.Close()
		}
		d.mu.Lock()
		if d.builtin != nil {
			d.builtin.Close()
		}
		d.mu.Unlock()
		return err
	}
	pushDone := make(chan struct{})
	pushCtx, stopPush := context.WithCancel(context.Background())
	go func() { defer close(pushDone); d.pushLoop(pushCtx) }()

	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case nc := <-reload:
			if err := d.apply(nc); err != nil {
				d.Log.Error("reload failed; the old config keeps running", "err", err)
				continue
			}
			d.Log.Info("config reloaded", "file", nc.File(), "targets", len(nc.Targets))
		}
	}
	d.Log.Info("shutting down: cancelling runs in flight")
	d.mu.Lock()
	sched := d.sched
	d.stopping = true
	d.mu.Unlock()
	d.cancelRun()
	if err := sched.Shutdown(); err != nil {
		d.Log.Warn("scheduler shutdown", "err", err)
	}
	d.wg.Wait()
	stopPush()
	<-pushDone
	d.push(context.Background()) // the last numbers, cumulative as always
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}
	d.mu.Lock()
	if d.builtin != nil {
		d.builtin.Close()
	}
	d.mu.Unlock()
	return nil
}

// apply builds the jobs of cfg on a new scheduler and swaps it in.
func (d *Daemon) apply(cfg *config.Config) error {
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
	d.mu.Unlock()
	jobs, err := Jobs(cfg, builtinURL, d.getenv)
	if err != nil {
		return err
	}
	s, err := gocron.NewScheduler(gocron.WithLogger(d.Log), gocron.WithStopTimeout(cfg.ShutdownTimeout.Duration))
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	sem := make(chan struct{}, cfg.MaxConcurrent)
	for _, j := range jobs {
		if err := d.schedule(s, sem, j); err != nil {
			s.Shutdown()
			return fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	d.mu.Lock()
	old := d.sched
	d.sched, d.sem, d.cfg = s, sem, cfg
	d.mu.Unlock()
	d.Metrics.SetBudgets(cfg)
	for _, t := range cfg.Targets {
		if t.InsecureSkipVerify {
			d.Log.Warn("TLS CERTIFICATE VERIFICATION IS OFF for this target (insecure_skip_verify = true): its results prove nothing about its certificate", "target", t.Name)
		}
	}
	s.Start()
	if old != nil {
		// Runs of the old config finish on their own; no new ones start.
		go old.Shutdown()
	}
	d.Log.Info("scheduled", "jobs", len(jobs), "max_concurrent", cfg.MaxConcurrent)
	return nil
}

func (d *Daemon) schedule(s gocron.Scheduler, sem chan struct{}, j Job) error {
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
	opts := []gocron.JobOption{
		gocron.WithName(j.Name),
		gocron.WithSingletonMode(gocron.LimitModeReschedule),
	}
	switch {
	case every.Cron != "":
	case jitter > 0:
		// A start that has passed by the time the scheduler starts (a
		// slow host) is not an error: the first run is an interval later.
		opts = append(opts, gocron.WithStartAt(gocron.WithStartDateTimePast(time.Now().Add(rand.N(jitter)))))
	default:
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
	}
	_, err := s.NewJob(def, gocron.NewTask(func() { d.runJob(sem, j, every.Cron != "", jitter) }), opts...)
	return err
}

// runJob runs one job now, within the host's concurrency bound.
func (d *Daemon) runJob(sem chan struct{}, j Job, cronJitter bool, jitter time.Duration) {
	ctx := d.runCtx
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
	if cronJitter && jitter > 0 {
		t := time.NewTimer(rand.N(jitter))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return
	}
	if until, ok := d.notBefore(j.Name); ok {
		d.Metrics.Skipped(j).Inc()
		d.Log.Debug("run skipped: the target asked to wait (Retry-After)", "job", j.Name, "until", until.UTC().Format(time.RFC3339))
		return
	}
	res := j.Run(ctx, d.Client)
	d.record(res.Record, ctx.Err() != nil)
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
		d.Metrics.CancelledByShutdown.Inc()
		d.Log.Info("run cancelled by shutdown", "target", r.Target, "sample", r.Sample, "drill", r.Drill, "request_id", r.RequestID)
	} else {
		intended := r.Outcome == probe.Success || (r.Sample == "cancel" && r.Outcome == probe.ClientCancelled && r.Chunks > 0)
		d.Metrics.Observe(r, intended)
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
		if !intended || r.Verdict.Failed() {
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
	if d.results != nil {
		b, _ := json.Marshal(r)
		d.mu.Lock()
		_, err := d.results.Write(append(b, '\n'))
		d.mu.Unlock()
		if err != nil {
			d.Metrics.ResultsLogErrors.Inc()
			d.Log.Error("results log write failed; the record is in the metrics only", "err", err)
		}
	}
}

func (d *Daemon) pushConfig() config.Push {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg.Push
}

// pushLoop pushes the set every interval. A push runs apart from the
// probes: a slow or dead endpoint never delays a run.
func (d *Daemon) pushLoop(ctx context.Context) {
	p := d.pushConfig()
	if p.URL.URL == nil {
		return
	}
	t := time.NewTicker(p.Interval.Duration)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.push(ctx)
		}
	}
}

// push sends the set once. Counters and buckets are cumulative, so a
// failed push loses nothing: the next one carries it.
func (d *Daemon) push(ctx context.Context) {
	p := d.pushConfig()
	if p.URL.URL == nil {
		return
	}
	opts := &metrics.PushOptions{Method: http.MethodPost}
	for k, v := range p.Headers {
		opts.Headers = append(opts.Headers, k+": "+v)
	}
	if auth, err := config.Secret(p.AuthorizationEnv, p.AuthorizationFile, d.getenv); err != nil {
		d.Log.Error("push: authorization", "err", err)
	} else if auth != "" {
		opts.Headers = append(opts.Headers, "Authorization: "+auth)
	}
	pctx, cancel := context.WithTimeout(ctx, p.Timeout.Duration)
	defer cancel()
	err := d.Metrics.Set.PushMetrics(pctx, p.URL.String(), opts)
	if err == nil && pctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("push to %s timed out after %s", p.URL.Redacted(), p.Timeout.Duration)
	}
	if err != nil {
		// The library quotes the URL; user info never reaches a log line
		// or /healthz (a query string is refused at load time).
		err = errors.New(strings.NewReplacer(p.URL.String(), p.URL.Redacted()).Replace(err.Error()))
	}
	d.pushMu.Lock()
	d.lastPushAt = time.Now()
	if err != nil {
		d.lastPushErr = err.Error()
	} else {
		d.lastPushErr = ""
	}
	d.pushMu.Unlock()
	if err != nil {
		d.Metrics.PushErrors.Inc()
		d.Log.Warn("push failed; the next push carries everything", "err", err)
	}
}

// Handler serves /metrics (the same set as the push) and /healthz.
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		d.Metrics.Set.WritePrometheus(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		d.pushMu.Lock()
		h := map[string]any{"status": "ok"}
		if !d.lastPushAt.IsZero() {
			h["last_push"] = d.lastPushAt.UTC().Format(time.RFC3339)
			if d.lastPushErr != "" {
				h["last_push_error"] = d.lastPushErr
			}
		}
		d.pushMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h)
	})
	return mux
}
