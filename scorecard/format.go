package scorecard

import (
	"fmt"
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

// pctText is a share as a percentage.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

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

// judged is the mark of a judged cell: ok, or red when it is over.
func judged(ce *Cell, red string) string {
	if ce.Over {
		return red
	}
	return "ok"
}

// timingText is "p50 / p95 ms (<= budget)".
func timingText(t *TimingCell, ce *Cell) (string, string) {
	switch {
	case t.P50 == nil && ce.Why == NoSuccessfulRun:
		return NoSuccessfulRun, ""
	case t.P50 == nil && t.Budget != nil:
		return fmt.Sprintf("absent (<= %s)", msText(*t.Budget)), "OVER"
	case t.P50 == nil:
		return "absent", ""
	}
	s := fmt.Sprintf("%s / %s", strings.TrimSuffix(msText(*t.P50), " ms"), msText(*t.P95))
	if t.Budget == nil {
		return s, ""
	}
	return s + fmt.Sprintf(" (<= %s)", strings.TrimSuffix(msText(*t.Budget), " ms")), judged(ce, "OVER")
}

// stallText is "share of n runs (<= budget)".
func stallText(st *StallCell, ce *Cell) (string, string) {
	if st.Share == nil {
		return NoSuccessfulRun, ""
	}
	return fmt.Sprintf("%.0f%% of %d runs (<= %s)", *st.Share*100, ce.N, pctText(st.Budget)), judged(ce, "OVER")
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
	return strings.Join(parts, ", "), judged(ce, "FAIL")
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
