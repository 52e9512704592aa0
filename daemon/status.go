package daemon

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
	"github.com/streamprobe/streamprobe/textgate"
)

// statusRuns is how many runs per job the status page keeps, lists and
// judges.
const statusRuns = 10

// statusMaxTicks bounds the timeline drawn for the latest run: a run with
// more chunks is listed without its drawing, so the page stays small.
const statusMaxTicks = 5000

// status is what the page on the listen address's / shows: per job the
// last statusRuns records and the timeline of the latest, and the config
// in force and when it was loaded. Records hold no content and their
// errors are already scrubbed; nothing else from a run is kept.
type status struct {
	mu       sync.Mutex
	cfg      *config.Config
	loadedAt time.Time
	refused  time.Time // the last reload refused, when after loadedAt
	order    []string  // job keys in config order
	jobs     map[string]*jobStatus
}

type jobStatus struct {
	name                           string // the job's name (target/sample or target/drill), its scheduler's
	target, sample, drill, dialect string
	runs                           []probe.Record // oldest first, at most statusRuns
	latest                         *scorecard.Run
	// lastErr is the error of the last run that did not end as its
	// sample intends: the cancel sample's own cancel is no error.
	lastErr, lastErrAt string
}

// configured takes a config that was just applied: the jobs it runs, in
// order; jobs it no longer runs are forgotten, the others keep their runs.
func (s *status) configured(cfg *config.Config, js []jobs.Job, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.loadedAt = cfg, at
	old := s.jobs
	s.jobs, s.order = map[string]*jobStatus{}, nil
	for _, j := range js {
		key := seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))
		st := old[key]
		if st == nil {
			st = &jobStatus{target: j.Target.Name, sample: j.Sample.Name, drill: jobDrill(j)}
		}
		st.name, st.dialect = j.Name, j.Target.Dialect
		s.jobs[key] = st
		s.order = append(s.order, key)
	}
}

// reloadRefused notes a reload that did not apply.
func (s *status) reloadRefused(at time.Time) {
	s.mu.Lock()
	s.refused = at
	s.mu.Unlock()
}

// observe keeps a finished run of a job of the running config.
func (s *status) observe(res probe.Result) {
	r := res.Record
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.jobs[seriesKey(r.Target, r.Sample, r.Drill)]
	if st == nil {
		return // a job a reload removed
	}
	if len(st.runs) == statusRuns {
		st.runs = append(st.runs[:0], st.runs[1:]...)
	}
	st.runs = append(st.runs, r)
	st.latest = nil
	if n := res.Timeline.ChunkCount(); n > 0 && n <= statusMaxTicks {
		run := scorecard.FromResult(res)
		st.latest = &run
	}
	if r.Error != "" && !r.Intended() {
		st.lastErr, st.lastErrAt = r.Error, r.StartedAt
	}
}

// cards are the scorecards check would make of the runs the page holds:
// the same code (scorecard.Cards) on the same config, so a class's
// verdict here is check's on these runs. s.mu must be held.
func (s *status) cards() map[string]*scorecard.Card {
	runs := map[string][]scorecard.Run{}
	for _, key := range s.order {
		st := s.jobs[key]
		for _, r := range st.runs {
			runs[st.target] = append(runs[st.target], scorecard.Run{Record: r})
		}
	}
	out := map[string]*scorecard.Card{}
	if s.cfg == nil {
		return out
	}
	for _, c := range scorecard.Cards(s.cfg, nil, runs) {
		out[c.Target] = c
	}
	return out
}

// pageFacts is what the page says that is not the jobs': the daemon's
// version, uptime and health, the push, and each job's next run.
type pageFacts struct {
	now, started time.Time
	health       health
	push         config.Push
	pushAt       time.Time
	pushErr      string
	next         map[string]time.Time // by job name; zero or absent: unknown
}

// serveStatus writes the status page: one self-contained HTML file.
func (d *Daemon) serveStatus(w http.ResponseWriter, _ *http.Request) {
	f := d.pageFacts()
	var b bytes.Buffer
	if err := statusTemplate.Execute(&b, d.status.view(f)); err != nil {
		d.Log.Error("status page", "err", err)
		http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// pageFacts gathers what the page (and /api/status) says besides the
// jobs, now.
func (d *Daemon) pageFacts() pageFacts {
	now := time.Now()
	f := pageFacts{now: now, started: d.life.since(), health: d.health(now), push: d.pushConfig(), next: d.nextRuns()}
	f.pushAt, f.pushErr, _ = d.pushed.last()
	return f
}

// nextRuns is, by job name, its next run: the end of the wait its task is
// in (a new job's jitter, a cron job's jitter, a first run's start), else
// the next run its scheduler has planned (the gocron job's NextRun); a
// cron job with jitter waits up to the jitter after it.
func (d *Daemon) nextRuns() map[string]time.Time {
	d.cur.mu.Lock()
	plans := make(map[string]*jobPlan, len(d.cur.plans))
	for name, p := range d.cur.plans {
		plans[name] = p
	}
	d.cur.mu.Unlock()
	out := map[string]time.Time{}
	for name, p := range plans {
		if p == nil || p.job == nil {
			continue
		}
		if t, ok := d.waits.until(name); ok {
			out[name] = t
		} else if t, err := p.job.NextRun(); err == nil && !t.IsZero() {
			out[name] = t
		}
	}
	return out
}

//go:embed status.tmpl
var statusTemplateText string

// statusTemplate is the page: every text it shows is escaped by
// html/template, and every text that came from a server passed
// textgate.Scrub first (shown).
var statusTemplate = template.Must(template.New("status").Parse(statusTemplateText))

// statusView is what status.tmpl shows.
type statusView struct {
	CSS                        template.CSS
	Host, Region, File, Loaded string
	Refused                    string
	Version, Uptime, Made      string
	Summary                    string
	AllPass                    bool
	Healthy                    bool
	HealthReasons              []string
	PushDisabled               bool
	PushEvery, PushAt, PushErr string
	Runs                       int
	Overview                   overviewView
	Jobs                       []jobView
}

// jobView is one job's section.
type jobView struct {
	Target, Sample, Drill, Dialect, Title string
	Runs                                  int
	Next                                  string
	NextAt                                time.Time
	// Verdict is the class verdict over the runs held: PASS, FAIL,
	// INCONCLUSIVE or "" (no run yet); Why says why a FAIL or an
	// INCONCLUSIVE is one.
	Verdict            string
	Why                []string
	Budgets            string
	Cells              []cellView
	Latest             string
	LastErr, LastErrAt string
	Rows               []runRow
	// Timeline is the latest run's drawing, made by scorecard's
	// templates (html/template): safe HTML.
	Timeline template.HTML
	// Anchor is the id of the section's heading (the overview links
	// to it), Key the job's key figure (overview.go), History its runs
	// held, oldest first, and Strip their drawing (historyStrip: safe
	// HTML).
	Anchor, Key string
	History     []historyRun
	Strip       template.HTML
}

// cellView is one of the class's cells as check's text card shows it.
type cellView struct {
	Row  string `json:"row"`
	Text string `json:"text"`
	Mark string `json:"mark,omitempty"`
	Over bool   `json:"over"`
}

// runRow is one run in a job's table.
type runRow struct {
	Started   string `json:"started"`
	Outcome   string `json:"outcome"`
	Verdict   string `json:"verdict,omitempty"`
	HTTP      string `json:"http_status,omitempty"`
	TFC       string `json:"tfc_ms,omitempty"`
	Gap       string `json:"gap_p95_ms,omitempty"`
	Tail      string `json:"tail_ms,omitempty"`
	RequestID string `json:"request_id"`
	Stalls    int    `json:"stalls_over_250ms"`
	OK        bool   `json:"passed"`
	// Note is the run's error (Err) or, for a run that ended as its
	// sample intends, how it ended (the cancel sample's cancel).
	Note string `json:"note,omitempty"`
	Err  bool   `json:"error"`
}

// shown is server text as the page may show it: through the scrub gate
// (records and push errors passed it already; Scrub of scrubbed text is
// the same text).
func shown(s string) string { return textgate.Scrub(s, nil, 0) }

func (s *status) view(f pageFacts) statusView {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	v := statusView{CSS: template.CSS(scorecard.CSS + statusCSS + overviewCSS), Loaded: ts(s.loadedAt), Version: shown(Version()),
		Made: ts(f.now), Runs: statusRuns, Healthy: f.health.Status == "ok", HealthReasons: f.health.Reasons}
	if s.cfg != nil {
		v.Host, v.Region, v.File = s.cfg.Host, s.cfg.Region, s.cfg.File()
	}
	if !f.started.IsZero() {
		v.Uptime = f.now.Sub(f.started).Round(time.Second).String()
	}
	if s.refused.After(s.loadedAt) {
		v.Refused = ts(s.refused)
	}
	v.PushDisabled = f.push.URL.URL == nil
	if !v.PushDisabled {
		v.PushEvery = f.push.Interval.Duration.String()
		if !f.pushAt.IsZero() {
			v.PushAt, v.PushErr = ts(f.pushAt), shown(f.pushErr)
		}
	}
	cards := s.cards()
	for _, key := range s.order {
		st := s.jobs[key]
		jv := st.view(cards[st.target])
		if t, ok := f.next[st.name]; ok {
			jv.Next = fmt.Sprintf("%s (in %s)", ts(t), max(0, t.Sub(f.now)).Round(time.Second))
			jv.NextAt = t
		}
		v.Jobs = append(v.Jobs, jv)
	}
	v.Summary, v.AllPass = summary(v.Jobs)
	v.Overview = overview(v.Jobs)
	return v
}

// summary is the page's one line: how many classes (and drills) pass
// over the runs held, which fail, and which are inconclusive.
func summary(js []jobView) (string, bool) {
	var classes, drills, waiting int
	var classPass, drillPass int
	var failed, undecided []string
	for _, j := range js {
		switch {
		case j.Verdict == "":
			waiting++
			continue
		case j.Drill != probe.DrillNone:
			drills++
			if j.Verdict == "PASS" {
				drillPass++
			}
		default:
			classes++
			if j.Verdict == "PASS" {
				classPass++
			}
		}
		switch j.Verdict {
		case scorecard.Fail:
			failed = append(failed, j.Target+" "+j.Title)
		case scorecard.Inconclusive:
			undecided = append(undecided, j.Target+" "+j.Title)
		}
	}
	parts := []string{fmt.Sprintf("%d of %d classes PASS", classPass, classes)}
	if drills > 0 {
		parts[0] += fmt.Sprintf(", %d of %d drills PASS", drillPass, drills)
	}
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d FAIL: %s", len(failed), strings.Join(failed, ", ")))
	}
	if len(undecided) > 0 {
		parts = append(parts, fmt.Sprintf("%d INCONCLUSIVE: %s", len(undecided), strings.Join(undecided, ", ")))
	}
	if waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d with no run yet", waiting))
	}
	return strings.Join(parts, "; "), len(failed) == 0 && len(undecided) == 0 && waiting == 0
}

// view is the job's section; card is its target's card over the runs
// held (nil when there is none).
func (st *jobStatus) view(card *scorecard.Card) (jv jobView) {
	jv = jobView{Target: st.target, Sample: st.sample, Drill: st.drill, Dialect: st.dialect, Title: st.sample, Runs: len(st.runs),
		Anchor: anchor(st.target, st.sample, st.drill), History: historyOf(st.runs)}
	var tfcBudget *float64
	defer func() { jv.Strip = historyStrip(jv.History, tfcBudget) }()
	if st.drill != probe.DrillNone {
		jv.Title = "drill " + st.drill + " (sample " + st.sample + ")"
	}
	if st.lastErr != "" {
		jv.LastErr, jv.LastErrAt = shown(st.lastErr), shortTime(st.lastErrAt)
	}
	for i := len(st.runs) - 1; i >= 0; i-- {
		row := runRowOf(st.runs[i])
		// The last error is written once, above the table: its run's row
		// points there, an older run that failed the same way says so.
		switch {
		case !row.Err || row.Note != jv.LastErr:
		case st.runs[i].StartedAt == st.lastErrAt:
			row.Note = "the last error (above)"
		default:
			row.Note = "the same error as the last"
		}
		jv.Rows = append(jv.Rows, row)
	}
	if len(st.runs) == 0 || card == nil {
		return jv
	}
	last := st.runs[len(st.runs)-1]
	jv.Latest = string(last.Outcome)
	if st.latest != nil && st.latest.Record.RequestID == last.RequestID {
		jv.Timeline = template.HTML(scorecard.Timeline("latest run", st.latest))
	}
	if st.drill != probe.DrillNone {
		jv.Verdict, jv.Why = drillVerdict(card, st.drill)
		jv.Key = drillKey(st.runs)
		return jv
	}
	cells := card.ClassCells(st.sample)
	jv.Verdict, jv.Key = scorecard.ClassVerdict(cells), keyFigure(cells)
	var budgets []string
	for _, ce := range cells {
		text, mark := ce.Text()
		jv.Cells = append(jv.Cells, cellView{Row: scorecard.RowName(ce.Row), Text: shown(text), Mark: mark, Over: ce.Over})
		if ce.Over || (jv.Verdict == scorecard.Inconclusive && ce.Verdict == scorecard.Inconclusive) {
			jv.Why = append(jv.Why, scorecard.RowName(ce.Row)+": "+shown(ce.Why))
		}
		if ce.Row == "tfc" && ce.Timing != nil {
			tfcBudget = ce.Timing.Budget
		}
		switch {
		case ce.Timing != nil && ce.Timing.Budget != nil:
			budgets = append(budgets, fmt.Sprintf("%s p95 %s ms", scorecard.RowName(ce.Row), trimMs(*ce.Timing.Budget)))
		case ce.Stall != nil:
			budgets = append(budgets, fmt.Sprintf("stalled >250ms at most %.0f%% of runs", ce.Stall.Budget*100))
		}
	}
	if len(budgets) < 2 {
		budgets = append([]string{"no p95 budget"}, budgets...)
	}
	jv.Budgets = strings.Join(budgets, ", ")
	return jv
}

// drillVerdict is a drill job's verdict as check judges a drill: FAIL
// when a run of it failed.
func drillVerdict(card *scorecard.Card, drill string) (string, []string) {
	runs, failed, last := 0, 0, ""
	for _, d := range card.Drills {
		if d.Drill != drill {
			continue
		}
		runs++
		if d.Failed {
			failed++
			last = shown(d.Verdict)
			if d.Error != "" {
				last += ": " + shown(d.Error)
			}
		}
	}
	if failed == 0 {
		return "PASS", nil
	}
	return "FAIL", []string{fmt.Sprintf("%d of %d runs failed; the last: %s", failed, runs, last)}
}

func runRowOf(r probe.Record) runRow {
	row := runRow{Started: shortTime(r.StartedAt), Outcome: string(r.Outcome), Verdict: string(r.Verdict), TFC: ms(r.TFCMs),
		Gap: ms(r.Gaps.P95Ms), Tail: ms(r.TailMs), Stalls: r.Stalls, RequestID: shown(r.RequestID), OK: r.Passed(),
		Note: shown(r.Error), Err: r.Error != "" && !r.Intended()}
	if row.Verdict == "" && r.Drill != probe.DrillNone {
		row.Verdict = string(probe.VerdictNone)
	}
	if r.HTTPStatus != 0 {
		row.HTTP = fmt.Sprint(r.HTTPStatus)
	}
	return row
}

// trimMs is a budget in ms without a trailing ".0".
func trimMs(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
}

// shortTime is a record's start time to the second, in UTC.
func shortTime(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return shown(rfc3339)
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ms(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.0f", *v)
}

const statusCSS = `.verdict.inconclusive{color:#8a6d00}td.num{text-align:right}td{white-space:nowrap}td.err,td.end{white-space:normal;font-size:12px;max-width:28em}h2{font-size:17px}.err{color:#900;font-family:monospace}td.end{color:#555}#summary{font-size:16px;font-weight:bold}table.class td{white-space:normal;font-size:13px}`
