package daemon

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// The overview at the top of the status page: one grid of target x class
// (sample, then drill) cells, each coloured by the verdict check gives the
// runs the page holds, with its key figure and its runs' history strip,
// and linking to the job's section below. /api/status gives the same.

// overviewView is the grid: its columns (the classes and drills of every
// target, in config order) and a row per target.
type overviewView struct {
	Columns []string      `json:"columns"`
	Rows    []overviewRow `json:"rows"`
}

// overviewRow is a target's row: a cell per column, empty (Job "")
// where the target has no such job.
type overviewRow struct {
	Target string         `json:"target"`
	Cells  []overviewCell `json:"cells"`
}

// overviewCell is a job's cell.
type overviewCell struct {
	Job     string `json:"job,omitempty"` // target/sample or target/drill
	Verdict string `json:"verdict,omitempty"`
	// Key is the job's key figure over the runs held: a class's first
	// red cell's figure, else its TFC p95; a drill's runs passed.
	Key    string `json:"key,omitempty"`
	Anchor string `json:"anchor,omitempty"` // the job's section's id
	Runs   int    `json:"runs"`
	// History is the job's last runs, oldest first, as its strip draws
	// them.
	History []historyRun  `json:"history,omitempty"`
	Strip   template.HTML `json:"-"`
}

// historyRun is one run of a job's strip.
type historyRun struct {
	Started string   `json:"started"`
	Outcome string   `json:"outcome"`
	Passed  bool     `json:"passed"`
	TFC     *float64 `json:"tfc_ms,omitempty"`
}

// column is a job's column in the grid.
func (jv jobView) column() string {
	if jv.Drill != probe.DrillNone {
		return "drill " + jv.Drill
	}
	return jv.Sample
}

// anchor is the id of a job's section.
func anchor(target, sample, drill string) string {
	if drill != probe.DrillNone {
		return "job-" + target + "-drill-" + drill
	}
	return "job-" + target + "-" + sample
}

// overview is the grid of the jobs' views, in their order.
func overview(js []jobView) overviewView {
	var ov overviewView
	rowOf := map[string]int{}
	for _, j := range js {
		if !slices.Contains(ov.Columns, j.column()) {
			ov.Columns = append(ov.Columns, j.column())
		}
		if _, ok := rowOf[j.Target]; !ok {
			rowOf[j.Target] = len(ov.Rows)
			ov.Rows = append(ov.Rows, overviewRow{Target: j.Target})
		}
	}
	for i := range ov.Rows {
		ov.Rows[i].Cells = make([]overviewCell, len(ov.Columns))
	}
	for _, j := range js {
		c := slices.Index(ov.Columns, j.column())
		ov.Rows[rowOf[j.Target]].Cells[c] = overviewCell{Job: j.Target + "/" + strings.TrimPrefix(j.column(), "drill "),
			Verdict: j.Verdict, Key: j.Key, Anchor: j.Anchor, Runs: j.Runs, History: j.History, Strip: j.Strip}
	}
	return ov
}

// keyFigure is a class's key figure: its first red cell's, else its TFC
// p95's ("" with neither).
func keyFigure(cells []scorecard.Cell) string {
	pick := -1
	for i, ce := range cells {
		if ce.Over {
			pick = i
			break
		}
		if pick < 0 && ce.Row == "tfc" {
			pick = i
		}
	}
	if pick < 0 {
		return ""
	}
	ce := cells[pick]
	name := scorecard.RowName(ce.Row)
	switch {
	case ce.Timing != nil && ce.Timing.P95 != nil:
		return fmt.Sprintf("%s p95 %.0f ms", name, *ce.Timing.P95)
	case ce.Stall != nil && ce.Stall.Share != nil:
		return fmt.Sprintf("%s %.0f%%", name, *ce.Stall.Share*100)
	case ce.Outcomes != nil && ce.Outcomes.FailedShare != nil:
		return fmt.Sprintf("%.0f%% of runs failed", *ce.Outcomes.FailedShare*100)
	}
	text, _ := ce.Text()
	return name + " " + shown(text)
}

// drillKey is a drill's key figure: how many of its runs passed.
func drillKey(runs []probe.Record) string {
	passed := 0
	for _, r := range runs {
		if r.Passed() {
			passed++
		}
	}
	return fmt.Sprintf("%d of %d runs pass", passed, len(runs))
}

// historyOf is runs, oldest first, as a strip draws them.
func historyOf(runs []probe.Record) []historyRun {
	out := make([]historyRun, 0, len(runs))
	for _, r := range runs {
		h := historyRun{Started: shortTime(r.StartedAt), Outcome: string(r.Outcome), Passed: r.Passed()}
		if r.Intended() {
			h.TFC = r.TFCMs
		}
		out = append(out, h)
	}
	return out
}

// The history strip's geometry: a bar per run, statusRuns wide.
const (
	stripStep   = 12 // a bar 9 px wide, 3 px apart
	stripHeight = 24
)

// historyStrip draws a job's runs, oldest left: a bar per run, green when
// it passed and red when not, as tall as its TFC against the tallest TFC
// of the strip or the TFC budget (a dashed line), whichever is higher; a
// run with no TFC to show (it did not end as intended) is a full red bar.
// HTML boxes, not SVG: a section's only drawing stays its latest run's
// timeline. Every text in it is a record's (scrubbed) or a number,
// escaped by html/template.
func historyStrip(h []historyRun, budget *float64) template.HTML {
	scale := 0.0
	if budget != nil {
		scale = *budget
	}
	for _, r := range h {
		if r.TFC != nil {
			scale = max(scale, *r.TFC)
		}
	}
	type bar struct {
		H            int
		Class, Title string
	}
	v := struct {
		W, H, N int
		Bars    []bar
		Budget  int // the budget line's height from the bottom; -1 none
	}{W: statusRuns * stripStep, H: stripHeight, N: len(h), Budget: -1}
	for _, r := range h {
		b := bar{H: stripHeight, Class: "bad", Title: r.Started + " " + r.Outcome}
		if r.Passed {
			b.Class = "ok"
		}
		if r.TFC != nil && scale > 0 {
			b.H = max(2, int(float64(stripHeight)**r.TFC/scale+0.5))
			b.Title += fmt.Sprintf(", TFC %.0f ms", *r.TFC)
		}
		v.Bars = append(v.Bars, b)
	}
	if budget != nil && scale > 0 {
		v.Budget = int(float64(stripHeight)**budget/scale + 0.5)
	}
	var sb strings.Builder
	if err := historyTemplate.Execute(&sb, v); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return template.HTML(sb.String())
}

var historyTemplate = template.Must(template.New("history").Parse(`<span class="history" style="width:{{.W}}px;height:{{.H}}px" data-runs="{{.N}}" role="img" aria-label="the last {{.N}} runs">` +
	`{{range .Bars}}<i class="run {{.Class}}" style="height:{{.H}}px" title="{{.Title}}"></i>{{end}}` +
	`{{if ge .Budget 0}}<b class="budget" style="bottom:{{.Budget}}px"></b>{{end}}</span>`))

const overviewCSS = `table.overview{margin:8px 0 20px}table.overview td{padding:4px 8px;min-width:9em;vertical-align:top}table.overview td.none{background:#f4f4f4;color:#777}table.overview td.pass{background:#e6f4ea}table.overview td.fail{background:#fdd}table.overview td.inconclusive{background:#fff5cc}table.overview a{color:inherit;text-decoration:none;display:block}table.overview .v{font-weight:bold}table.overview .key{font-size:12px}` +
	`span.history{display:inline-flex;align-items:flex-end;gap:3px;position:relative;vertical-align:middle;margin:2px 0}span.history i.run{display:inline-block;width:9px}span.history i.ok{background:#2da44e}span.history i.bad{background:#cf222e}span.history b.budget{position:absolute;left:0;right:0;border-top:1px dashed #555}`
