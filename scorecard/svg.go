package scorecard

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

// legend explains every mark of the timelines and the cells' plots.
func legend(b *strings.Builder) {
	b.WriteString(`<svg class="legend" width="960" height="44" role="img" aria-label="legend">`)
	x := 4.0
	item := func(mark, label string) {
		b.WriteString(strings.ReplaceAll(mark, "X", fmt.Sprintf("%.0f", x)))
		fmt.Fprintf(b, `<text x="%.0f" y="18">%s</text>`, x+20, label)
		x += 26 + labelWidth(label)
	}
	b.WriteString(`<g transform="translate(0,0)">`)
	item(`<line class="tick" x1="X" x2="X" y1="6" y2="22" transform="translate(6,0)"/>`, "chunk")
	item(`<line class="tfc" x1="X" x2="X" y1="4" y2="24" transform="translate(6,0)"/>`, "first chunk (TFC)")
	item(`<rect class="stall" x="X" y="6" width="14" height="16"/>`, "gap over 250 ms")
	item(`<rect class="reconnect" x="X" y="6" width="14" height="16"/>`, "reconnect (drop to first chunk after)")
	item(`<line class="end" x1="X" x2="X" y1="4" y2="24" transform="translate(6,0)"/>`, "end marker")
	b.WriteString(`</g>`)
	x = 4
	b.WriteString(`<g transform="translate(0,22)">`)
	item(`<circle class="dot" cx="X" cy="13" r="3" transform="translate(6,0)"/>`, "one run (gap cells: one gap)")
	item(`<path class="ecdf" d="MX 20 h5 v-6 h5 v-6 h4"/>`, "share of runs at or under a value (ECDF)")
	item(`<line class="pct" x1="X" x2="X" y1="6" y2="20" transform="translate(6,0)"/>`, "p50, p95")
	item(`<line class="budget" x1="X" x2="X" y1="4" y2="22" transform="translate(6,0)"/>`, "p95 budget")
	b.WriteString("</g></svg>\n")
}

// maxDots is the most values a cell draws as dots; beyond, the ECDF
// alone shows them.
const maxDots = 200

// ecdfPoints is the most steps an ECDF path has: a day of gaps is
// thinned to this many quantiles.
const ecdfPoints = 400

// strip draws a cell's distribution: the ECDF of the values (or of the
// buckets), a dot per value below it, the p50 and p95 marks and the budget
// line, on an axis in ms.
func strip(b *strings.Builder, ce *Cell, d Dist) {
	t := ce.Timing
	const width, left, right, top, plotH = 260.0, 8.0, 12.0, 6.0, 40.0
	hi := 1.0
	for _, v := range d.Values {
		hi = max(hi, v)
	}
	for _, bk := range d.Buckets {
		if !math.IsInf(bk.Hi, 1) {
			hi = max(hi, bk.Hi)
		} else {
			hi = max(hi, bk.Lo)
		}
	}
	if t.Budget != nil {
		hi = max(hi, *t.Budget)
	}
	span, step := axisSpan(hi*1.05, width-left-right)
	x := func(ms float64) float64 { return left + min(ms, span)/span*(width-left-right) }
	base := top + plotH
	y := func(share float64) float64 { return base - share*plotH }
	dots := 0
	if d.Buckets == nil && len(d.Values) <= maxDots {
		dots = len(d.Values)
	}
	height := base + 30.0
	if dots > 0 {
		height += 12
	}
	budget := ""
	if t.Budget != nil {
		budget = fmt.Sprintf(` data-budget="%g"`, *t.Budget)
	}
	fmt.Fprintf(b, `<svg class="strip" width="%.0f" height="%.0f" data-row="%s" data-sample="%s" data-n="%d" data-dots="%d"%s role="img" aria-label="%s %s: distribution of per-run values">`,
		width, height, ce.Row, html.EscapeString(ce.Sample), d.N(), dots, budget, html.EscapeString(ce.Sample), rowNames[ce.Row])
	// The ECDF: the share of values at or under each value.
	var path strings.Builder
	fmt.Fprintf(&path, "M%.1f %.1f", x(0), y(0))
	if d.Buckets == nil {
		s := slices.Clone(d.Values)
		slices.Sort(s)
		n := len(s)
		stepN := max(1, n/ecdfPoints)
		for i := 0; i < n; i += stepN {
			fmt.Fprintf(&path, " H%.1f V%.1f", x(s[i]), y(float64(min(n, i+stepN))/float64(n)))
		}
	} else {
		// Flat up to the first bucket, then straight within each bucket
		// (where the values lie is not known inside it). A folded row's
		// thousands of fine buckets are thinned to ecdfPoints steps and
		// not marked.
		total, cum, drawn := float64(d.N()), 0.0, 0.0
		fmt.Fprintf(&path, " L%.1f %.1f", x(d.Buckets[0].Lo), y(0))
		for i, bk := range d.Buckets {
			cum += bk.Count
			if d.ranked && i < len(d.Buckets)-1 && cum-drawn < total/ecdfPoints {
				continue
			}
			drawn = cum
			end := bk.Hi
			if math.IsInf(end, 1) {
				end = span
			}
			fmt.Fprintf(&path, " L%.1f %.1f", x(end), y(cum/total))
			if !d.ranked {
				fmt.Fprintf(b, `<line class="bucket" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x(end), x(end), base, base-4)
			}
		}
	}
	fmt.Fprintf(&path, " H%.1f", x(span))
	fmt.Fprintf(b, `<path class="ecdf" d="%s"/>`, path.String())
	if dots > 0 {
		for i, v := range d.Values {
			// A fixed jitter, so equal values stay visible.
			fmt.Fprintf(b, `<circle class="dot" cx="%.1f" cy="%.1f" r="2.5"><title>%s</title></circle>`, x(v), base+6+float64(i%3)*3, msText(v))
		}
	}
	axisY := height - 16
	fmt.Fprintf(b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x(0), x(span), axisY, axisY)
	axisTicks(b, x, span, step, axisY)
	var labels []label
	mark := func(v *float64, name string) {
		if v != nil {
			fmt.Fprintf(b, `<line class="pct" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>%s %s</title></line>`, x(*v), x(*v), top, base, name, msText(*v))
			labels = append(labels, label{x: x(*v) + 2, text: name})
		}
	}
	mark(t.P50, "p50")
	mark(t.P95, "p95")
	if t.Budget != nil {
		fmt.Fprintf(b, `<line class="budget" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>p95 budget %s</title></line>`, x(*t.Budget), x(*t.Budget), top-4, base, msText(*t.Budget))
		labels = append(labels, label{x: x(*t.Budget) + 2, text: "budget"})
	}
	// The marks' names, in lanes at the top of the plot.
	for _, l := range layout(labels, width-2) {
		fmt.Fprintf(b, `<text class="small" x="%.1f" y="%.1f">%s</text>`, l.x, top+8+float64(l.lane)*11, l.text)
	}
	b.WriteString("</svg>")
}

// axisSpan picks an axis for values up to hi drawn over px pixels: the
// smallest step of 1, 2 or 5 times a power of ten whose tick labels
// (the widest, the last with its unit) keep apart, and the span, a whole
// number of steps.
func axisSpan(hi, px float64) (span, step float64) {
	step = niceStep(hi, px/40)
	for range 30 {
		span = math.Ceil(hi/step) * step
		gap := step / span * px
		// The last label ends at its tick; the one before is centred.
		if gap >= labelWidth(trimFloat(span)+" ms")+labelWidth(trimFloat(span))/2+6 {
			return span, step
		}
		step = niceStep(step*1.01, 1)
	}
	return span, step
}

// niceStep is a step of 1, 2 or 5 times a power of ten that cuts span
// into at most n parts.
func niceStep(span, n float64) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / n
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// axisTicks draws the ticks of a time axis at y, every step ms, labelled
// in ms (the last one with its unit).
func axisTicks(b *strings.Builder, x func(float64) float64, span, step, y float64) {
	n := int(math.Round(span / step))
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		fmt.Fprintf(b, `<line class="axis-tick" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x(v), x(v), y, y+4)
		text := trimFloat(v)
		if i == n {
			text += " ms"
		}
		anchor := "middle"
		switch {
		case i == 0:
			anchor = "start"
		case i == n:
			anchor = "end"
		}
		fmt.Fprintf(b, `<text class="small" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x(v), y+14, anchor, text)
	}
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// label is a text placed at x (its left edge) in a lane.
type label struct {
	x    float64
	text string
	lane int
}

// labelWidth is a generous estimate of a label's width in px at the
// report's 11 px font.
func labelWidth(s string) float64 { return 6.6*float64(len(s)) + 4 }

// layout puts each label in the first lane where it overlaps no label
// already there, after moving it left if it would pass maxX; labels keep
// their order.
func layout(in []label, maxX float64) []label {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b label) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	var ends []float64 // the right edge of the last label of each lane
	for i := range out {
		w := labelWidth(out[i].text)
		out[i].x = max(0, min(out[i].x, maxX-w))
		lane := 0
		for lane < len(ends) && out[i].x < ends[lane]+4 {
			lane++
		}
		if lane == len(ends) {
			ends = append(ends, 0)
		}
		ends[lane] = out[i].x + w
		out[i].lane = lane
	}
	return out
}

// lanes is the number of lanes a layout used.
func lanes(ls []label) int {
	n := 0
	for _, l := range ls {
		n = max(n, l.lane+1)
	}
	return n
}

// timeline draws one run on a time axis in ms: a tick per chunk, TFC
// marked, gaps over 250 ms highlighted, reconnects as shaded bands with
// their handshake time, and the end marker. The marks' labels go in lanes
// under the axis, so none covers another.
func timeline(b *strings.Builder, title string, r *Run) {
	const width, left, right = 960.0, 10.0, 20.0
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
	span, step := axisSpan(span*1.02, width-left-right)
	x := func(ms float64) float64 { return left + ms/span*(width-left-right) }
	var labels []label
	for _, bd := range r.Bands {
		labels = append(labels, label{x: x(bd.DropMs), text: fmt.Sprintf("reconnect, handshake %.0f ms", bd.HandshakeMs)})
	}
	if len(r.Chunks) > 0 {
		labels = append(labels, label{x: x(r.Chunks[0]) + 3, text: fmt.Sprintf("TFC %.0f ms", r.Chunks[0])})
	}
	if r.End != nil {
		labels = append(labels, label{x: x(*r.End) + 3, text: "end"})
	}
	placed := layout(labels, width-2)
	const axisY, laneTop, laneH = 62.0, 96.0, 13.0
	height := laneTop + float64(lanes(placed))*laneH
	rec := r.Record
	fmt.Fprintf(b, `<svg class="timeline" width="%.0f" height="%.0f" data-request-id="%s" data-chunks="%d" data-stalls="%d" data-bands="%d" data-lanes="%d" role="img" aria-label="%s">`,
		width, height, html.EscapeString(rec.RequestID), len(r.Chunks), rec.Stalls, len(r.Bands), lanes(placed), html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%.0f" y="14">%s: %s, %s, %d chunks, %s</text>`, left, html.EscapeString(title),
		html.EscapeString(rec.Sample), html.EscapeString(string(rec.Outcome)), len(r.Chunks), html.EscapeString(rec.RequestID))
	for _, bd := range r.Bands {
		fmt.Fprintf(b, `<rect class="reconnect" x="%.1f" y="22" width="%.1f" height="40"><title>reconnect %.0f to %.0f ms</title></rect>`,
			x(bd.DropMs), max(1, x(bd.FirstChunkMs)-x(bd.DropMs)), bd.DropMs, bd.FirstChunkMs)
	}
	for i := 1; i < len(r.Chunks); i++ {
		if r.Chunks[i]-r.Chunks[i-1] > probe.StallThresholdMs && !inBand(r, i) {
			fmt.Fprintf(b, `<rect class="stall" x="%.1f" y="26" width="%.1f" height="34"><title>stall %.0f ms</title></rect>`,
				x(r.Chunks[i-1]), x(r.Chunks[i])-x(r.Chunks[i-1]), r.Chunks[i]-r.Chunks[i-1])
		}
	}
	for _, c := range r.Chunks {
		fmt.Fprintf(b, `<line class="tick" x1="%.1f" x2="%.1f" y1="34" y2="%.0f"/>`, x(c), x(c), axisY)
	}
	if len(r.Chunks) > 0 {
		fmt.Fprintf(b, `<line class="tfc" x1="%.1f" x2="%.1f" y1="24" y2="%.0f"/>`, x(r.Chunks[0]), x(r.Chunks[0]), axisY+2)
	}
	if r.End != nil {
		fmt.Fprintf(b, `<line class="end" x1="%.1f" x2="%.1f" y1="24" y2="%.0f"/>`, x(*r.End), x(*r.End), axisY+2)
	}
	fmt.Fprintf(b, `<line class="axis" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f"/>`, x(0), x(span), axisY, axisY)
	axisTicks(b, x, span, step, axisY)
	// A thin lead from each label up to its mark, under every label (a
	// halo keeps a lead from crossing a label of a higher lane).
	for _, l := range placed {
		ly := laneTop + float64(l.lane)*laneH - 3
		fmt.Fprintf(b, `<line class="lead" x1="%.1f" x2="%.1f" y1="%.0f" y2="%.1f"/>`, l.x+1, l.x+1, axisY+20, ly-9)
	}
	for i, l := range placed {
		ly := laneTop + float64(l.lane)*laneH - 3
		fmt.Fprintf(b, `<text class="label" x="%.1f" y="%.1f" data-label="%d">%s</text>`, l.x+3, ly, i, html.EscapeString(l.text))
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
