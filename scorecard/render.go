package scorecard

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/streamprobe/streamprobe/resumeclient"
)

var rowNames = map[string]string{
	"tfc": "TFC", "gap": "gap", "tail": "tail", "close": "close",
	"stall_share": "stalled >250ms", "buffering": "buffering", "outcomes": "outcomes",
}

const (
	red   = "\x1b[31m"
	green = "\x1b[32m"
	bold  = "\x1b[1m"
	reset = "\x1b[0m"
)

// shown is a text of the card as a terminal may print it: what came from
// the network is already scrubbed in a probe's record, but a report reads
// records back from files, so every free text passes the gate again
// (control characters made visible; it changes nothing on a clean text).
func shown(s string) string { return resumeclient.Scrub(s, nil, 0) }

func paint(s, code string, color bool) string {
	if !color {
		return s
	}
	return code + s + reset
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

// DashboardNote says how the card's numbers show elsewhere: dashboards
// read them from histogram buckets, the TFC alert counts runs over budget.
const DashboardNote = "(dashboards show these within one histogram bucket, 13.6% with vmrange; the TFC alert counts runs over budget, as this card does)"

// Text renders the card as a table for a terminal or a log; color adds ANSI
// colours to the marks.
func (c *Card) Text(color bool, runsPerSample int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", paint(shown(c.Title()), bold, color))
	const w0, w = 16, 34
	if c.Source != "" {
		fmt.Fprintf(&b, "  from %s\n", c.Source)
	}
	if c.Resolution != "" {
		fmt.Fprintf(&b, "  resolution: %s\n", c.Resolution)
	}
	if len(c.Samples) > 0 {
		fmt.Fprintf(&b, "  %s; cells: p50 / p95 (<= p95 budget)\n", c.runsText(runsPerSample))
		if runsPerSample > 0 {
			b.WriteString("  " + DashboardNote + "\n")
		}
		head := fmt.Sprintf("  %-*s", w0, "")
		for _, s := range c.Samples {
			head += fmt.Sprintf("%-*s", w, s)
		}
		b.WriteString(strings.TrimRight(head, " ") + "\n")
	}
	for _, row := range Rows {
		if len(c.Samples) == 0 {
			break
		}
		var line strings.Builder
		fmt.Fprintf(&line, "  %-*s", w0, rowNames[row])
		for _, s := range c.Samples {
			text, mark := cellText(c.cell(row, s))
			line.WriteString(text)
			pad := w - len(text)
			if mark != "" {
				code := green
				if mark != "ok" {
					code = red
				}
				line.WriteString(" " + paint(mark, code, color))
				pad -= len(mark) + 1
			}
			line.WriteString(strings.Repeat(" ", max(1, pad)))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	if len(c.Drills) > 0 {
		b.WriteString("  resume drills\n")
		for _, d := range c.Drills {
			mark := paint(strings.ToUpper(shown(d.Verdict)), green, color)
			if d.Failed {
				mark = paint(strings.ToUpper(shown(d.Verdict)), red, color)
			}
			detail := d.Detail
			if d.Error != "" {
				detail = strings.TrimSpace(d.Error + "; " + detail)
			}
			fmt.Fprintf(&b, "    %-10s %s%s  %s\n", shown(d.Drill), mark, strings.Repeat(" ", max(0, 15-len(d.Verdict))), shown(detail))
		}
	}
	if red := c.RedCells(); len(red) > 0 {
		b.WriteString("  red cells\n")
		for _, ce := range red {
			fmt.Fprintf(&b, "    %s %s: %s\n", shown(ce.Sample), rowNames[ce.Row], shown(ce.Why))
		}
	}
	if len(c.Triage) > 0 {
		b.WriteString("  triage, in the scorecard's order\n")
		for _, t := range c.Triage {
			fmt.Fprintf(&b, "    %s\n", shown(t))
		}
	}
	verdict := paint("PASS", green, color)
	if !c.Pass {
		verdict = paint("FAIL", red, color)
	}
	failedDrills := 0
	for _, d := range c.Drills {
		if d.Failed {
			failedDrills++
		}
	}
	fmt.Fprintf(&b, "  verdict: %s (%d red cell(s), %d failing drill(s))\n", verdict, len(c.RedCells()), failedDrills)
	return b.String()
}

// JUnit XML, one testsuite per target, one testcase per cell and drill.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes check's cards as JUnit XML.
func WriteJUnit(w io.Writer, cards []*Card) error {
	return WriteJUnitNamed(w, "streamprobe check", cards)
}

// WriteJUnitNamed writes the cards as JUnit XML under name, one testsuite
// per card (a report's region cards and fleet card apart).
func WriteJUnitNamed(w io.Writer, name string, cards []*Card) error {
	all := junitSuites{Name: name}
	for _, c := range cards {
		scope, class := c.Target, "streamprobe."+c.Target
		switch {
		case c.Fleet:
			scope, class = c.Target+" fleet", "streamprobe.fleet."+c.Target
		case c.Region != "":
			scope, class = c.Target+" region "+c.Region, "streamprobe."+c.Region+"."+c.Target
		}
		s := junitSuite{Name: name + " " + scope}
		for _, ce := range c.Cells {
			text, _ := cellText(&ce)
			tc := junitCase{Name: ce.Sample + " " + rowNames[ce.Row], Classname: class + "." + ce.Sample, SystemOut: text}
			if ce.Over {
				tc.Failure = &junitFailure{Message: ce.Why, Type: "over_budget", Text: ce.Sample + " " + rowNames[ce.Row] + ": " + ce.Why}
			}
			s.Cases = append(s.Cases, tc)
		}
		for _, d := range c.Drills {
			tc := junitCase{Name: "drill " + d.Drill, Classname: class + ".drills", SystemOut: d.Verdict + ": " + d.Detail}
			if d.Failed {
				msg := d.Detail
				if d.Error != "" {
					msg = strings.TrimSpace(d.Error + "; " + msg)
				}
				tc.Failure = &junitFailure{Message: msg, Type: "resume_" + d.Verdict, Text: msg}
			}
			s.Cases = append(s.Cases, tc)
		}
		for _, tc := range s.Cases {
			s.Tests++
			if tc.Failure != nil {
				s.Failures++
			}
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, s)
	}
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
