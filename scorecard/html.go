package scorecard

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

const css = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
td.over{background:#fdd;color:#900;font-weight:bold}td.ok{background:#efe}td.inconclusive{background:#fff5cc}.ci{fill:#222;fill-opacity:.12}.inconclusive{color:#8a6d00}
svg{display:block;background:#fafafa;border:1px solid #ddd}svg.timeline{margin:4px 0 12px}svg.strip{margin-top:4px;background:#fff}
svg.legend{border:none;background:none;margin:8px 0}
.tick{stroke:#1f6feb;stroke-width:1.5}.tfc{stroke:#2da44e;stroke-width:2}.end{stroke:#555;stroke-width:2;stroke-dasharray:3 2}
.stall{fill:#f85149;fill-opacity:.35}.reconnect{fill:#a371f7;fill-opacity:.3}.axis{stroke:#999}.axis-tick{stroke:#999}
.lead{stroke:#bbb;stroke-width:1}.ecdf{fill:none;stroke:#1f6feb;stroke-width:1.5}.dot{fill:#1f6feb;fill-opacity:.55}
.bucket{stroke:#1f6feb;stroke-opacity:.35}.budget{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:4 2}.pct{stroke:#222;stroke-width:1.5}
text{font-size:11px;fill:#333}text.label{paint-order:stroke;stroke:#fafafa;stroke-width:4px;stroke-linejoin:round}text.small{font-size:10px;fill:#666}h2{margin-top:28px}.fail{color:#900}.pass{color:#2da44e}.note{color:#555}`

// CSS is the style sheet of the report's marks, for pages that embed
// Timeline.
const CSS = css

//go:embed html.tmpl svg.tmpl compare.tmpl
var templateFiles embed.FS

// templates are the page (html.tmpl) and its drawings (svg.tmpl): every
// text they show is escaped by html/template.
var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"f0": func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
}).ParseFS(templateFiles, "html.tmpl", "svg.tmpl", "compare.tmpl"))

// Page is what an HTML report says about itself.
type Page struct {
	Title     string
	Generated time.Time
	// RunsPerSample is check's runs per sample; 0 for a report, whose
	// cards give their own counts.
	RunsPerSample int
	// Window names the data a report covers, when it has no About.
	Window string
	// Verdict is the page's verdict line (Verdict), About what it
	// covers; both shown first in every output.
	Verdict string
	About   *About
}

// pageView is what html.tmpl shows of a page.
type pageView struct {
	Page
	CSS       template.CSS
	Generated string
	// Pass and Undecided colour the verdict line; Lines are About's.
	Pass      bool
	Undecided bool
	Lines     [][2]string
	Legend    []legendGroup
	Cards     []cardView
}

// cardView is what html.tmpl shows of a card.
type cardView struct {
	Title, Source, Resolution string
	Pass                      bool
	// Verdict is the card's: PASS, FAIL or INCONCLUSIVE; Undecided says
	// why each inconclusive cell is.
	Verdict   string
	Undecided []string
	// NoRun is NoRunNote for a card with no finished run.
	NoRun string
	// RunsText counts a report's runs per class; check says its runs per
	// sample once, for the page.
	RunsText string
	// Table is nil for a card without classes.
	Table *tableView
	// Red says why each red cell is red.
	Red       []string
	Drills    []drillView
	Triage    []string
	Timelines []timelineGroup
	// SmallSamples are the small-sample notes, one per class.
	SmallSamples []string
}

// tableView is the card's cells, a column per class.
type tableView struct {
	Samples []string
	Rows    []rowView
}

type rowView struct {
	Name  string
	Cells []cellView
}

// cellView is a cell as its text and mark, Class "ok" or "over" (red),
// and a timing cell's distribution.
type cellView struct {
	Class, Text, Mark string
	Strip             *stripView
}

type drillView struct {
	Drill, Class, Verdict, Detail string
}

// timelineGroup is a heading and the timelines under it.
type timelineGroup struct {
	Heading string
	Runs    []timelineView
}

// WritePage writes one self-contained HTML file (no external assets): a
// legend, then per card the scorecard, each timing cell with the
// distribution of its per-run values (an ECDF, a dot per value up to
// maxDots, or the buckets) against the budget line, and, where the runs
// have their chunk times (check), a timeline of the p50 run and the
// worst run per class and of each drill run, on a time axis in ms.
func WritePage(w io.Writer, p Page, cards []*Card) error {
	v := pageView{Page: p, CSS: template.CSS(css), Generated: p.Generated.UTC().Format(time.RFC3339), Legend: legend(),
		Pass: strings.HasPrefix(p.Verdict, "PASS"), Undecided: strings.HasPrefix(p.Verdict, Inconclusive)}
	if p.About != nil {
		v.Lines = p.About.Lines()
	}
	for _, c := range cards {
		v.Cards = append(v.Cards, cardViewOf(c, p.RunsPerSample))
	}
	return templates.ExecuteTemplate(w, "page", v)
}

// Timeline returns one run's timeline as an SVG element (ticks per chunk,
// TFC, stalls, reconnect bands, end marker, time axis in ms), styled by
// CSS: the daemon's status page draws its latest runs with it.
func Timeline(title string, r *Run) string {
	var b strings.Builder
	if err := templates.ExecuteTemplate(&b, "timeline", timelineOf(title, r)); err != nil {
		// The template and its view are fixed: an error is a bug the
		// tests catch.
		panic(err)
	}
	return b.String()
}

// cardViewOf is the card as the page shows it.
func cardViewOf(c *Card, runsPerSample int) cardView {
	v := cardView{Title: c.Title(), Source: c.Source, Resolution: c.Resolution, Pass: c.Pass, Verdict: c.Verdict, Triage: c.Triage, SmallSamples: c.smallSamples()}
	if c.NoRun {
		v.NoRun = NoRunNote
	}
	for _, ce := range c.InconclusiveCells() {
		v.Undecided = append(v.Undecided, ce.Sample+" "+rowNames[ce.Row]+": "+ce.Why)
	}
	if len(c.Samples) > 0 {
		if runsPerSample == 0 {
			v.RunsText = c.runsText(0)
		}
		v.Table = c.table()
	}
	for _, ce := range c.RedCells() {
		v.Red = append(v.Red, ce.Sample+" "+rowNames[ce.Row]+": "+ce.Why)
	}
	for _, d := range c.Drills {
		dv := drillView{Drill: d.Drill, Class: "ok", Verdict: d.Verdict, Detail: strings.TrimSpace(d.Detail + " " + d.Error)}
		if d.Failed {
			dv.Class = "over"
		}
		v.Drills = append(v.Drills, dv)
	}
	v.Timelines = c.timelines()
	return v
}

// table is the card's cells, red cells marked, each timing cell with its
// distribution.
func (c *Card) table() *tableView {
	t := &tableView{Samples: c.Samples}
	for _, row := range Rows {
		rv := rowView{Name: rowNames[row]}
		for _, s := range c.Samples {
			ce := c.cell(row, s)
			cv := cellView{}
			cv.Text, cv.Mark = ce.text()
			switch cv.Mark {
			case "ok":
				cv.Class = "ok"
			case "OVER", "FAIL":
				cv.Class = "over"
			case Inconclusive:
				cv.Class = "inconclusive"
			}
			if d, ok := c.dist(row, s); ok && d.N() > 0 {
				cv.Strip = stripOf(ce, d)
			}
			rv.Cells = append(rv.Cells, cv)
		}
		t.Rows = append(t.Rows, rv)
	}
	return t
}

// timelines are the runs a card draws: per class its p50 run and its
// worst run, and each drill run. A report's card has no runs to draw.
func (c *Card) timelines() []timelineGroup {
	var out []timelineGroup
	for _, s := range c.Samples {
		p50, worst := c.Representative(s)
		if p50 == nil || len(p50.Chunks) == 0 {
			continue
		}
		g := timelineGroup{Heading: s + ": timelines", Runs: []timelineView{timelineOf("p50 run (by TFC)", p50)}}
		if worst != p50 && len(worst.Chunks) > 0 {
			g.Runs = append(g.Runs, timelineOf("worst run (largest gap)", worst))
		}
		out = append(out, g)
	}
	for i := range c.drills {
		r := &c.drills[i]
		out = append(out, timelineGroup{Heading: "drill " + r.Record.Drill + ": timeline", Runs: []timelineView{timelineOf("drill run", r)}})
	}
	return out
}

// dist is the distribution behind a timing cell.
func (c *Card) dist(row, s string) (Dist, bool) {
	cl := c.classes[s]
	if cl == nil {
		return Dist{}, false
	}
	switch row {
	case RowTFC:
		return cl.TFC, true
	case RowGap:
		return cl.Gap, true
	case RowTail:
		return cl.Tail, true
	case RowClose:
		return cl.Close, true
	}
	return Dist{}, false
}

// Representative picks the runs a report draws for a class: the p50 run
// by TFC and the worst run by its largest gap.
func (c *Card) Representative(s string) (p50, worst *Run) {
	var good []*Run
	for i := range c.runs[s] {
		r := &c.runs[s][i]
		if r.Record.TFCMs != nil {
			good = append(good, r)
		}
	}
	if len(good) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(good, func(a, b *Run) int { return cmp.Compare(*a.Record.TFCMs, *b.Record.TFCMs) })
	idx := min(len(good)-1, int(float64(len(good)-1)/2+0.5))
	p50 = good[idx]
	worst = good[0]
	for _, r := range good {
		if maxGap(r) > maxGap(worst) {
			worst = r
		}
	}
	return p50, worst
}

func maxGap(r *Run) float64 {
	if r.Record.Gaps.MaxMs == nil {
		return 0
	}
	return *r.Record.Gaps.MaxMs
}
