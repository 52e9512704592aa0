package scorecard

import (
	"fmt"
	"html/template"
	"io"
	"time"
)

// compareView is what compare.tmpl shows of a comparison.
type compareView struct {
	Title, Verdict, Result, Generated string
	Pass                              bool
	CSS                               template.CSS
	Lines                             [][2]string
	Worse, Undecided, HardFails       []string
	Rows                              []compareRow
	Plots                             []comparePlot
	Resume                            []string
}

// compareRow is one metric of the table.
type compareRow struct {
	Sample, Metric, Baseline, Candidate, Change, Interval, Margin, Verdict, Method string
}

// comparePlot is one timing row of one class: the baseline's and the
// candidate's distributions (ECDFs) on one axis in ms, each side's p50
// and p95 marked.
type comparePlot struct {
	Sample, Row, RowName string
	Width, Height        float64
	NBase, NCand         int
	Base, Cand           string
	Axis                 axis
	Marks                []mark
	Labels               []caption
}

// WriteCompareHTML writes the comparison as one self-contained HTML file:
// the verdict and what it compares, what got worse and what is
// undecided, the table of every metric, and per class the TFC, gap and
// tail of both sides on one axis.
func WriteCompareHTML(w io.Writer, c *Comparison, about [][2]string, generated time.Time) error {
	v := compareView{Title: "streamprobe compare", Verdict: c.Verdict, Result: c.Result, Pass: c.Pass, CSS: template.CSS(css + compareCSS),
		Generated: generated.UTC().Format(time.RFC3339), HardFails: c.HardFails}
	v.Lines = append([][2]string{{"baseline", c.Baseline}, {"candidate", c.Candidate},
		{"confidence", pctFine(c.Confidence) + " for the intervals together (each at " + pctFine(c.IntervalConfidence) + ", Bonferroni over " + fmt.Sprint(c.Comparisons) + ")"}}, about...)
	for _, m := range c.Metrics {
		switch m.Verdict {
		case Worse:
			v.Worse = append(v.Worse, m.Line())
		case Unknown:
			v.Undecided = append(v.Undecided, m.Line())
		}
		v.Rows = append(v.Rows, compareRow{Sample: m.Sample, Metric: metricNames[m.Metric], Baseline: m.value(m.Baseline), Candidate: m.value(m.Candidate),
			Change: m.changeText(m.Change), Interval: m.intervalText(), Margin: m.marginText(), Verdict: m.Verdict, Method: m.Method})
	}
	for _, s := range c.Samples {
		for _, row := range []string{RowTFC, RowGap, RowTail} {
			if p := c.plot(s, row); p != nil {
				v.Plots = append(v.Plots, *p)
			}
		}
	}
	for _, r := range c.Resume {
		v.Resume = append(v.Resume, r.What+": baseline "+countsText(r.BaselineVerdicts)+"; candidate "+countsText(r.CandidateVerdicts))
	}
	return templates.ExecuteTemplate(w, "compare", v)
}

const compareCSS = `.ecdf.cand{stroke:#d4730b}.pct.cand{stroke:#d4730b}.pct.base{stroke:#1f6feb}td.worse{background:#fdd;color:#900;font-weight:bold}td.inconclusive{background:#fff5cc}td.same,td.better{background:#efe}`

// plot draws row of class s for both sides, nil when a side has no
// value.
func (c *Comparison) plot(s, row string) *comparePlot {
	values := func(sc *sideClass) []float64 {
		switch row {
		case RowTFC:
			return sc.tfc
		case RowTail:
			return sc.tail
		}
		return flat(sc.gaps)
	}
	b, d := Dist{Values: values(c.base[s])}, Dist{Values: values(c.cand[s])}
	if b.N() == 0 || d.N() == 0 {
		return nil
	}
	const width, left, right, top, plotH = 520.0, 8.0, 12.0, 6.0, 60.0
	hi := 1.0
	for _, v := range append(b.Values[:len(b.Values):len(b.Values)], d.Values...) {
		hi = max(hi, v)
	}
	span, step := axisSpan(hi*1.05, width-left-right)
	x := func(ms float64) float64 { return left + min(ms, span)/span*(width-left-right) }
	base := top + plotH
	y := func(share float64) float64 { return base - share*plotH }
	p := &comparePlot{Sample: s, Row: row, RowName: rowNames[row], Width: width, Height: base + 28, NBase: b.N(), NCand: d.N()}
	p.Base, _ = ecdf(b, x, y, span)
	p.Cand, _ = ecdf(d, x, y, span)
	p.Axis = axis{X1: x(0), X2: x(span), Y: base + 12, Ticks: axisTicks(x, span, step, base+12)}
	var labels []label
	for _, side := range []struct {
		d     Dist
		class string
		name  string
	}{{b, "pct base", "baseline"}, {d, "pct cand", "candidate"}} {
		for _, q := range []struct {
			q    float64
			name string
		}{{0.5, "p50"}, {0.95, "p95"}} {
			if v, _ := side.d.quantile(q.q); v != nil {
				p.Marks = append(p.Marks, mark{Class: side.class, X: x(*v), Y1: top, Y2: base, Title: side.name + " " + q.name + " " + msText(*v)})
				labels = append(labels, label{x: x(*v) + 2, text: side.name[:4] + " " + q.name})
			}
		}
	}
	for _, l := range layout(labels, width-2) {
		p.Labels = append(p.Labels, caption{X: l.x, Y: top + 8 + float64(l.lane)*11, Text: l.text})
	}
	return p
}
