package scorecard

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// metricNames are the compare metrics as the outputs name them.
var metricNames = map[string]string{
	"tfc_p50": "TFC p50", "tfc_p95": "TFC p95", "gap_p50": "gap p50", "gap_p95": "gap p95",
	"tail_p50": "tail p50", "tail_p95": "tail p95",
	"stall_share": rowNames[RowStallShare], "error_share": "failed runs", "buffering_share": "buffering",
}

// MetricName is a compare metric as the outputs name it.
func MetricName(m string) string { return metricNames[m] }

// value is a side's value of m as text: "413 ms", "100%", "-".
func (m MetricChange) value(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case m.Unit == "share":
		return pctFine(*v)
	}
	return msText(*v)
}

// changeText is a change as text: "+20.0%" for a time, "+5.0 pts" for a
// share.
func (m MetricChange) changeText(v *float64) string {
	if v == nil {
		return "-"
	}
	if m.Unit == "share" {
		return fmt.Sprintf("%+.1f pts", *v*100)
	}
	return fmt.Sprintf("%+.1f%%", *v*100)
}

// intervalText is the change's interval: "+19.9..+20.1%".
func (m MetricChange) intervalText() string {
	if m.Lo == nil || m.Hi == nil {
		return "-"
	}
	unit := "%"
	if m.Unit == "share" {
		unit = " pts"
	}
	return fmt.Sprintf("%+.1f..%+.1f%s", *m.Lo*100, *m.Hi*100, unit)
}

// marginText is the margin: "+10%" or "+5 pts".
func (m MetricChange) marginText() string {
	if m.Unit == "share" {
		return "+" + strings.TrimSuffix(pctFine(m.Margin), "%") + " pts"
	}
	return "+" + pctFine(m.Margin)
}

// Line is the metric in one line, as the lists of worse and
// inconclusive metrics give it.
func (m MetricChange) Line() string {
	return fmt.Sprintf("%s %s: %s, interval %s against the %s margin (%s -> %s; %s)", m.Sample, metricNames[m.Metric], m.changeText(m.Change),
		m.intervalText(), m.marginText(), m.value(m.Baseline), m.value(m.Candidate), m.Method)
}

// Text is the comparison as text: the verdict, what it compares, what
// got worse and what is undecided (each with its interval), then every
// metric, then the resume verdicts.
func (c *Comparison) Text(color bool, about [][2]string) string {
	var b strings.Builder
	word, rest, _ := strings.Cut(c.Verdict, " ")
	fmt.Fprintf(&b, "streamprobe compare: %s %s\n", paintVerdict(word, color), rest)
	lines := append([][2]string{{"baseline", c.Baseline}, {"candidate", c.Candidate},
		{"confidence", fmt.Sprintf("%s for the %d intervals together (each at %s, Bonferroni); bootstrap %d resamples, seed %d", pctFine(c.Confidence), c.Comparisons, pctFine(c.IntervalConfidence), c.Resamples, c.Seed)}}, about...)
	for _, l := range lines {
		fmt.Fprintf(&b, "  %-11s %s\n", l[0]+":", shown(l[1]))
	}
	for _, group := range []struct{ verdict, head string }{
		{Worse, "worse (the whole interval over the margin)"},
		{Unknown, "inconclusive (the interval straddles the margin: more runs decide)"},
	} {
		var ls []string
		for _, m := range c.Metrics {
			if m.Verdict == group.verdict {
				ls = append(ls, m.Line())
			}
		}
		if len(ls) > 0 {
			fmt.Fprintf(&b, "\n%s\n", group.head)
			for _, l := range ls {
				fmt.Fprintf(&b, "  %s\n", shown(l))
			}
		}
	}
	if len(c.HardFails) > 0 {
		b.WriteString("\nresume verdicts failing on the candidate only (a hard fail)\n")
		for _, h := range c.HardFails {
			fmt.Fprintf(&b, "  %s\n", shown(h))
		}
	}
	b.WriteString("\nevery metric (change: candidate against baseline; times relative, shares in points)\n")
	fmt.Fprintf(&b, "  %-8s %-15s %10s %10s %10s  %-20s %-8s %s\n", "class", "metric", "baseline", "candidate", "change", "interval", "margin", "verdict")
	for _, m := range c.Metrics {
		v := m.Verdict
		if v == "" {
			v = "not compared (no value on a side)"
		}
		fmt.Fprintf(&b, "  %-8s %-15s %10s %10s %10s  %-20s %-8s %s\n", shown(m.Sample), metricNames[m.Metric], m.value(m.Baseline), m.value(m.Candidate),
			m.changeText(m.Change), m.intervalText(), m.marginText(), paintChange(v, color))
	}
	if len(c.Resume) > 0 {
		b.WriteString("\nresume\n")
		for _, r := range c.Resume {
			fmt.Fprintf(&b, "  %s: baseline %d run(s), %d failed (%s); candidate %d run(s), %d failed (%s)\n", shown(r.What),
				r.BaselineRuns, r.BaselineFailed, shown(countsText(r.BaselineVerdicts)), r.CandidateRuns, r.CandidateFailed, shown(countsText(r.CandidateVerdicts)))
		}
	}
	fmt.Fprintf(&b, "\nverdict: %s (%d worse, %d inconclusive, %d same, %d better, %d hard fail(s))\n", paintVerdict(c.Result, color), c.Worse, c.Inconclusive, c.SameCount, c.Better, len(c.HardFails))
	return b.String()
}

func paintChange(v string, color bool) string {
	switch v {
	case Worse:
		return paint(v, red, color)
	case Unknown:
		return paint(v, yellow, color)
	case Same, Better:
		return paint(v, green, color)
	}
	return v
}

func countsText(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// WriteCompareJUnit writes the comparison as JUnit XML: one testsuite,
// a testcase per class and metric (failed when worse; inconclusive ones
// say so in their output) and per resume line (failed on a hard fail).
func WriteCompareJUnit(w io.Writer, c *Comparison, about [][2]string) error {
	s := junitSuite{Name: "streamprobe compare " + c.Baseline + " vs " + c.Candidate}
	s.Properties = append(s.Properties, junitProperty{"verdict", c.Verdict}, junitProperty{"result", c.Result},
		junitProperty{"baseline", c.Baseline}, junitProperty{"candidate", c.Candidate},
		junitProperty{"confidence", fmt.Sprintf("%g", c.Confidence)}, junitProperty{"comparisons", fmt.Sprint(c.Comparisons)})
	for _, l := range about {
		s.Properties = append(s.Properties, junitProperty{l[0], l[1]})
	}
	for _, m := range c.Metrics {
		tc := junitCase{Name: m.Sample + " " + metricNames[m.Metric], Classname: "streamprobe.compare." + m.Sample, SystemOut: m.Verdict + ": " + m.Line()}
		if m.Verdict == Worse {
			tc.Failure = &junitFailure{Message: m.Line(), Type: "worse", Text: m.Line()}
		}
		s.Cases = append(s.Cases, tc)
	}
	for _, r := range c.Resume {
		tc := junitCase{Name: r.What, Classname: "streamprobe.compare.resume", SystemOut: fmt.Sprintf("baseline %s; candidate %s", countsText(r.BaselineVerdicts), countsText(r.CandidateVerdicts))}
		if r.HardFail != "" {
			tc.Failure = &junitFailure{Message: r.HardFail, Type: "resume_hard_fail", Text: r.HardFail}
		}
		s.Cases = append(s.Cases, tc)
	}
	for _, tc := range s.Cases {
		s.Tests++
		if tc.Failure != nil {
			s.Failures++
		}
	}
	return writeJUnit(w, junitSuites{Name: "streamprobe compare", Tests: s.Tests, Failures: s.Failures, Suites: []junitSuite{s}})
}
