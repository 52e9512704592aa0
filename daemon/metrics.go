package daemon

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/probe"
)

// Buckets of the Prometheus-flavoured histograms, in seconds.
var promBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// updater is a histogram of either flavour.
type updater interface{ Update(float64) }

// Metrics turns Records into series of one metrics.Set: the daemon's only
// sink for numbers. Every series carries the base labels (region, host,
// extra labels) and the job's target, sample, dialect and drill; nothing
// from a response ever becomes a label.
type Metrics struct {
	Set  *metrics.Set
	base string // region="..",host="..",extra labels
	prom bool

	mu   sync.Mutex
	jobs map[string]*jobSeries

	PushErrors          *metrics.Counter
	ResultsLogErrors    *metrics.Counter
	CancelledByShutdown *metrics.Counter
}

// jobSeries are the series of one job, built once.
type jobSeries struct {
	labels                           string
	tfc, tfcResumed, headers, first  updater
	gap, tail, close, handshake, rec updater
	stalls, stalledRuns              *metrics.Counter
	dups, missed                     *metrics.Counter
	lastRun                          *metrics.Gauge
	verdictFailed                    *metrics.Gauge
}

// NewMetrics returns the metrics of a daemon with the config's labels and
// histogram flavour.
func NewMetrics(c *config.Config) *Metrics {
	m := &Metrics{Set: metrics.NewSet(), prom: c.Push.Histograms == "prometheus", jobs: map[string]*jobSeries{}}
	m.base = baseLabels(c)
	m.PushErrors = m.Set.NewCounter("streamprobe_push_errors_total{" + m.base + "}")
	m.ResultsLogErrors = m.Set.NewCounter("streamprobe_results_log_errors_total{" + m.base + "}")
	m.CancelledByShutdown = m.Set.NewCounter("streamprobe_runs_cancelled_by_shutdown_total{" + m.base + "}")
	m.SetBudgets(c)
	return m
}

func baseLabels(c *config.Config) string {
	parts := []string{fmt.Sprintf("region=%q", c.Region), fmt.Sprintf("host=%q", c.Host)}
	keys := make([]string, 0, len(c.Labels))
	for k := range c.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, c.Labels[k]))
	}
	return strings.Join(parts, ",")
}

// SetBudgets exports the p95 budgets as gauges.
func (m *Metrics) SetBudgets(c *config.Config) {
	for sample, b := range c.Budgets {
		for metric, d := range map[string]time.Duration{"tfc": b.TFC.Duration, "gap": b.Gap.Duration, "tail": b.Tail.Duration} {
			if d <= 0 {
				continue
			}
			name := fmt.Sprintf(`streamprobe_budget_seconds{%s,sample=%q,metric=%q}`, m.base, sample, metric)
			m.Set.GetOrCreateGauge(name, nil).Set(d.Seconds())
		}
	}
}

func (m *Metrics) histogram(name, labels string) updater {
	full := name + "{" + labels + "}"
	if m.prom {
		return m.Set.GetOrCreatePrometheusHistogramExt(full, promBuckets)
	}
	return m.Set.GetOrCreateHistogram(full)
}

func (m *Metrics) series(target, sample, dialect, drill string) *jobSeries {
	key := target + "\x00" + sample + "\x00" + drill
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.jobs[key]; ok {
		return s
	}
	l := fmt.Sprintf(`%s,target=%q,sample=%q,dialect=%q,drill=%q`, m.base, target, sample, dialect, drill)
	s := &jobSeries{
		labels:      l,
		tfc:         m.histogram("streamprobe_tfc_seconds", l+`,resumed="false"`),
		tfcResumed:  m.histogram("streamprobe_tfc_seconds", l+`,resumed="true"`),
		headers:     m.histogram("streamprobe_headers_seconds", l),
		first:       m.histogram("streamprobe_first_event_seconds", l),
		gap:         m.histogram("streamprobe_gap_seconds", l),
		tail:        m.histogram("streamprobe_tail_seconds", l),
		close:       m.histogram("streamprobe_close_seconds", l),
		handshake:   m.histogram("streamprobe_resume_handshake_seconds", l),
		rec:         m.histogram("streamprobe_reconnect_seconds", l),
		stalls:      m.Set.GetOrCreateCounter("streamprobe_stalls_total{" + l + "}"),
		stalledRuns: m.Set.GetOrCreateCounter("streamprobe_stalled_runs_total{" + l + "}"),
		dups:        m.Set.GetOrCreateCounter("streamprobe_resume_duplicates_total{" + l + "}"),
		missed:      m.Set.GetOrCreateCounter("streamprobe_resume_missed_total{" + l + "}"),
		lastRun:     m.Set.GetOrCreateGauge("streamprobe_last_run_timestamp_seconds{"+l+"}", nil),
	}
	if drill != probe.DrillNone {
		s.verdictFailed = m.Set.GetOrCreateGauge("streamprobe_resume_last_verdict_failed{"+l+"}", nil)
	}
	for _, o := range []probe.Outcome{probe.Success, probe.ClientCancelled, probe.UpstreamError, probe.Timeout, probe.ProtocolError} {
		// Every outcome exists from the first run on, so rate() and
		// increase() see a counter start at 0, not appear at 1.
		m.Set.GetOrCreateCounter(fmt.Sprintf(`streamprobe_runs_total{%s,outcome=%q}`, l, o))
	}
	m.jobs[key] = s
	return s
}

func sec(ms *float64) (float64, bool) {
	if ms == nil {
		return 0, false
	}
	return *ms / 1000, true
}

// Observe adds one record. Timings enter the histograms only for a run
// that ended as its sample intends (probe.Record.Intended): a failed run is
// counted by outcome, and its partial times stay out. Every resume verdict
// is counted with failed="true" or "false" from probe.Verdict.Failed, the
// one list of failing verdicts that the alert rules select on.
func (m *Metrics) Observe(r probe.Record) {
	s := m.series(r.Target, r.Sample, r.Dialect, r.Drill)
	m.Set.GetOrCreateCounter(fmt.Sprintf(`streamprobe_runs_total{%s,outcome=%q}`, s.labels, r.Outcome)).Inc()
	s.lastRun.Set(float64(time.Now().UnixNano()) / 1e9)
	if s.verdictFailed != nil && r.Verdict == "" {
		// The drill failed before it could judge (a 5xx, a timeout): it
		// is not a pass.
		s.verdictFailed.Set(1)
	}
	if r.Verdict != "" {
		failed := r.Verdict.Failed()
		m.Set.GetOrCreateCounter(fmt.Sprintf(`streamprobe_resume_checks_total{%s,verdict=%q,failed="%t"}`, s.labels, r.Verdict, failed)).Inc()
		if s.verdictFailed != nil {
			s.verdictFailed.Set(0)
			if failed {
				s.verdictFailed.Set(1)
			}
		}
		s.dups.Add(r.Duplicates)
		s.missed.Add(r.Missed)
	}
	if !r.Intended() {
		return
	}
	if v, ok := sec(r.TFCMs); ok {
		if r.Resumed {
			s.tfcResumed.Update(v)
		} else {
			s.tfc.Update(v)
		}
	}
	obs := func(u updater, ms *float64) {
		if v, ok := sec(ms); ok {
			u.Update(v)
		}
	}
	obs(s.headers, r.HeadersMs)
	obs(s.first, r.FirstEventMs)
	obs(s.tail, r.TailMs)
	obs(s.close, r.CloseMs)
	obs(s.handshake, r.ResumeHandshakeMs)
	obs(s.rec, r.ReconnectMs)
	for _, g := range r.Gaps.Values {
		s.gap.Update(g / 1000)
	}
	if r.Stalls > 0 {
		s.stalls.Add(r.Stalls)
		s.stalledRuns.Inc()
	}
}

// Skipped is the counter of runs of job skipped because the target asked
// to wait (Retry-After on a 429 or 503).
func (m *Metrics) Skipped(j Job) *metrics.Counter {
	drill := j.Drill.Name
	if drill == "" {
		drill = probe.DrillNone
	}
	s := m.series(j.Target.Name, j.Sample.Name, j.Target.Dialect, drill)
	return m.Set.GetOrCreateCounter("streamprobe_runs_skipped_total{" + s.labels + `,reason="retry_after"}`)
}
