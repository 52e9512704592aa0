package scorecard

import (
	"fmt"

	"github.com/streamprobe/streamprobe/dialect"
)

// The triage's thresholds: a ratio at or over one names its cause. A
// ratio within TriageMargin of a threshold (relative, either side) is
// not decided: noise of a few ms must not flip a cause (x1.47 and x1.53
// against x1.5 say the same thing: near).
const (
	// SpreadRatio: gap p95 over p50 from which the spread is stalls.
	SpreadRatio = 3.0
	// PromptRatio: TFC p50 of the largest prompt over the smallest's
	// from which TFC tracks prompt length.
	PromptRatio = 1.5
	// SetupShare: connection setup's share of the TFC from which
	// connecting dominates it.
	SetupShare = 0.5
	// TriageMargin is the band around each threshold, +-5%.
	TriageMargin = 0.05
)

// Side is where a ratio lies against a threshold.
type Side int

// Below, Near and Above: under the band, within it, over it.
const (
	Below Side = iota
	Near
	Above
)

// Against places ratio against threshold with the TriageMargin band.
func Against(ratio, threshold float64) Side {
	switch {
	case ratio >= threshold*(1+TriageMargin):
		return Above
	case ratio > threshold*(1-TriageMargin):
		return Near
	}
	return Below
}

// nearText says a ratio is within the band of its threshold.
func nearText(threshold float64) string {
	return fmt.Sprintf("near the x%g threshold (within %.0f%%): not decided", threshold, TriageMargin*100)
}

// triageRows are the rows the article's triage explains: a red outcomes
// row is explained by its failing run instead.
var triageRows = []string{RowTFC, RowGap, RowTail, RowClose, RowStallShare, RowBuffering}

// triage states, for each class with a red timing cell, the article's
// checks in their fixed order, from the data the card has.
func (c *Card) triage() []string {
	var out []string
	for _, s := range c.Samples {
		red := false
		for _, row := range triageRows {
			if c.cell(row, s).Over {
				red = true
			}
		}
		if b := c.cell(RowBuffering, s); b.Buffering.Suspected > 0 {
			out = append(out, fmt.Sprintf("%s: suspected proxy buffering in %d of %d runs: %s (check proxy_buffering / X-Accel-Buffering)", s, b.Buffering.Suspected, b.N, burstText(b.Buffering)))
		}
		if !red {
			continue
		}
		out = append(out, fmt.Sprintf("%s, 1. tail vs output length: %s", s, c.tokens(s)))
		out = append(out, fmt.Sprintf("%s, 2. gap p95 vs p50: %s", s, c.spread(s)))
		out = append(out, fmt.Sprintf("%s, 3. TFC vs prompt size: %s%s", s, c.prompt(), c.setup(s)))
		out = append(out, fmt.Sprintf("%s, 4. resume rate: %s", s, c.resumeRate(s)))
	}
	return out
}

func (c *Card) tokens(s string) string {
	comp, tps := c.classes[s].Tokens, c.classes[s].TPS
	p50, _ := comp.quantile(0.5)
	if p50 == nil {
		return "no token counts were reported, so a longer answer cannot be told from a slower one"
	}
	msg := fmt.Sprintf("median output %.0f tokens", *p50)
	if t, _ := tps.quantile(0.5); t != nil {
		msg += fmt.Sprintf(" at %.1f visible tokens/s", *t)
	}
	return msg + "; if the output grew, the tail moved for a boring reason"
}

func (c *Card) spread(s string) string {
	gc := c.cell(RowGap, s)
	g := gc.Timing
	if g.P50 == nil {
		return "no gaps measured"
	}
	pair := fmt.Sprintf("p95 %s vs p50 %s", msText(*g.P95), msText(*g.P50))
	if c.cell(RowBuffering, s).Over {
		return pair + ": the gaps collapsed into bursts, and the freezes between them are a few gaps the percentiles hide; not the model: see the buffering row"
	}
	ratio := *g.P95 / max(*g.P50, 0.001)
	switch Against(ratio, SpreadRatio) {
	case Above:
		return fmt.Sprintf("%s (x%.2f): a wide spread is stalls", pair, ratio)
	case Near:
		return fmt.Sprintf("%s (x%.2f): %s between stalls and a slow model", pair, ratio, nearText(SpreadRatio))
	}
	if st := c.cell(RowStallShare, s); st.Over {
		return fmt.Sprintf("%s (x%.2f): narrow, yet %s of runs stalled over 250 ms: a few long freezes per run that the percentiles smooth over, not a slow model", pair, ratio, pctText(*st.Stall.Share))
	}
	if gc.Over {
		return fmt.Sprintf("%s (x%.2f): narrow but high is a slow model or heavy batching", pair, ratio)
	}
	if g.Budget == nil {
		return fmt.Sprintf("%s (x%.2f): narrow, and no gap budget to call it high", pair, ratio)
	}
	return fmt.Sprintf("%s (x%.2f): narrow and within budget: the gaps are not what is red", pair, ratio)
}

// prompt compares the TFC p50 of the class of the largest prompt with
// that of the smallest: a TFC that grows with the prompt is prefill.
func (c *Card) prompt() string {
	small, large := c.promptPair()
	lo, hi := c.cell(RowTFC, small), c.cell(RowTFC, large)
	if lo == nil || hi == nil || lo.Timing.P50 == nil || hi.Timing.P50 == nil {
		return fmt.Sprintf("needs both the %s and the %s class measured", small, large)
	}
	ratio := *hi.Timing.P50 / max(*lo.Timing.P50, 0.001)
	pair := fmt.Sprintf("%s p50 %s vs %s p50 %s", large, msText(*hi.Timing.P50), small, msText(*lo.Timing.P50))
	side := Against(ratio, PromptRatio)
	pair += fmt.Sprintf(" (x%.2f)", ratio)
	switch {
	case side == Above:
		return pair + ": TFC tracks prompt length, a prefill problem"
	case side == Near:
		return pair + ": " + nearText(PromptRatio) + " whether TFC tracks prompt length (prefill) or is flat (queueing or buffering)"
	case c.cell(RowBuffering, small).Over || c.cell(RowBuffering, large).Over:
		return pair + ": flat across prompt sizes; suspected proxy buffering (see the buffering row): the TFC is when the proxy let the answer go, not when the model started"
	}
	return pair + ": flat across prompt sizes; if high, queueing or buffering"
}

// promptPair names the classes prompt compares: of the card's classes,
// the first of the smallest prompt and the first of the largest. When
// the card's classes have fewer than two prompt sizes, it names the
// samples this binary knows (dialect.SampleNames) that would have them.
func (c *Card) promptPair() (small, large string) {
	var classes []string
	for _, s := range c.Samples {
		if c.classes[s].PromptSize > 0 {
			classes = append(classes, s)
		}
	}
	size := func(s string) int { return c.classes[s].PromptSize }
	if small, large, ok := extremes(classes, size); ok {
		return small, large
	}
	small, large, _ = extremes(dialect.SampleNames, PromptSize)
	return small, large
}

// extremes is the first name of the smallest size and the first of the
// largest; ok when the sizes differ.
func extremes(names []string, size func(string) int) (small, large string, ok bool) {
	for _, n := range names {
		if small == "" || size(n) < size(small) {
			small = n
		}
		if large == "" || size(n) > size(large) {
			large = n
		}
	}
	return small, large, small != "" && size(small) != size(large)
}

// setup says how much of the TFC the connection's setup took, and names a
// TFC dominated by it: the network path or TLS termination, not the model.
func (c *Card) setup(s string) string {
	cl := c.classes[s]
	if cl == nil || cl.Setup.N() == 0 {
		return ""
	}
	setup, _ := cl.Setup.quantile(0.5)
	tfc, _ := cl.SetupTFC.quantile(0.5)
	share := *setup / max(*tfc, 0.001)
	msg := fmt.Sprintf("; connection setup (DNS+TCP+TLS) p50 %s of TFC p50 %s (%.0f%%)", msText(*setup), msText(*tfc), share*100)
	switch Against(share, SetupShare) {
	case Above:
		msg += ": TFC is dominated by connecting, not by the model: look at the network path, DNS or TLS termination"
	case Near:
		msg += fmt.Sprintf(": near half (%.0f%% vs %.0f%%), not decided whether connecting dominates the TFC", share*100, SetupShare*100)
	}
	return msg
}

func (c *Card) resumeRate(s string) string {
	n, resumed := c.classes[s].Runs, c.classes[s].Resumed
	msg := fmt.Sprintf("%d of %d runs resumed", resumed, n)
	if failed := c.failedDrills(); failed > 0 {
		msg += fmt.Sprintf("; %d resume drill(s) failed: fix reconnection before tuning anything", failed)
	}
	return msg
}
