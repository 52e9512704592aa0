package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/probe"
)

// retryAfter is, by job, when it may run again: its target answered 429
// or 503 with Retry-After.
type retryAfter struct {
	mu    sync.Mutex           // guards until
	until map[string]time.Time // job name -> no run before
}

// hold keeps job from running until t.
func (r *retryAfter) hold(job string, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.until == nil {
		r.until = map[string]time.Time{}
	}
	r.until[job] = t
}

// notBefore reports whether job must not run at now, and until when.
func (r *retryAfter) notBefore(job string, now time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	until, ok := r.until[job]
	if ok && now.Before(until) {
		return until, true
	}
	delete(r.until, job)
	return time.Time{}, false
}

// runJob is a job's task: it runs j now, within the host's concurrency
// bound, unless a run of the same job (of this config or of one before a
// reload) is not done yet, or its target asked to wait (Retry-After):
// then this one is skipped and counted. delay, when set, is a random wait
// before the run (jitter).
func (d *Daemon) runJob(j jobs.Job, delay func() time.Duration) {
	if !d.life.begin() {
		// A run of a scheduler that is stopping must not start after
		// Run has waited for the runs in flight.
		return
	}
	defer d.life.end()
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
	if delay != nil {
		wait := delay()
		if !d.waits.during(j.Name, time.Now().Add(wait), func() bool { return d.sleep(wait) }) {
			return
		}
	}
	// Decided before a slot is taken or the lag recorded: a skipped run
	// holds no slot another job could use, and is no lag.
	if until, ok := d.backoff.notBefore(j.Name, time.Now()); ok {
		d.Metrics.Skipped(j).Inc()
		d.Log.Debug("run skipped: the target asked to wait (Retry-After)", "job", j.Name, "until", until.UTC().Format(time.RFC3339))
		return
	}
	if !d.takeSlot(j.Name) {
		return
	}
	defer d.slots.release()
	ctx := d.life.runCtx
	res := j.Run(ctx, d.Client)
	d.record(res.Record, ctx.Err() != nil)
	if ctx.Err() == nil {
		d.status.observe(res)
	}
	r := res.Record
	if wait := probe.RetryAfterWait(r.RetryAfterMs); wait > 0 && (r.HTTPStatus == http.StatusTooManyRequests || r.HTTPStatus == http.StatusServiceUnavailable) {
		d.backoff.hold(j.Name, time.Now().Add(wait))
	}
}

// sleep waits for wait on the real clock; false when the daemon began to
// stop first.
func (d *Daemon) sleep(wait time.Duration) bool {
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.life.stopCtx.Done():
		return false
	}
}

// takeSlot takes a concurrency slot for job, waiting for one when all are
// held (the job is marked waiting meanwhile, and the run counted as
// delayed), and records the schedule lag: from when it came due to when
// it got its slot. False, holding no slot, when the daemon began to stop.
func (d *Daemon) takeSlot(job string) bool {
	due, delayed := time.Now(), false
	if !d.slots.tryAcquire() {
		delayed = true
		d.busy.set(job, jobWaiting)
		if !d.slots.acquire(d.life.stopCtx) {
			return false
		}
		d.busy.set(job, jobRunning)
	}
	if d.life.stopCtx.Err() != nil {
		d.slots.release() // the shutdown began while this run waited
		return false
	}
	d.Metrics.Started(time.Since(due), delayed)
	return true
}

// record sends a finished run to the sinks: the metrics, the daemon's
// log, the results log.
func (d *Daemon) record(r probe.Record, shutdown bool) {
	if shutdown {
		r.Error = "cancelled by shutdown"
		d.Metrics.CancelledByShutdown()
		d.Log.Info("run cancelled by shutdown", "target", r.Target, "sample", r.Sample, "drill", r.Drill, "request_id", r.RequestID)
	} else {
		d.Metrics.Observe(r)
		d.otlpObserve(r)
		d.logRun(r)
	}
	if d.results.enabled.Load() {
		// Queued, never written here: a slow disk does not hold the run.
		b, _ := json.Marshal(r)
		d.results.add(append(b, '\n'))
	}
}

// logRun writes a run's line in the daemon's log: info when it passed,
// a warning with its error otherwise.
func (d *Daemon) logRun(r probe.Record) {
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
		d.Log.Error("results log queue full (the disk is not keeping up): records dropped, counted in "+metricnames.ResultsLogDropped, "queue", resultsQueueLen)
	}
}
