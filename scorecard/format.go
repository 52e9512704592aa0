package scorecard

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

// How the card's numbers and cells read, the same in every output: the
// text table, the JUnit cases, the HTML page and the reasons of red cells.

// rowNames are the rows as the outputs name them.
var rowNames = map[string]string{
	RowTFC: "TFC", RowGap: "gap", RowTail: "tail", RowClose: "close",
	RowStallShare: fmt.Sprintf("stalled >%dms", probe.StallThresholdMs), RowBuffering: "buffering", RowOutcomes: "outcomes",
}

// msText is a duration in ms: whole ms from 10 ms, tenths below.
func msText(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// pctText is a share as a percentage, in whole percents.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

// pctFine is a share as a percentage: whole percents, or one decimal
// where it is not whole (95%, 99.5%, 4.3%): the intervals' bounds and
// levels.
func pctFine(v float64) string {
	p := v * 100
	if math.Abs(p-math.Round(p)) < 0.05 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// numText is a duration in ms without its unit, as msText writes it.
func numText(v float64) string { return strings.TrimSuffix(msText(v), " ms") }

// msInterval is an interval of times, "412..420 ms"; a missing bound is
// 0 (times are never negative) or inf.
func msInterval(lo, hi *float64) string { return interval(lo, hi) + " ms" }

// interval is an interval of times without its unit, "412..420".
func interval(lo, hi *float64) string {
	l, h := "0", "inf"
	if lo != nil {
		l = numText(*lo)
	}
	if hi != nil {
		h = numText(*hi)
	}
	return l + ".." + h
}

// pctInterval is a share's interval, "0..4.3%".
func pctInterval(lo, hi float64) string {
	return strings.TrimSuffix(pctFine(lo), "%") + ".." + pctFine(hi)
}

// burstText describes the bursts of a buffering cell.
func burstText(b *BufferingCell) string {
	if b.BurstsP50 == nil {
		return "no suspected run"
	}
	s := fmt.Sprintf("%.0f burst(s) per run (p50)", *b.BurstsP50)
	if *b.BurstsP50 == 1 {
		s = "one burst per run (p50): the chunks came together"
	}
	if b.FreezeMaxMs != nil {
		s += fmt.Sprintf(" split by freezes up to %s", msText(*b.FreezeMaxMs))
	}
	s += fmt.Sprintf(", gaps under %d ms inside them", probe.NearZeroGapMs)
	if b.FirstChunkAfterHeadersP50Ms != nil {
		s += fmt.Sprintf("; first chunk %s after the headers (p50)", msText(*b.FirstChunkAfterHeadersP50Ms))
	}
	return s
}

// drillWhy is a drill line's error and detail: "error; detail".
func drillWhy(d Drill) string {
	if d.Error == "" {
		return d.Detail
	}
	return strings.TrimSpace(d.Error + "; " + d.Detail)
}

// text is the cell as the table shows it, without colour, and its mark:
// "ok", "OVER" (a figure over its budget), "FAIL" (runs that failed or
// look buffered), or "" when there is nothing to judge.
func (ce *Cell) text() (text, mark string) {
	switch {
	case ce.Timing != nil:
		return timingText(ce.Timing, ce)
	case ce.Stall != nil:
		return stallText(ce.Stall, ce)
	case ce.Buffering != nil:
		return bufferingText(ce.Buffering, ce)
	case ce.Outcomes != nil:
		return outcomesText(ce.Outcomes, ce)
	}
	return "", ""
}

// judged is the mark of a judged cell: ok, INCONCLUSIVE, or red when it
// is over.
func judged(ce *Cell, red string) string {
	switch {
	case ce.Over:
		return red
	case ce.Verdict == Inconclusive:
		return Inconclusive
	}
	return "ok"
}

// timingText is "p50 / p95 ms [p95 interval] (<= budget)".
func timingText(t *TimingCell, ce *Cell) (string, string) {
	switch {
	case t.P50 == nil && ce.Why == NoSuccessfulRun:
		return NoSuccessfulRun, ""
	case t.P50 == nil && t.Budget != nil:
		return fmt.Sprintf("absent (<= %s)", msText(*t.Budget)), "OVER"
	case t.P50 == nil:
		return "absent", ""
	}
	s := fmt.Sprintf("%s / %s", numText(*t.P50), msText(*t.P95))
	if ce.Confidence > 0 {
		s += " [" + interval(t.P95Lo, t.P95Hi) + "]"
	}
	if t.Budget == nil {
		return s, ""
	}
	return s + fmt.Sprintf(" (<= %s)", numText(*t.Budget)), judged(ce, "OVER")
}

// stallText is "share of n runs [interval] (<= budget)".
func stallText(st *StallCell, ce *Cell) (string, string) {
	if st.Share == nil {
		return NoSuccessfulRun, ""
	}
	s := fmt.Sprintf("%.0f%% of %d runs", *st.Share*100, ce.N)
	if st.Lo != nil {
		s += " [" + pctInterval(*st.Lo, *st.Hi) + "]"
	}
	return s + fmt.Sprintf(" (<= %s)", pctText(st.Budget)), judged(ce, "OVER")
}

// bufferingText is "suspected of n runs, bursts".
func bufferingText(b *BufferingCell, ce *Cell) (string, string) {
	switch {
	case b.Unknown:
		return "not in the source", ""
	case b.Share == nil:
		return NoSuccessfulRun, ""
	case b.Suspected == 0:
		return "none", "ok"
	}
	text := fmt.Sprintf("%d of %d runs", b.Suspected, ce.N)
	if b.BurstsP50 != nil {
		text += fmt.Sprintf(", %.0f bursts", *b.BurstsP50)
	}
	return text, judged(ce, "FAIL")
}

// outcomesText counts the runs of each outcome.
func outcomesText(o *OutcomesCell, ce *Cell) (string, string) {
	var parts []string
	for _, name := range probe.Outcomes {
		if n := o.Counts[string(name)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	text := strings.Join(parts, ", ")
	if o.Lo != nil && (o.Budget > 0 || *o.FailedShare > 0) {
		text += fmt.Sprintf(" [failed %s] (<= %s)", pctInterval(*o.Lo, *o.Hi), pctText(o.Budget))
	}
	return text, judged(ce, "FAIL")
}

// Title names the card: its target, and its region or the fleet.
func (c *Card) Title() string {
	switch {
	case c.Fleet:
		return "target " + c.Target + ", fleet (every region)"
	case c.Region != "":
		return "target " + c.Target + ", region " + c.Region
	}
	return "target " + c.Target
}

// runsText is the run count line: n per sample for check, the count of
// each class for a report (runsPerSample 0).
func (c *Card) runsText(runsPerSample int) string {
	if runsPerSample > 0 {
		return fmt.Sprintf("%d runs per sample", runsPerSample)
	}
	var parts []string
	for _, s := range c.Samples {
		n := 0
		if cl := c.classes[s]; cl != nil {
			n = cl.Runs
		}
		parts = append(parts, fmt.Sprintf("%s %d", s, n))
	}
	return "runs: " + strings.Join(parts, ", ")
}

// levelText names the confidence of the card's intervals: "95%
// interval", or each level where classes differ (a sequential check's
// classes may end on looks of different alpha).
func (c *Card) levelText() string {
	var levels []string
	for _, s := range c.Samples {
		if l := pctFine(1 - c.alpha(s)); !slices.Contains(levels, l) {
			levels = append(levels, l)
		}
	}
	return strings.Join(levels, " / ") + " interval"
}
