package daemon

import (
	"fmt"
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/version"
)

// DeadlineGrace: see jobs.DeadlineGrace.
const DeadlineGrace = jobs.DeadlineGrace

// ResultsDropWindow is how long a record dropped from the results log (no
// room in its queue: the disk does not keep up) keeps /healthz unhealthy.
const ResultsDropWindow = time.Minute

// PushFailWindow is how many push intervals of failed pushes, with no
// success, make /healthz unhealthy.
const PushFailWindow = 5

// Version is the binary's version for /healthz and streamprobe_build_info:
// internal/version's, the one --version prints.
func Version() string { return version.String() }

// health is what /healthz answers: the reasons the daemon is unhealthy
// (none: healthy), and the push times.
type health struct {
	Status          string   `json:"status"` // ok or unhealthy
	Reasons         []string `json:"reasons,omitempty"`
	Version         string   `json:"version"`
	LastPush        string   `json:"last_push,omitempty"`
	LastPushSuccess string   `json:"last_push_success,omitempty"`
	LastPushError   string   `json:"last_push_error,omitempty"`
	// The config's URL and its fetches, for a config from a URL.
	ConfigURL              string `json:"config_url,omitempty"`
	ConfigLastFetch        string `json:"config_last_fetch,omitempty"`
	ConfigLastFetchSuccess string `json:"config_last_fetch_success,omitempty"`
	ConfigLastFetchError   string `json:"config_last_fetch_error,omitempty"`
}

// health judges the daemon at now: unhealthy when pushes have failed for
// PushFailWindow push intervals with no success in between (counted from
// the start when none ever succeeded), when the results log's last write
// failed or a record was dropped from it within ResultsDropWindow, when
// the last reload was refused, or when a job is past its deadline.
func (d *Daemon) health(now time.Time) health {
	h := health{Status: "ok", Version: Version()}
	p := d.pushConfig()
	lastAt, lastErr, lastOK := d.pushed.last()
	if !lastAt.IsZero() {
		h.LastPush = lastAt.UTC().Format(time.RFC3339)
		h.LastPushError = lastErr
	}
	if !lastOK.IsZero() {
		h.LastPushSuccess = lastOK.UTC().Format(time.RFC3339)
	}
	since := lastOK
	if since.IsZero() {
		since = d.life.since()
	}
	if p.URL.URL != nil && lastErr != "" && !since.IsZero() {
		if window := PushFailWindow * p.Interval.Duration; now.Sub(since) > window {
			h.Reasons = append(h.Reasons, fmt.Sprintf("pushes have failed for %s (over %d push intervals, %s): %s",
				now.Sub(since).Round(time.Second), PushFailWindow, window, lastErr))
		}
	}
	if d.results != nil {
		if failing, since, why := d.results.failing(); failing {
			h.Reasons = append(h.Reasons, fmt.Sprintf("results log writes fail since %s, the records go to the metrics only: %s", since.UTC().Format(time.RFC3339), why))
		}
		if at := d.results.dropped(); !at.IsZero() && now.Sub(at) < ResultsDropWindow {
			h.Reasons = append(h.Reasons, fmt.Sprintf("results log records dropped at %s: the disk is not keeping up", at.UTC().Format(time.RFC3339)))
		}
	}
	d.sourceHealth(&h, now)
	if refused := d.reload.get(); refused != "" {
		h.Reasons = append(h.Reasons, "the last reload was refused, the old config keeps running: "+refused)
	}
	for _, o := range d.Metrics.overdue(now) {
		h.Reasons = append(h.Reasons, fmt.Sprintf("job %s has not run since %s (due by %s)", o.job, o.since, o.deadline.UTC().Format(time.RFC3339)))
	}
	if len(h.Reasons) > 0 {
		h.Status = "unhealthy"
	}
	return h
}

// overdueJob is a job past its deadline.
type overdueJob struct {
	job, since string
	deadline   time.Time
}

// overdue returns the jobs past their deadline at now, by name.
func (m *Metrics) overdue(now time.Time) []overdueJob {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []overdueJob
	for _, s := range m.jobs {
		if s.deadlineAt.IsZero() || !now.After(s.deadlineAt) {
			continue
		}
		since := "the start"
		if !s.lastRunAt.IsZero() {
			since = s.lastRunAt.UTC().Format(time.RFC3339)
		}
		out = append(out, overdueJob{job: s.job, since: since, deadline: s.deadlineAt})
	}
	slices.SortFunc(out, func(a, b overdueJob) int {
		if a.job < b.job {
			return -1
		}
		if a.job > b.job {
			return 1
		}
		return 0
	})
	return out
}
