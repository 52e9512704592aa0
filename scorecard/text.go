package scorecard

import (
	"fmt"
	"io"
	"strings"

	"github.com/streamprobe/streamprobe/textgate"
)

const (
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

// shown is a text of the card as a terminal may print it: what came from
// the network is already scrubbed in a probe's record, but a report reads
// records back from files, so every free text passes the gate again
// (control characters made visible; it changes nothing on a clean text).
func shown(s string) string { return textgate.Scrub(s, nil, 0) }

// paintVerdict is a verdict in its colour: PASS green, FAIL red,
// INCONCLUSIVE yellow.
func paintVerdict(v string, color bool) string {
	switch v {
	case Pass:
		return paint(v, green, color)
	case Inconclusive:
		return paint(v, yellow, color)
	}
	return paint(v, red, color)
}

func paint(s, code string, color bool) string {
	if !color {
		return s
	}
	return code + s + reset
}

// DashboardNote says how the card's numbers show elsewhere: dashboards
// read them from histogram buckets, the TFC alert counts runs over budget.
const DashboardNote = "(dashboards show these within one histogram bucket, 13.6% with vmrange; the TFC alert counts runs over budget, as this card does)"

// Text renders the card as a table for a terminal or a log; color adds ANSI
// colours to the marks.
func (c *Card) Text(color bool, runsPerSample int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", paint(shown(c.Title()), bold, color))
	if c.Source != "" {
		fmt.Fprintf(&b, "  from %s\n", c.Source)
	}
	if c.Resolution != "" {
		fmt.Fprintf(&b, "  resolution: %s\n", c.Resolution)
	}
	if len(c.Samples) > 0 {
		fmt.Fprintf(&b, "  %s; cells: p50 / p95 [the p95's %s] (<= p95 budget)\n", c.runsText(runsPerSample), c.levelText())
		if runsPerSample > 0 {
			b.WriteString("  " + DashboardNote + "\n")
		}
		c.textTable(&b, color)
	}
	if notes := c.smallSamples(); len(notes) > 0 {
		fmt.Fprintf(&b, "  small samples (%s)\n", SmallSampleNote)
		for _, n := range notes {
			fmt.Fprintf(&b, "    %s\n", shown(n))
		}
	}
	c.textDrills(&b, color)
	if c.NoRun {
		b.WriteString("  " + NoRunNote + "\n")
	}
	if red := c.RedCells(); len(red) > 0 {
		b.WriteString("  red cells\n")
		for _, ce := range red {
			fmt.Fprintf(&b, "    %s %s: %s\n", shown(ce.Sample), rowNames[ce.Row], shown(ce.Why))
		}
	}
	if undecided := c.InconclusiveCells(); len(undecided) > 0 {
		b.WriteString("  inconclusive cells (the interval straddles the budget: more runs decide)\n")
		for _, ce := range undecided {
			fmt.Fprintf(&b, "    %s %s: %s\n", shown(ce.Sample), rowNames[ce.Row], shown(ce.Why))
		}
	}
	if len(c.Triage) > 0 {
		b.WriteString("  triage, in the scorecard's order\n")
		for _, t := range c.Triage {
			fmt.Fprintf(&b, "    %s\n", shown(t))
		}
	}
	fmt.Fprintf(&b, "  verdict: %s (%d red cell(s), %d inconclusive, %d failing drill(s))\n", paintVerdict(c.Verdict, color), len(c.RedCells()), len(c.InconclusiveCells()), c.failedDrills())
	return b.String()
}

// WriteText writes the cards as Text does, a blank line between two.
func WriteText(w io.Writer, cards []*Card, color bool, runsPerSample int) error {
	for i, c := range cards {
		text := c.Text(color, runsPerSample)
		if i > 0 {
			text = "\n" + text
		}
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
	}
	return nil
}

// WritePageText writes the page's head (its verdict and what it covers,
// when it has an About) and a blank line, then the cards as WriteText does.
func WritePageText(w io.Writer, p Page, cards []*Card, color bool) error {
	if p.About != nil {
		if _, err := io.WriteString(w, p.About.Head(p.Verdict, color)+"\n"); err != nil {
			return err
		}
	}
	return WriteText(w, cards, color, p.RunsPerSample)
}

// textTable writes the cells, a column per class, each cell's text
// followed by its mark.
func (c *Card) textTable(b *strings.Builder, color bool) {
	const w0, w = 16, 46
	head := fmt.Sprintf("  %-*s", w0, "")
	for _, s := range c.Samples {
		head += fmt.Sprintf("%-*s", w, s)
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n")
	for _, row := range Rows {
		var line strings.Builder
		fmt.Fprintf(&line, "  %-*s", w0, rowNames[row])
		for _, s := range c.Samples {
			text, mark := c.cell(row, s).text()
			line.WriteString(text)
			pad := w - len(text)
			if mark != "" {
				code := green
				switch mark {
				case "ok":
				case Inconclusive:
					code = yellow
				default:
					code = red
				}
				line.WriteString(" " + paint(mark, code, color))
				pad -= len(mark) + 1
			}
			line.WriteString(strings.Repeat(" ", max(1, pad)))
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// textDrills writes a line per drill: its verdict, error and detail.
func (c *Card) textDrills(b *strings.Builder, color bool) {
	if len(c.Drills) == 0 {
		return
	}
	b.WriteString("  resume drills\n")
	for _, d := range c.Drills {
		code := green
		if d.Failed {
			code = red
		}
		fmt.Fprintf(b, "    %-10s %s%s  %s\n", shown(d.Drill), paint(strings.ToUpper(shown(d.Verdict)), code, color), strings.Repeat(" ", max(0, 15-len(d.Verdict))), shown(drillWhy(d)))
	}
}
