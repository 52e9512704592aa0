package scorecard

import (
	"fmt"
	"strings"
)

// The small-sample rule, defined once: a percentile rests on enough runs
// when at least one run lies above it, so pN needs 100/(100-N) runs: the
// p50 2, the p95 20. Under that, a card's p95 is its slowest run or an
// interpolation towards it. A cell with fewer runs gets a note; the note
// never changes a cell's mark or the verdict.

// MinRuns are the runs each percentile of the card needs.
var MinRuns = []struct {
	Name string
	Runs int
}{{"p50", 2}, {"p95", 20}}

// SmallSample is the note for percentiles that rest on runs runs: ""
// when every percentile has the runs it needs, else "p95 on 3 runs, fewer
// than the 20 a p95 needs".
func SmallSample(runs int) string {
	var short, need []string
	for _, m := range MinRuns {
		if runs < m.Runs {
			short = append(short, m.Name)
			need = append(need, fmt.Sprintf("%d a %s", m.Runs, m.Name))
		}
	}
	if len(short) == 0 || runs == 0 {
		return ""
	}
	verb := "needs"
	if len(need) > 1 {
		verb = "need"
	}
	return fmt.Sprintf("%s on %d run(s), fewer than the %s %s", strings.Join(short, " and "), runs, strings.Join(need, " and the "), verb)
}

// SmallSampleNote says what a small-sample note means, where the notes are
// listed.
const SmallSampleNote = "a note, not a verdict: the marks stand"

// smallSamples are the card's small-sample notes, one per class with one:
// "short: p95 on 3 run(s), ...".
func (c *Card) smallSamples() []string {
	var out []string
	for _, s := range c.Samples {
		if ce := c.cell(RowTFC, s); ce != nil && ce.SmallSample != "" {
			out = append(out, s+": "+ce.SmallSample)
		}
	}
	return out
}
