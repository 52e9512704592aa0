package daemon

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// statusRuns is how many runs per job the status page keeps.
const statusRuns = 10

// statusMaxTicks bounds the timeline drawn for the latest run: a run with
// more chunks is listed without its drawing, so the page stays small.
const statusMaxTicks = 5000

// status is what the page on the listen address's / shows: per job the
// last statusRuns records and the timeline of the latest, and when the
// config was loaded. Records hold no content and their errors are already
// scrubbed; nothing else from a run is kept.
type status struct {
	mu       sync.Mutex
	region   string
	host     string
	file     string
	loadedAt time.Time
	refused  time.Time // the last reload refused, when after loadedAt
	order    []string  // job keys in config order
	jobs     map[string]*jobStatus
}

type jobStatus struct {
	target, sample, drill, dialect string
	runs                           []probe.Record // oldest first, at most statusRuns
	latest                         *scorecard.Run
	lastErr, lastErrAt             string
}

// configured takes a config that was just applied: the jobs it runs, in
// order; jobs it no longer runs are forgotten, the others keep their runs.
func (s *status) configured(cfg *config.Config, js []jobs.Job, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.region, s.host, s.file, s.loadedAt = cfg.Region, cfg.Host, cfg.File(), at
	old := s.jobs
	s.jobs, s.order = map[string]*jobStatus{}, nil
	for _, j := range js {
		key := seriesKey(j.Target.Name, j.Sample.Name, jobDrill(j))
		st := old[key]
		if st == nil {
			st = &jobStatus{target: j.Target.Name, sample: j.Sample.Name, drill: jobDrill(j)}
		}
		st.dialect = j.Target.Dialect
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
	if n := len(res.Timeline.Chunks); n > 0 && n <= statusMaxTicks {
		run := scorecard.FromResult(res)
		st.latest = &run
	}
	if r.Error != "" {
		st.lastErr, st.lastErrAt = r.Error, r.StartedAt
	}
}

// serveStatus writes the status page: one self-contained HTML file.
func (d *Daemon) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	pushAt, pushErr, _ := d.pushed.last()
	w.Write([]byte(d.status.page(time.Now(), pushAt, pushErr)))
}

func (s *status) page(now, pushAt time.Time, pushErr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := html.EscapeString
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30"><title>streamprobe status</title><style>` + scorecard.CSS +
		`td.num{text-align:right}td{white-space:nowrap}td.err{white-space:normal;font-size:12px;max-width:28em}h2{font-size:17px}.err{color:#900;font-family:monospace}</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>streamprobe on %s (region %s)</h1>\n<p id=\"config\">Config <code>%s</code> loaded %s",
		e(s.host), e(s.region), e(s.file), e(ts(s.loadedAt)))
	if s.refused.After(s.loadedAt) {
		fmt.Fprintf(&b, `; <span class="fail">a reload was refused at %s</span>, the loaded config keeps running (the reason is in the log)`, e(ts(s.refused)))
	}
	b.WriteString(". ")
	switch {
	case pushAt.IsZero():
		b.WriteString("No push yet.")
	case pushErr != "":
		fmt.Fprintf(&b, `Last push %s <span class="fail">failed</span>: <span class="err">%s</span>`, e(ts(pushAt)), e(pushErr))
	default:
		fmt.Fprintf(&b, "Last push %s, ok.", e(ts(pushAt)))
	}
	fmt.Fprintf(&b, " Page made %s; the last %d runs of each job; timings in ms. Metrics: <a href=\"metrics\">/metrics</a>, health: <a href=\"healthz\">/healthz</a>.</p>\n", e(ts(now)), statusRuns)
	for _, key := range s.order {
		st := s.jobs[key]
		name := st.sample
		if st.drill != probe.DrillNone {
			name = "drill " + st.drill + " (sample " + st.sample + ")"
		}
		fmt.Fprintf(&b, "<section class=\"job\" data-target=\"%s\" data-sample=\"%s\" data-drill=\"%s\" data-runs=\"%d\">\n<h2>%s: %s ",
			e(st.target), e(st.sample), e(st.drill), len(st.runs), e(st.target), e(name))
		if len(st.runs) == 0 {
			b.WriteString("<span class=\"note\">no run yet</span></h2>\n</section>\n")
			continue
		}
		last := st.runs[len(st.runs)-1]
		if last.Passed() {
			b.WriteString(`<span class="pass">PASS</span>`)
		} else {
			b.WriteString(`<span class="fail">FAIL</span>`)
		}
		fmt.Fprintf(&b, " <span class=\"note\">(%s, %s)</span></h2>\n", e(st.dialect), e(string(last.Outcome)))
		if st.lastErr != "" {
			fmt.Fprintf(&b, "<p>Last error (run started %s): <span class=\"err\">%s</span></p>\n", e(shortTime(st.lastErrAt)), e(st.lastErr))
		}
		b.WriteString("<table><tr><th>started</th><th>outcome</th><th>verdict</th><th>HTTP</th><th>TFC</th><th>gap p95</th><th>tail</th><th>stalls</th><th>request id</th><th>error</th></tr>\n")
		for i := len(st.runs) - 1; i >= 0; i-- {
			r := st.runs[i]
			class := "ok"
			if !r.Passed() {
				class = "over"
			}
			verdict := string(r.Verdict)
			if verdict == "" && r.Drill != probe.DrillNone {
				verdict = "none"
			}
			errText := r.Error
			if errText != "" && errText == st.lastErr {
				errText = "the last error"
			}
			http := ""
			if r.HTTPStatus != 0 {
				http = fmt.Sprint(r.HTTPStatus)
			}
			fmt.Fprintf(&b, "<tr class=\"run\"><td>%s</td><td class=\"%s\">%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%d</td><td><code>%s</code></td><td class=\"err\">%s</td></tr>\n",
				e(shortTime(r.StartedAt)), class, e(string(r.Outcome)), e(verdict), http, ms(r.TFCMs), ms(r.Gaps.P95Ms), ms(r.TailMs), r.Stalls, e(r.RequestID), e(errText))
		}
		b.WriteString("</table>\n")
		if st.latest != nil && st.latest.Record.RequestID == last.RequestID {
			b.WriteString(scorecard.Timeline("latest run", st.latest))
		}
		b.WriteString("</section>\n")
	}
	b.WriteString(`<script>
for(const s of document.querySelectorAll("svg.timeline")){s.dataset.ticksRendered=s.querySelectorAll(".tick").length}
document.body.dataset.rendered="1"</script>
</body></html>
`)
	return b.String()
}

// shortTime is a record's start time to the second, in UTC.
func shortTime(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ms(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.0f", *v)
}
