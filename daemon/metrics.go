package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/probe"
)

// Buckets of the Prometheus-flavoured histograms, in seconds.
var promBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// updater is a histogram of either flavour.
type updater interface{ Update(float64) }

// Metrics turns Records into series of one metrics.Set: the daemon's only
// sink for numbers. Every series carries the base labels (region, host,
// extra labels) and the job's target, sample, dialect and drill; nothing
// from a response ever becomes a label. The Set lives as long as the
// daemon; Reconfigure applies a reloaded config to it.
type Metrics struct {
	Set *metrics.Set

	mu   sync.Mutex
	base string // region="..",host="..",extra labels
	// targetBase is the base labels of a target with labels of its own
	// ([target.labels] merged over [labels]), by target name.
	targetBase map[string]string
	prom       bool
	fromURL    bool // the config comes from a URL: the fetch series exist
	jobs       map[string]*jobSeries
	gone       map[string]bool             // jobs removed by a reload: their late runs add no series
	budgets    map[string]bool             // names of the budget gauges
	budget     config.BudgetMap            // the global budgets in force
	own        map[string]config.BudgetMap // a target's budgets, where it has its own tables
	slos       map[string]bool             // names of the SLO gauges
	host       hostSeries
	// push is where the series go: the push settings of the config
	// whose labels they carry, changed with them (Reconfigure) and taken
	// with them (forPush).
	push config.Push
}

// hostSeries are the series with the base labels only.
type hostSeries struct {
	pushErrors, resultsLogErrors, resultsLogDropped *metrics.Counter
	cancelledByShutdown                             *metrics.Counter
	due, delayed                                    *metrics.Counter
	lag                                             updater
	reloadOK, reloadAt                              *metrics.Gauge
	buildInfo                                       *metrics.Gauge
	// A config from a URL only (nil otherwise): its fetches.
	fetchOK, fetchAt *metrics.Gauge
	fetchErrors      *metrics.Counter
}

// jobSeries are the series of one job, built once.
type jobSeries struct {
	labels                           string
	names                            map[string]bool // every series of the job, to unregister it
	tfc, tfcResumed, headers, first  updater
	gap, tail, close, handshake, rec updater
	stalls, stalledRuns              *metrics.Counter
	dups, missed                     *metrics.Counter
	lastRun                          *metrics.Gauge
	verdictFailed                    *metrics.Gauge
	failed                           *metrics.Counter
	deadline                         *metrics.Gauge
	overTFC, overGap, overTail       *metrics.Counter

	job                   string    // target/sample or target/drill
	deadlineAt, lastRunAt time.Time // for /healthz
}

// NewMetrics returns the metrics of a daemon with the config's labels and
// histogram flavour.
func NewMetrics(c *config.Config) *Metrics {
	m := &Metrics{Set: metrics.NewSet()}
	m.Reconfigure(c, nil)
	return m
}

// Reconfigure applies c: when the base labels (region, host, [labels]) or
// the histogram flavour changed, every series is dropped and made again
// with the new ones; otherwise the series of jobs no longer in jobs are
// unregistered (so a removed target stops being exported), and the
// series of every job in jobs exist from 0. The budget gauges follow c.
// jobs nil keeps the job series as they are.
func (m *Metrics) Reconfigure(c *config.Config, jobs []jobs.Job) {
	m.mu.Lock()
	defer m.mu.Unlock()
	base, prom, own := baseLabels(c), c.Push.Histograms == "prometheus", targetBases(c)
	if m.jobs == nil || base != m.base || prom != m.prom || !maps.Equal(own, m.targetBase) {
		m.remakeLocked(base, prom)
	}
	m.targetBase = own
	if jobs != nil {
		keep := map[string]bool{}
		for _, j := range jobs {
			keep[seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))] = true
		}
		for key, s := range m.jobs {
			if !keep[key] {
				for name := range s.names {
					m.Set.UnregisterMetric(name)
				}
				delete(m.jobs, key)
				m.gone[key] = true
			}
		}
		for _, j := range jobs {
			delete(m.gone, seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j)))
			s := m.seriesLocked(j.Target.Name, j.Sample.Name, j.Target.Dialect, jobDrill(j))
			for _, reason := range []string{"retry_after", "overlap", "no_slot"} {
				s.counter(m.Set, metricnames.RunsSkipped+`{`+s.labels+`,reason="`+reason+`"}`)
			}
			// A job new or rescheduled by this config must run by its
			// first deadline.
			s.job = j.Name
			s.setDeadline(j.Deadline(time.Now()))
		}
	}
	m.setBudgetsLocked(c)
	m.setSLOsLocked(c)
	m.push = c.Push
}

// forPush writes the set in the Prometheus text format to w and returns
// the push settings to send it with, under the one lock Reconfigure holds:
// a push racing a reload sends the series of one config to that config's
// endpoint, never the old labels (or a removed job) to the new URL nor the
// new labels to the old one. Without a push URL it writes nothing.
func (m *Metrics) forPush(w io.Writer) config.Push {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.push.URL.URL != nil {
		m.Set.WritePrometheus(w)
	}
	return m.push
}

// WriteExposition writes the set to w as /metrics serves it: the
// Prometheus text format with a # HELP and a # TYPE line before each
// family (metricnames.Families). The push sends the set without them.
// A vmrange histogram is no Prometheus histogram (its buckets have no
// le): its _bucket, _sum and _count are three untyped families, each with
// its lines together.
func (m *Metrics) WriteExposition(w io.Writer) {
	var b bytes.Buffer
	m.mu.Lock()
	m.Set.WritePrometheus(&b)
	prom := m.prom
	m.mu.Unlock()
	out := bufio.NewWriter(w)
	e := exposition{w: out, prom: prom}
	for line := range bytes.Lines(b.Bytes()) {
		e.line(line)
	}
	e.flush()
	out.Flush()
}

// exposition writes an exposition's lines with their families' metadata.
type exposition struct {
	w    io.Writer
	prom bool // histograms with le
	fam  string
	help string
	// parts are a vmrange histogram's lines held until its family ends,
	// by suffix (_bucket, _sum, _count).
	parts [3]bytes.Buffer
}

var histogramParts = [3]string{"_bucket", "_sum", "_count"}

func (e *exposition) line(line []byte) {
	name, f, ok := familyOf(sampleName(line))
	if !ok {
		e.flush()
		e.w.Write(line)
		return
	}
	if name != e.fam {
		e.flush()
		e.fam, e.help = name, f.Help
		if f.Type != "histogram" || e.prom {
			fmt.Fprintf(e.w, "# HELP %s %s\n# TYPE %s %s\n", name, f.Help, name, f.Type)
		}
	}
	if f.Type != "histogram" || e.prom {
		e.w.Write(line)
		return
	}
	for i, suffix := range histogramParts {
		if strings.HasPrefix(string(line), name+suffix) {
			e.parts[i].Write(line)
		}
	}
}

// flush writes a vmrange histogram's lines held, by part.
func (e *exposition) flush() {
	for i, suffix := range histogramParts {
		if e.parts[i].Len() == 0 {
			continue
		}
		fmt.Fprintf(e.w, "# HELP %s%s %s (VictoriaMetrics vmrange histogram: %s)\n# TYPE %s%s untyped\n", e.fam, suffix, e.help, suffix[1:], e.fam, suffix)
		e.w.Write(e.parts[i].Bytes())
		e.parts[i].Reset()
	}
	e.fam = ""
}

// sampleName is the metric name of an exposition's sample line.
func sampleName(line []byte) string {
	if i := bytes.IndexAny(line, "{ "); i >= 0 {
		return string(line[:i])
	}
	return ""
}

// familyOf is the family a sample's name belongs to (a histogram's
// _bucket, _sum and _count belong to it), its metadata, and false for a
// name of no known family.
func familyOf(name string) (string, metricnames.Family, bool) {
	if f, ok := metricnames.Families[name]; ok && f.Type != "histogram" {
		return name, f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, ok := metricnames.Families[base]; ok && f.Type == "histogram" {
				return base, f, true
			}
		}
	}
	return name, metricnames.Family{}, false
}

// remakeLocked drops every series and makes the host series again with
// the base labels base and the histogram flavour prom; the job series are
// made again by Reconfigure (the jobs it keeps) or on first use.
func (m *Metrics) remakeLocked(base string, prom bool) {
	// Every job of the old series is gone until Reconfigure finds it in
	// the new jobs: a run of a removed job still in flight from before
	// the reload, or one its retiring scheduler fires, must not make the
	// job's series again, now with the new labels.
	gone := map[string]bool{}
	for key := range m.gone {
		gone[key] = true
	}
	for key := range m.jobs {
		gone[key] = true
	}
	m.Set.UnregisterAllMetrics()
	m.base, m.prom = base, prom
	m.jobs, m.gone, m.budgets, m.slos = map[string]*jobSeries{}, gone, map[string]bool{}, map[string]bool{}
	b := "{" + m.base + "}"
	prev := m.host
	m.host = hostSeries{
		pushErrors:          m.Set.NewCounter(metricnames.PushErrors + b),
		resultsLogErrors:    m.Set.NewCounter(metricnames.ResultsLogErrors + b),
		resultsLogDropped:   m.Set.NewCounter(metricnames.ResultsLogDropped + b),
		cancelledByShutdown: m.Set.NewCounter(metricnames.CancelledByShutdown + b),
		due:                 m.Set.NewCounter(metricnames.RunsDue + b),
		delayed:             m.Set.NewCounter(metricnames.RunsDelayed + b),
		lag:                 m.histogram(metricnames.ScheduleLag, m.base),
		reloadOK:            m.Set.NewGauge(metricnames.ReloadSuccessful+b, nil),
		reloadAt:            m.Set.NewGauge(metricnames.ReloadTimestamp+b, nil),
		buildInfo:           m.Set.NewGauge(fmt.Sprintf("%s{%s,version=%q,goversion=%q}", metricnames.BuildInfo, m.base, Version(), runtime.Version()), nil),
	}
	m.host.buildInfo.Set(1)
	if m.fromURL {
		m.makeFetchSeriesLocked(prev)
	}
	if prev.reloadOK != nil {
		// The last reload's outcome and time are the daemon's, not
		// the labels': the new series start from them, so that no
		// scrape or push between here and Reloaded says 0.
		m.host.reloadOK.Set(prev.reloadOK.Get())
		m.host.reloadAt.Set(prev.reloadAt.Get())
	}
}

// makeFetchSeriesLocked makes the series of a config's fetches, from
// prev's values (the fetches are the daemon's, not the labels').
func (m *Metrics) makeFetchSeriesLocked(prev hostSeries) {
	b := "{" + m.base + "}"
	m.host.fetchOK = m.Set.NewGauge(metricnames.ConfigFetchSuccessful+b, nil)
	m.host.fetchAt = m.Set.NewGauge(metricnames.ConfigFetchTimestamp+b, nil)
	m.host.fetchErrors = m.Set.NewCounter(metricnames.ConfigFetchErrors + b)
	if prev.fetchOK != nil {
		m.host.fetchOK.Set(prev.fetchOK.Get())
		m.host.fetchAt.Set(prev.fetchAt.Get())
		m.host.fetchErrors.Set(prev.fetchErrors.Get())
	}
}

// ConfigFromURL makes the series of a config's fetches.
func (m *Metrics) ConfigFromURL() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.fromURL {
		m.fromURL = true
		m.makeFetchSeriesLocked(hostSeries{})
	}
}

// ConfigFetched records a fetch of the config's URL.
func (m *Metrics) ConfigFetched(ok bool, at time.Time) {
	h := m.hostSeries()
	if h.fetchOK == nil {
		return
	}
	if !ok {
		h.fetchOK.Set(0)
		h.fetchErrors.Inc()
		return
	}
	h.fetchOK.Set(1)
	h.fetchAt.Set(float64(at.UnixNano()) / 1e9)
}

func seriesKey(target, sample, drill string) string { return target + "\x00" + sample + "\x00" + drill }

func jobDrill(j jobs.Job) string {
	if j.Drill.Name == "" {
		return probe.DrillNone
	}
	return j.Drill.Name
}

// counter returns the job's counter name, made on first use.
func (s *jobSeries) counter(set *metrics.Set, name string) *metrics.Counter {
	s.names[name] = true
	return set.GetOrCreateCounter(name)
}

func (s *jobSeries) gauge(set *metrics.Set, name string) *metrics.Gauge {
	s.names[name] = true
	return set.GetOrCreateGauge(name, nil)
}

func baseLabels(c *config.Config) string { return labelsText(c.Region, c.Host, c.Labels) }

// targetBases is the base labels of each target that has labels of its
// own: region, host and its labels merged over the config's.
func targetBases(c *config.Config) map[string]string {
	out := map[string]string{}
	for i, t := range c.Targets {
		if len(t.Labels) > 0 {
			out[t.Name] = labelsText(c.Region, c.Host, c.LabelsFor(i))
		}
	}
	return out
}

func labelsText(region, host string, labels map[string]string) string {
	parts := []string{fmt.Sprintf("region=%q", region), fmt.Sprintf("host=%q", host)}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return strings.Join(parts, ",")
}

// setBudgetsLocked exports the p95 budgets as gauges: the global ones
// with the base labels and sample, and, for a target with budget tables
// of its own ([target.budget.<sample>]), its budgets in force (merged over
// the global ones) with its target label too. Budgets no longer in c are
// unregistered. m.mu is held.
func (m *Metrics) setBudgetsLocked(c *config.Config) {
	m.budget, m.own = c.Budgets, map[string]config.BudgetMap{}
	now := map[string]bool{}
	set := func(labels string, bm config.BudgetMap) {
		for sample, b := range bm {
			for metric, d := range map[string]time.Duration{"tfc": b.TFC.Duration, "gap": b.Gap.Duration, "tail": b.Tail.Duration} {
				if d <= 0 {
					continue
				}
				name := fmt.Sprintf(`%s{%s,sample=%q,metric=%q}`, metricnames.Budget, labels, sample, metric)
				m.Set.GetOrCreateGauge(name, nil).Set(d.Seconds())
				now[name] = true
			}
		}
	}
	set(m.base, c.Budgets)
	for i, t := range c.Targets {
		if len(t.Budgets) > 0 {
			m.own[t.Name] = c.BudgetsFor(i)
			set(fmt.Sprintf(`%s,target=%q`, m.base, t.Name), m.own[t.Name])
		}
	}
	for name := range m.budgets {
		if !now[name] {
			m.Set.UnregisterMetric(name)
		}
	}
	m.budgets = now
}

// setSLOsLocked exports the SLO objectives as gauges, and the regions the
// fleet alert needs when there is an objective; those no longer in c are
// unregistered. m.mu is held.
func (m *Metrics) setSLOsLocked(c *config.Config) {
	now := map[string]bool{}
	for sample, o := range c.SLOs {
		for slo, v := range o.Objectives() {
			name := fmt.Sprintf(`%s{%s,sample=%q,slo=%q}`, metricnames.SLOObjective, m.base, sample, slo)
			m.Set.GetOrCreateGauge(name, nil).Set(v)
			now[name] = true
		}
	}
	if len(now) > 0 {
		name := metricnames.SLOFleetRegions + "{" + m.base + "}"
		m.Set.GetOrCreateGauge(name, nil).Set(float64(c.SLOFleetRegions))
		now[name] = true
	}
	for name := range m.slos {
		if !now[name] {
			m.Set.UnregisterMetric(name)
		}
	}
	m.slos = now
}

// The base-labelled counters and gauges, current for the config in force.

// PushFailed counts a failed push.
func (m *Metrics) PushFailed() { m.hostSeries().pushErrors.Inc() }

// ResultsLogFailed counts a failed results log write.
func (m *Metrics) ResultsLogFailed() { m.hostSeries().resultsLogErrors.Inc() }

// ResultsLogDropped counts a record dropped because the results log's
// queue was full.
func (m *Metrics) ResultsLogDropped() { m.hostSeries().resultsLogDropped.Inc() }

// CancelledByShutdown counts a run cut by the shutdown.
func (m *Metrics) CancelledByShutdown() { m.hostSeries().cancelledByShutdown.Inc() }

// Due counts a run that came due on the schedule.
func (m *Metrics) Due() { m.hostSeries().due.Inc() }

// Started records a run that got its slot lag after it came due; delayed
// says it found every slot busy and waited.
func (m *Metrics) Started(lag time.Duration, delayed bool) {
	h := m.hostSeries()
	if delayed {
		h.delayed.Inc()
	}
	h.lag.Update(lag.Seconds())
}

// Reloaded records a reload's outcome, as blackbox_exporter does.
func (m *Metrics) Reloaded(ok bool, at time.Time) {
	h := m.hostSeries()
	if !ok {
		h.reloadOK.Set(0)
		return
	}
	h.reloadOK.Set(1)
	h.reloadAt.Set(float64(at.UnixNano()) / 1e9)
}

func (m *Metrics) hostSeries() hostSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.host
}

func (m *Metrics) histogram(name, labels string) updater {
	full := name + "{" + labels + "}"
	if m.prom {
		return m.Set.GetOrCreatePrometheusHistogramExt(full, promBuckets)
	}
	return m.Set.GetOrCreateHistogram(full)
}

func (m *Metrics) seriesLocked(target, sample, dialect, drill string) *jobSeries {
	key := seriesKey(target, sample, drill)
	if s, ok := m.jobs[key]; ok {
		return s
	}
	base := m.base
	if own, ok := m.targetBase[target]; ok {
		base = own
	}
	l := fmt.Sprintf(`%s,target=%q,sample=%q,dialect=%q,drill=%q`, base, target, sample, dialect, drill)
	s := &jobSeries{labels: l, names: map[string]bool{}}
	h := func(name, labels string) updater {
		s.names[name+"{"+labels+"}"] = true
		return m.histogram(name, labels)
	}
	s.tfc = h(metricnames.TFC, l+`,resumed="false"`)
	s.tfcResumed = h(metricnames.TFC, l+`,resumed="true"`)
	s.headers = h(metricnames.Headers, l)
	s.first = h(metricnames.FirstEvent, l)
	s.gap = h(metricnames.Gap, l)
	s.tail = h(metricnames.Tail, l)
	s.close = h(metricnames.Close, l)
	s.handshake = h(metricnames.ResumeHandshake, l)
	s.rec = h(metricnames.Reconnect, l)
	s.stalls = s.counter(m.Set, metricnames.Stalls+"{"+l+"}")
	s.stalledRuns = s.counter(m.Set, metricnames.StalledRuns+"{"+l+"}")
	s.dups = s.counter(m.Set, metricnames.ResumeDuplicates+"{"+l+"}")
	s.missed = s.counter(m.Set, metricnames.ResumeMissed+"{"+l+"}")
	s.lastRun = s.gauge(m.Set, metricnames.LastRun+"{"+l+"}")
	s.failed = s.counter(m.Set, metricnames.RunsFailed+"{"+l+"}")
	s.overTFC = s.counter(m.Set, metricnames.OverBudget+"{"+l+`,metric="tfc"}`)
	s.overGap = s.counter(m.Set, metricnames.OverBudget+"{"+l+`,metric="gap"}`)
	s.overTail = s.counter(m.Set, metricnames.OverBudget+"{"+l+`,metric="tail"}`)
	s.deadline = s.gauge(m.Set, metricnames.RunDeadline+"{"+l+"}")
	s.job = target + "/" + sample
	if drill != probe.DrillNone {
		s.job = target + "/" + drill
	}
	if drill != probe.DrillNone {
		s.verdictFailed = s.gauge(m.Set, metricnames.ResumeLastFailed+"{"+l+"}")
	}
	for _, o := range probe.Outcomes {
		// Every outcome exists from the first run on, so rate() and
		// increase() see a counter start at 0, not appear at 1.
		s.counter(m.Set, fmt.Sprintf(`%s{%s,outcome=%q}`, metricnames.Runs, l, o))
	}
	m.jobs[key] = s
	return s
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone[seriesKey(r.Target, r.Sample, r.Drill)] {
		return
	}
	s := m.seriesLocked(r.Target, r.Sample, r.Dialect, r.Drill)
	s.counter(m.Set, fmt.Sprintf(`%s{%s,outcome=%q}`, metricnames.Runs, s.labels, r.Outcome)).Inc()
	now := time.Now()
	s.lastRun.Set(float64(now.UnixNano()) / 1e9)
	s.lastRunAt = now
	// Made at the first run: before it, no run passed or failed.
	s.gauge(m.Set, metricnames.LastSuccess+"{"+s.labels+"}").Set(b2f(r.Passed()))
	if !r.Intended() {
		s.failed.Inc()
	}
	if s.verdictFailed != nil && r.Verdict == "" {
		// The drill failed before it could judge (a 5xx, a timeout): it
		// is not a pass.
		s.verdictFailed.Set(1)
	}
	if r.Verdict != "" {
		failed := r.Verdict.Failed()
		s.counter(m.Set, fmt.Sprintf(`%s{%s,verdict=%q,failed="%t"}`, metricnames.ResumeChecks, s.labels, r.Verdict, failed)).Inc()
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
	b := m.budget[r.Sample]
	if own, ok := m.own[r.Target]; ok {
		b = own[r.Sample]
	}
	over := func(c *metrics.Counter, ms float64, budget config.Duration) {
		if budget.Duration > 0 && ms > float64(budget.Duration)/1e6 {
			c.Inc()
		}
	}
	if v, ok := sec(r.TFCMs); ok {
		if r.Resumed {
			s.tfcResumed.Update(v)
		} else {
			s.tfc.Update(v)
			over(s.overTFC, *r.TFCMs, b.TFC)
		}
	}
	if r.TailMs != nil {
		over(s.overTail, *r.TailMs, b.Tail)
	}
	for _, g := range r.Gaps.Every() {
		over(s.overGap, g, b.Gap)
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
	for _, g := range r.Gaps.Every() {
		s.gap.Update(g / 1000)
	}
	if r.Stalls > 0 {
		s.stalls.Add(r.Stalls)
		if !r.Resumed {
			// Of the runs check's stall share counts: the TFC histogram's
			// (resumed="false"), so stalled / that count is check's share.
			s.stalledRuns.Inc()
		}
	}
}

func (s *jobSeries) setDeadline(t time.Time) {
	s.deadlineAt = t
	s.deadline.Set(float64(t.UnixNano()) / 1e9)
}

// Scheduled moves the job's deadline on from at, when its task ran:
// whether it made a run or skipped one (Retry-After, overlap), the
// scheduler is alive.
func (m *Metrics) Scheduled(j jobs.Job, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.jobs[seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))]; ok {
		s.setDeadline(j.Deadline(at))
	}
}

// Skipped is the counter of runs of job skipped because the target asked
// to wait (Retry-After on a 429 or 503).
func (m *Metrics) Skipped(j jobs.Job) *metrics.Counter { return m.SkippedFor(j, "retry_after") }

// SkippedFor is the counter of runs of job not made for reason:
// retry_after, overlap (the job's previous run was still running when
// this one came due) or no_slot (the previous run was still waiting for a
// free slot: the host is saturated).
func (m *Metrics) SkippedFor(j jobs.Job, reason string) *metrics.Counter {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone[seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))] {
		return new(metrics.Counter) // a removed job's: counted nowhere
	}
	s := m.seriesLocked(j.Target.Name, j.Sample.Name, j.Target.Dialect, jobDrill(j))
	return s.counter(m.Set, metricnames.RunsSkipped+"{"+s.labels+`,reason="`+reason+`"}`)
}
