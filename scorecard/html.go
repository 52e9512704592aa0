package scorecard

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/probe"
)

const css = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
td.over{background:#fdd;color:#900;font-weight:bold}td.ok{background:#efe}
svg{display:block;margin:4px 0 12px;background:#fafafa;border:1px solid #ddd}
.tick{stroke:#1f6feb;stroke-width:1.5}.tfc{stroke:#2da44e;stroke-width:2}.end{stroke:#555;stroke-width:2;stroke-dasharray:3 2}
.stall{fill:#f85149;fill-opacity:.35}.reconnect{fill:#a371f7;fill-opacity:.3}.axis{stroke:#999}
text{font-size:11px;fill:#333}h2{margin-top:28px}.fail{color:#900}.pass{color:#2da44e}`

// WriteHTML writes one self-contained HTML report (no external assets):
// the scorecards and, per class, a timeline of the p50 run and the worst
// run, plus the drill runs with their reconnect bands.
func WriteHTML(w io.Writer, cards []*Card, runsPerSample int, generated time.Time) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>streamprobe check</title><style>" + css + "</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>streamprobe check</h1><p>%d runs per sample; generated %s. Cells: p50 / p95 against the p95 budget. Percentiles across runs come from the raw per-run values.</p>\n",
		runsPerSample, html.EscapeString(generated.UTC().Format(time.RFC3339)))
	for _, c := range cards {
		verdict := `<span class="pass">PASS</span>`
		if !c.Pass {
			verdict = `<span class="fail">FAIL</span>`
		}
		fmt.Fprintf(&b, "<h2>target %s: %s</h2>\n", html.EscapeString(c.Target), verdict)
		if len(c.Samples) > 0 {
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
				fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td></tr>\n", html.EscapeString(d.Drill), class, html.EscapeString(d.Verdict), html.EscapeString(d.Detail+" "+d.Error))
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
			if p50 == nil {
				continue
			}
			fmt.Fprintf(&b, "<h3>%s: timelines</h3>\n", html.EscapeString(s))
			timeline(&b, "p50 run (by TFC)", p50)
			if worst != p50 {
				timeline(&b, "worst run (largest gap)", worst)
			}
		}
		for i := range c.drills {
			r := &c.drills[i]
			fmt.Fprintf(&b, "<h3>drill %s: timeline</h3>\n", html.EscapeString(r.Record.Drill))
			timeline(&b, "drill run", r)
		}
	}
	// Counts what the browser drew, so a headless browser's DOM dump can be
	// checked against the data.
	b.WriteString(`<script>for(const s of document.querySelectorAll("svg.timeline")){s.dataset.ticksRendered=s.querySelectorAll(".tick").length;s.dataset.stallsRendered=s.querySelectorAll(".stall").length;s.dataset.bandsRendered=s.querySelectorAll(".reconnect").length}document.body.dataset.rendered="1"</script>` + "\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// scoreTable writes the card's cells as a table, red cells marked.
func scoreTable(b *strings.Builder, c *Card) {
	b.WriteString("<table><tr><th></th>")
	for _, s := range c.Samples {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(s))
	}
	b.WriteString("</tr>\n")
	for _, row := range Rows {
		fmt.Fprintf(b, "<tr><th>%s</th>", html.EscapeString(rowNames[row]))
		for _, s := range c.Samples {
			text, mark := cellText(c.cell(row, s))
			class := ""
			switch mark {
			case "ok":
				class = ` class="ok"`
			case "OVER", "FAIL":
				class = ` class="over"`
			}
			fmt.Fprintf(b, "<td%s>%s %s</td>", class, html.EscapeString(text), html.EscapeString(mark))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// timeline draws one run: a tick per chunk, TFC marked, gaps over 250 ms
// highlighted, reconnects as shaded bands with their handshake time, and the
// end marker.
func timeline(b *strings.Builder, title string, r *Run) {
	const width, height, left, right = 960.0, 84.0, 10.0, 20.0
	span := 1.0
	for _, c := range r.Chunks {
		span = max(span, c)
	}
	if r.End != nil {
		span = max(span, *r.End)
	}
	for _, bd := range r.Bands {
		span = max(span, bd.FirstChunkMs)
	}
	span *= 1.05
	x := func(ms float64) float64 { return left + ms/span*(width-left-right) }
	rec := r.Record
	fmt.Fprintf(b, `<svg class="timeline" width="%.0f" height="%.0f" data-request-id="%s" data-chunks="%d" data-stalls="%d" data-bands="%d" role="img" aria-label="%s">`,
		width, height, html.EscapeString(rec.RequestID), len(r.Chunks), rec.Stalls, len(r.Bands), html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%.0f" y="14">%s: %s, %s, %d chunks, %s</text>`, left, html.EscapeString(title),
		html.EscapeString(rec.Sample), html.EscapeString(string(rec.Outcome)), len(r.Chunks), html.EscapeString(rec.RequestID))
	fmt.Fprintf(b, `<line class="axis" x1="%.1f" x2="%.1f" y1="60" y2="60"/>`, x(0), x(span))
	for _, bd := range r.Bands {
		fmt.Fprintf(b, `<rect class="reconnect" x="%.1f" y="22" width="%.1f" height="40"><title>reconnect</title></rect>`, x(bd.DropMs), max(1, x(bd.FirstChunkMs)-x(bd.DropMs)))
		fmt.Fprintf(b, `<text x="%.1f" y="78">reconnect, handshake %.0f ms</text>`, x(bd.DropMs), bd.HandshakeMs)
	}
	for i := 1; i < len(r.Chunks); i++ {
		if r.Chunks[i]-r.Chunks[i-1] > probe.StallThresholdMs && !inBand(r, i) {
			fmt.Fprintf(b, `<rect class="stall" x="%.1f" y="26" width="%.1f" height="34"><title>stall %.0f ms</title></rect>`,
				x(r.Chunks[i-1]), x(r.Chunks[i])-x(r.Chunks[i-1]), r.Chunks[i]-r.Chunks[i-1])
		}
	}
	for _, c := range r.Chunks {
		fmt.Fprintf(b, `<line class="tick" x1="%.1f" x2="%.1f" y1="34" y2="60"/>`, x(c), x(c))
	}
	if len(r.Chunks) > 0 {
		fmt.Fprintf(b, `<line class="tfc" x1="%.1f" x2="%.1f" y1="24" y2="62"/><text x="%.1f" y="78">TFC %.0f ms</text>`, x(r.Chunks[0]), x(r.Chunks[0]), x(r.Chunks[0])+3, r.Chunks[0])
	}
	if r.End != nil {
		fmt.Fprintf(b, `<line class="end" x1="%.1f" x2="%.1f" y1="24" y2="62"/><text x="%.1f" y="36">end</text>`, x(*r.End), x(*r.End), x(*r.End)+3)
	}
	b.WriteString("</svg>\n")
}

// inBand reports whether a chunk is the first after a reconnect: that
// interval is a resume stall, drawn as the band, not as a gap.
func inBand(r *Run, chunk int) bool {
	for _, bd := range r.Bands {
		if chunk == bd.Chunk {
			return true
		}
	}
	return false
}
