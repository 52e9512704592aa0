package scorecard

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"time"
)

const css = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
td.over{background:#fdd;color:#900;font-weight:bold}td.ok{background:#efe}
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

// Page is what an HTML report says about itself.
type Page struct {
	Title     string
	Generated time.Time
	// RunsPerSample is check's runs per sample; 0 for a report, whose
	// cards give their own counts.
	RunsPerSample int
	// Window names the data a report covers.
	Window string
}

// WriteHTML writes check's self-contained HTML report.
func WriteHTML(w io.Writer, cards []*Card, runsPerSample int, generated time.Time) error {
	return WritePage(w, Page{Title: "streamprobe check", Generated: generated, RunsPerSample: runsPerSample}, cards)
}

// WritePage writes one self-contained HTML file (no external assets): a
// legend, then per card the scorecard, each timing cell with the
// distribution of its per-run values (an ECDF, a dot per value up to
// maxDots, or the buckets) against the budget line, and, where the runs
// have their chunk times (check), a timeline of the p50 run and the
// worst run per class and of each drill run, on a time axis in ms.
func WritePage(w io.Writer, p Page, cards []*Card) error {
	var b strings.Builder
	title := html.EscapeString(p.Title)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title + "</title><style>" + css + "</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1><p>", title)
	if p.RunsPerSample > 0 {
		fmt.Fprintf(&b, "%d runs per sample; ", p.RunsPerSample)
	}
	if p.Window != "" {
		fmt.Fprintf(&b, "%s; ", html.EscapeString(p.Window))
	}
	fmt.Fprintf(&b, "generated %s. Cells: p50 / p95 against the p95 budget. Percentiles across runs come from the raw per-run values (or summed histogram buckets), never from averaged percentiles.</p>\n",
		html.EscapeString(p.Generated.UTC().Format(time.RFC3339)))
	legend(&b)
	for _, c := range cards {
		verdict := `<span class="pass">PASS</span>`
		if !c.Pass {
			verdict = `<span class="fail">FAIL</span>`
		}
		fmt.Fprintf(&b, "<h2>%s: %s</h2>\n", html.EscapeString(c.Title()), verdict)
		if c.Source != "" || c.Resolution != "" {
			b.WriteString(`<p class="note">`)
			if c.Source != "" {
				fmt.Fprintf(&b, "From %s. ", html.EscapeString(c.Source))
			}
			if c.Resolution != "" {
				fmt.Fprintf(&b, "Resolution: %s.", html.EscapeString(c.Resolution))
			}
			b.WriteString("</p>\n")
		}
		if len(c.Samples) > 0 {
			if p.RunsPerSample == 0 {
				fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(c.runsText(0)))
			}
			scoreTable(&b, c)
		}
		if red := c.RedCells(); len(red) > 0 {
			b.WriteString("<ul class=\"why\">")
			for _, ce := range red {
				fmt.Fprintf(&b, "<li>%s %s: %s</li>", html.EscapeString(ce.Sample), html.EscapeString(rowNames[ce.Row]), html.EscapeString(ce.Why))
			}
			b.WriteString("</ul>\n")
		}
		if len(c.Drills) > 0 {
			b.WriteString("<table><tr><th>drill</th><th>verdict</th><th>detail</th></tr>\n")
			for _, d := range c.Drills {
				class := "ok"
				if d.Failed {
					class = "over"
				}
				fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td></tr>\n", html.EscapeString(d.Drill), class, html.EscapeString(d.Verdict), html.EscapeString(strings.TrimSpace(d.Detail+" "+d.Error)))
			}
			b.WriteString("</table>\n")
		}
		if len(c.Triage) > 0 {
			b.WriteString("<h3>triage</h3><ul>")
			for _, t := range c.Triage {
				fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(t))
			}
			b.WriteString("</ul>\n")
		}
		for _, s := range c.Samples {
			p50, worst := c.Representative(s)
			if p50 == nil || len(p50.Chunks) == 0 {
				continue
			}
			fmt.Fprintf(&b, "<h3>%s: timelines</h3>\n", html.EscapeString(s))
			timeline(&b, "p50 run (by TFC)", p50)
			if worst != p50 && len(worst.Chunks) > 0 {
				timeline(&b, "worst run (largest gap)", worst)
			}
		}
		for i := range c.drills {
			r := &c.drills[i]
			fmt.Fprintf(&b, "<h3>drill %s: timeline</h3>\n", html.EscapeString(r.Record.Drill))
			timeline(&b, "drill run", r)
		}
	}
	// Counts what the browser drew, and the text labels whose boxes
	// overlap, so a headless browser's DOM dump can be checked against
	// the data.
	b.WriteString(`<script>
for(const s of document.querySelectorAll("svg")){
const q=c=>s.querySelectorAll(c).length;
s.dataset.ticksRendered=q(".tick");s.dataset.stallsRendered=q(".stall");s.dataset.bandsRendered=q(".reconnect");
s.dataset.axisTicksRendered=q(".axis-tick");s.dataset.dotsRendered=q(".dot");s.dataset.budgetsRendered=q(".budget");s.dataset.ecdfRendered=q(".ecdf");
const texts=[...s.querySelectorAll("text")],boxes=texts.map(t=>t.getBoundingClientRect());let n=0,which=[];
for(let i=0;i<boxes.length;i++)for(let j=i+1;j<boxes.length;j++){const a=boxes[i],b=boxes[j];
if(a.left<b.right&&b.left<a.right&&a.top<b.bottom&&b.top<a.bottom){n++;which.push(texts[i].textContent+" / "+texts[j].textContent)}}
s.dataset.overlaps=n;if(n)s.dataset.overlapping=which.join("; ");
const r=s.getBoundingClientRect();let out=0;for(const t of s.querySelectorAll("text")){const x=t.getBoundingClientRect();if(x.left<r.left-0.5||x.right>r.right+0.5||x.top<r.top-0.5||x.bottom>r.bottom+0.5)out++}
s.dataset.outside=out}
document.body.dataset.rendered="1"</script>` + "\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Timeline returns one run's timeline as an SVG element (ticks per chunk,
// TFC, stalls, reconnect bands, end marker, time axis in ms), styled by
// CSS: the daemon's status page draws its latest runs with it.
func Timeline(title string, r *Run) string {
	var b strings.Builder
	timeline(&b, title, r)
	return b.String()
}

// scoreTable writes the card's cells as a table, red cells marked, each
// timing cell with its distribution.
func scoreTable(b *strings.Builder, c *Card) {
	b.WriteString("<table><tr><th></th>")
	for _, s := range c.Samples {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(s))
	}
	b.WriteString("</tr>\n")
	for _, row := range Rows {
		fmt.Fprintf(b, "<tr><th>%s</th>", html.EscapeString(rowNames[row]))
		for _, s := range c.Samples {
			ce := c.cell(row, s)
			text, mark := ce.text()
			class := ""
			switch mark {
			case "ok":
				class = ` class="ok"`
			case "OVER", "FAIL":
				class = ` class="over"`
			}
			fmt.Fprintf(b, "<td%s>%s %s", class, html.EscapeString(text), html.EscapeString(mark))
			if d, ok := c.dist(row, s); ok && d.N() > 0 {
				strip(b, ce, d)
			}
			b.WriteString("</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// dist is the distribution behind a timing cell.
func (c *Card) dist(row, s string) (Dist, bool) {
	cl := c.classes[s]
	if cl == nil {
		return Dist{}, false
	}
	switch row {
	case "tfc":
		return cl.TFC, true
	case "gap":
		return cl.Gap, true
	case "tail":
		return cl.Tail, true
	case "close":
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
	sort.SliceStable(good, func(i, j int) bool { return *good[i].Record.TFCMs < *good[j].Record.TFCMs })
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
