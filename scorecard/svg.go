package scorecard

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

// The drawings of the HTML report, worked out here as views (positions in
// px, texts) that svg.tmpl draws: the legend, a timing cell's
// distribution and a run's timeline.

// legendGroup is one line of the legend.
type legendGroup struct {
	Y     int
	Items []legendItem
}

// legendItem is one mark of the legend and its label: Shape is "line"
// (Y1 to Y2), "rect", "dot" or "ecdf".
type legendItem struct {
	Shape, Class string
	X, Y1, Y2    float64
	LabelX       float64
	Label        string
}

// legend explains every mark of the timelines and the cells' plots: the
// marks of a timeline on the first line, those of a cell's plot on the
// second, each label after its mark.
func legend() []legendGroup {
	place := func(items ...legendItem) []legendItem {
		x := 4.0
		for i := range items {
			items[i].X, items[i].LabelX = x, x+20
			x += 26 + labelWidth(items[i].Label)
		}
		return items
	}
	line := func(class string, y1, y2 float64, label string) legendItem {
		return legendItem{Shape: "line", Class: class, Y1: y1, Y2: y2, Label: label}
	}
	return []legendGroup{
		{Y: 0, Items: place(
			line("tick", 6, 22, "chunk"),
			line("tfc", 4, 24, "first chunk (TFC)"),
			legendItem{Shape: "rect", Class: "stall", Label: "gap over 250 ms"},
			legendItem{Shape: "rect", Class: "reconnect", Label: "reconnect (drop to first chunk after)"},
			line("end", 4, 24, "end marker"))},
		{Y: 22, Items: place(
			legendItem{Shape: "dot", Label: "one run (gap cells: one gap)"},
			legendItem{Shape: "ecdf", Label: "share of runs at or under a value (ECDF)"},
			line("pct", 6, 20, "p50, p95"),
			line("budget", 4, 22, "p95 budget"))},
	}
}

// BudgetReach is how far beyond the largest value a budget may lie and
// still set the axis of a cell's plot: beyond, the axis fits the data
// and the budget is marked at its edge ("budget 30 s ->").
const BudgetReach = 3.0

// durText is a budget as the edge mark names it: ms under a second, s
// from there.
func durText(ms float64) string {
	if ms < 1000 {
		return trimFloat(ms) + " ms"
	}
	return trimFloat(math.Round(ms/100)/10) + " s"
}

// maxDots is the most values a cell draws as dots; beyond, the ECDF
// alone shows them.
const maxDots = 200

// ecdfPoints is the most steps an ECDF path has: a day of gaps is
// thinned to this many quantiles.
const ecdfPoints = 400

// stripView is a timing cell's distribution: the ECDF of the values (or
// of the buckets), a dot per value below it, the p50 and p95 marks and
// the budget line, on an axis in ms.
type stripView struct {
	Row, RowName, Sample string
	Width, Height        float64
	N                    int
	// DataBudget is the budget for the page's checks, "" without one or
	// when it lies beyond the axis: DataBudgetOff then, marked at the
	// edge.
	DataBudget, DataBudgetOff string
	// BucketXs mark the bucket bounds (histogram sources), from Base up
	// to BucketTop.
	BucketXs        []float64
	Base, BucketTop float64
	// Top and PlotH are where the plot starts and how high it is.
	Top, PlotH float64
	ECDF       string
	Dots       []dot
	Axis       axis
	Marks      []mark
	Labels     []caption
	// CI is the p95's interval, a band under the plot's marks (nil when
	// it has neither bound).
	CI *band
}

// dot is one value drawn as a dot, titled with the value.
type dot struct {
	X, Y  float64
	Title string
}

// mark is a vertical line (a percentile, the budget) with its title.
type mark struct {
	Class     string
	X, Y1, Y2 float64
	Title     string
}

// caption is a text at X, Y.
type caption struct {
	X, Y float64
	Text string
}

// axis is a time axis from X1 to X2 at Y, with its ticks.
type axis struct {
	X1, X2, Y float64
	Ticks     []tick
}

// tick is one tick of a time axis from Y to Y2, and its label at TextY.
type tick struct {
	X, Y, Y2, TextY float64
	Anchor, Text    string
}

// stripOf draws the distribution d of the timing cell ce.
func stripOf(ce *Cell, d Dist) *stripView {
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
	// The budget widens the axis only when it lies near the data: a
	// budget far beyond it is marked at the edge instead, so the data
	// keep the width (a 30 s tail budget over 60 ms tails).
	farBudget := t.Budget != nil && *t.Budget > hi*BudgetReach
	if t.Budget != nil && !farBudget {
		hi = max(hi, *t.Budget)
	}
	span, step := axisSpan(hi*1.05, width-left-right)
	x := func(ms float64) float64 { return left + min(ms, span)/span*(width-left-right) }
	base := top + plotH
	v := &stripView{Row: ce.Row, RowName: rowNames[ce.Row], Sample: ce.Sample, Width: width, Height: base + 30, N: d.N(), Base: base, BucketTop: base - 4, Top: top, PlotH: plotH}
	v.ECDF, v.BucketXs = ecdf(d, x, func(share float64) float64 { return base - share*plotH }, span)
	if d.Buckets == nil && len(d.Values) <= maxDots {
		for i, val := range d.Values {
			// A fixed jitter, so equal values stay visible.
			v.Dots = append(v.Dots, dot{X: x(val), Y: base + 6 + float64(i%3)*3, Title: msText(val)})
		}
	}
	if len(v.Dots) > 0 {
		v.Height += 12
	}
	axisY := v.Height - 16
	v.Axis = axis{X1: x(0), X2: x(span), Y: axisY, Ticks: axisTicks(x, span, step, axisY)}
	var labels []label
	for _, p := range []struct {
		v    *float64
		name string
	}{{t.P50, "p50"}, {t.P95, "p95"}} {
		if p.v != nil {
			v.Marks = append(v.Marks, mark{Class: "pct", X: x(*p.v), Y1: top, Y2: base, Title: p.name + " " + msText(*p.v)})
			labels = append(labels, label{x: x(*p.v) + 2, text: p.name})
		}
	}
	switch {
	case farBudget:
		v.DataBudgetOff = fmt.Sprintf("%g", *t.Budget)
		text := "budget " + durText(*t.Budget) + " →"
		labels = append(labels, label{x: width, text: text})
	case t.Budget != nil:
		v.DataBudget = fmt.Sprintf("%g", *t.Budget)
		v.Marks = append(v.Marks, mark{Class: "budget", X: x(*t.Budget), Y1: top - 4, Y2: base, Title: "p95 budget " + msText(*t.Budget)})
		labels = append(labels, label{x: x(*t.Budget) + 2, text: "budget"})
	}
	if ce.Confidence > 0 && (t.P95Lo != nil || t.P95Hi != nil) {
		lo, hi := 0.0, span
		if t.P95Lo != nil {
			lo = *t.P95Lo
		}
		if t.P95Hi != nil {
			hi = min(*t.P95Hi, span)
		}
		v.CI = &band{X: x(lo), W: max(1, x(hi)-x(lo)), From: lo, To: hi}
	}
	// The marks' names, in lanes at the top of the plot.
	for _, l := range layout(labels, width-2) {
		v.Labels = append(v.Labels, caption{X: l.x, Y: top + 8 + float64(l.lane)*11, Text: l.text})
	}
	return v
}

// ecdf is the path of the share of values at or under each value, and
// the x of each bucket bound to mark (histogram buckets, not a folded
// row's).
func ecdf(d Dist, x, y func(float64) float64, span float64) (string, []float64) {
	var path strings.Builder
	var bounds []float64
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
				bounds = append(bounds, x(end))
			}
		}
	}
	fmt.Fprintf(&path, " H%.1f", x(span))
	return path.String(), bounds
}

// timelineView is one run on a time axis in ms: a tick per chunk, TFC
// marked, gaps over 250 ms highlighted, reconnects as shaded bands with
// their handshake time, and the end marker. The marks' labels go in lanes
// under the axis, so none covers another.
type timelineView struct {
	Title                      string
	Width, Height, Left        float64
	RequestID, Sample, Outcome string
	// Stalls is the record's count; Lanes the label lanes used.
	Stalls, Lanes int
	// Bands are the reconnects, Gaps the gaps over 250 ms outside them.
	Bands, Gaps []band
	// Ticks are the chunks' x, drawn from TickY1 to TickY2; the TFC and
	// end marks (nil when absent) reach down to MarkY2.
	Ticks                  []float64
	TickY1, TickY2, MarkY2 float64
	TFC, End               *float64
	Axis                   axis
	LeadY1                 float64
	Labels                 []leadLabel
}

// band is a stretch of a timeline, from X and W wide: the time From to To
// ms.
type band struct {
	X, W, From, To float64
}

// Ms is how long the stretch lasted.
func (b band) Ms() float64 { return b.To - b.From }

// leadLabel is a label at X, Y with a lead from LeadY1 (the timeline's)
// up to LeadY2 at LeadX.
type leadLabel struct {
	X, Y, LeadX, LeadY2 float64
	Text                string
}

// timelineOf draws one run.
func timelineOf(title string, r *Run) timelineView {
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
	const axisY, laneTop, laneH = 62.0, 96.0, 13.0
	v := timelineView{Title: title, Width: width, Left: left, RequestID: r.Record.RequestID, Sample: r.Record.Sample,
		Outcome: string(r.Record.Outcome), Stalls: r.Record.Stalls, TickY1: 34, TickY2: axisY, MarkY2: axisY + 2, LeadY1: axisY + 20,
		Axis: axis{X1: x(0), X2: x(span), Y: axisY, Ticks: axisTicks(x, span, step, axisY)}}
	var labels []label
	for _, bd := range r.Bands {
		v.Bands = append(v.Bands, band{X: x(bd.DropMs), W: max(1, x(bd.FirstChunkMs)-x(bd.DropMs)), From: bd.DropMs, To: bd.FirstChunkMs})
		labels = append(labels, label{x: x(bd.DropMs), text: fmt.Sprintf("reconnect, handshake %.0f ms", bd.HandshakeMs)})
	}
	for i := 1; i < len(r.Chunks); i++ {
		if r.Chunks[i]-r.Chunks[i-1] > probe.StallThresholdMs && !inBand(r, i) {
			v.Gaps = append(v.Gaps, band{X: x(r.Chunks[i-1]), W: x(r.Chunks[i]) - x(r.Chunks[i-1]), From: r.Chunks[i-1], To: r.Chunks[i]})
		}
	}
	for _, c := range r.Chunks {
		v.Ticks = append(v.Ticks, x(c))
	}
	if len(r.Chunks) > 0 {
		tfc := x(r.Chunks[0])
		v.TFC = &tfc
		labels = append(labels, label{x: tfc + 3, text: fmt.Sprintf("TFC %.0f ms", r.Chunks[0])})
	}
	if r.End != nil {
		end := x(*r.End)
		v.End = &end
		labels = append(labels, label{x: end + 3, text: "end"})
	}
	placed := layout(labels, width-2)
	v.Lanes = lanes(placed)
	v.Height = laneTop + float64(v.Lanes)*laneH
	for _, l := range placed {
		ly := laneTop + float64(l.lane)*laneH - 3
		v.Labels = append(v.Labels, leadLabel{X: l.x + 3, Y: ly, LeadX: l.x + 1, LeadY2: ly - 9, Text: l.text})
	}
	return v
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

// axisTicks are the ticks of a time axis at y, every step ms, labelled in
// ms (the last one with its unit).
func axisTicks(x func(float64) float64, span, step, y float64) []tick {
	n := int(math.Round(span / step))
	var ts []tick
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		t := tick{X: x(v), Y: y, Y2: y + 4, TextY: y + 14, Anchor: "middle", Text: trimFloat(v)}
		if i == n {
			t.Text += " ms"
		}
		switch {
		case i == 0:
			t.Anchor = "start"
		case i == n:
			t.Anchor = "end"
		}
		ts = append(ts, t)
	}
	return ts
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
	slices.SortStableFunc(out, func(a, b label) int { return cmp.Compare(a.x, b.x) })
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
