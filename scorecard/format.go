package scorecard

import (
	"fmt"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

var rowNames = map[string]string{
	"tfc": "TFC", "gap": "gap", "tail": "tail", "close": "close",
	"stall_share": "stalled >250ms", "buffering": "buffering", "outcomes": "outcomes",
}

func msText(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// pctText is a share as a percentage.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

// burstText describes the bursts of a buffering cell.
func burstText(ce *Cell) string {
	if ce.BurstsP50 == nil {
		return "no suspected run"
	}
	s := fmt.Sprintf("%.0f burst(s) per run (p50)", *ce.BurstsP50)
	if *ce.BurstsP50 == 1 {
		s = "one burst per run (p50): the chunks came together"
	}
	if ce.FreezeMaxMs != nil {
		s += fmt.Sprintf(" split by freezes up to %s", msText(*ce.FreezeMaxMs))
	}
	s += fmt.Sprintf(", gaps under %d ms inside them", probe.NearZeroGapMs)
	if ce.FirstChunkAfterHeadersP50Ms != nil {
		s += fmt.Sprintf("; first chunk %s after the headers (p50)", msText(*ce.FirstChunkAfterHeadersP50Ms))
	}
	return s
}

// cellText is a cell as the table shows it, without colour, and its mark.
func cellText(ce *Cell) (string, string) {
	switch ce.Row {
	case "stall_share":
		if ce.Share == nil {
			return NoSuccessfulRun, ""
		}
		text := fmt.Sprintf("%.0f%% of %d runs", *ce.Share*100, ce.N)
		if ce.ShareBudget == nil {
			return text, ""
		}
		text += fmt.Sprintf(" (<= %s)", pctText(*ce.ShareBudget))
		if ce.Over {
			return text, "OVER"
		}
		return text, "ok"
	case "buffering":
		switch {
		case ce.Unknown:
			return "not in the source", ""
		case ce.Share == nil:
			return NoSuccessfulRun, ""
		case ce.Suspected == 0:
			return "none", "ok"
		}
		text := fmt.Sprintf("%d of %d runs", ce.Suspected, ce.N)
		if ce.BurstsP50 != nil {
			text += fmt.Sprintf(", %.0f bursts", *ce.BurstsP50)
		}
		if ce.Over {
			return text, "FAIL"
		}
		return text, "ok"
	case "outcomes":
		var parts []string
		for _, o := range []string{"success", "client_cancelled", "upstream_error", "timeout", "protocol_error"} {
			if n := ce.Outcomes[o]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", o, n))
			}
		}
		mark := "ok"
		if ce.Over {
			mark = "FAIL"
		}
		return strings.Join(parts, ", "), mark
	}
	if ce.P50 == nil {
		if ce.Why == NoSuccessfulRun {
			return NoSuccessfulRun, ""
		}
		if ce.Budget != nil {
			return fmt.Sprintf("absent (<= %s)", msText(*ce.Budget)), "OVER"
		}
		return "absent", ""
	}
	s := fmt.Sprintf("%s / %s", strings.TrimSuffix(msText(*ce.P50), " ms"), msText(*ce.P95))
	if ce.Budget == nil {
		return s, ""
	}
	s += fmt.Sprintf(" (<= %s)", strings.TrimSuffix(msText(*ce.Budget), " ms"))
	if ce.Over {
		return s, "OVER"
	}
	return s, "ok"
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
