// Package scorecard is the acceptance check's sink: it reduces the records
// of many runs into the scorecard article's three columns (one per sample
// class), each cell a p50 and a p95 against the class budget, names the red
// cells with the article's triage, and renders the card as text, JSON,
// JUnit XML and a self-contained HTML report. Percentiles across runs come
// from the raw per-run values, never from averaging per-run percentiles.
package scorecard

import (
	"fmt"
	"slices"
	"sort"

	"github.com/streamprobe/streamprobe/probe"
)

// Run is one finished run with the timeline the report draws.
type Run struct {
	Record probe.Record
	// Chunks are the chunk arrival times, ms from the start.
	Chunks []float64
	// End is the end marker, ms from the start, when there was one.
	End *float64
	// Bands are the reconnects: from the drop to the first chunk after.
	Bands []Band
}

// Band is one reconnect on a timeline.
type Band struct {
	DropMs, FirstChunkMs, HandshakeMs float64
	// Chunk is the index of the first chunk after the reconnect.
	Chunk int
}

// FromResult makes a Run of a probe result.
func FromResult(res probe.Result) Run {
	tl := res.Timeline
	chunks, end := tl.Millis()
	r := Run{Record: res.Record, Chunks: chunks, End: end}
	for _, sp := range tl.ResumeSpans() {
		r.Bands = append(r.Bands, Band{
			Chunk:        sp.Chunk,
			DropMs:       float64(sp.Drop.Sub(tl.Start)) / 1e6,
			FirstChunkMs: float64(sp.End.Sub(tl.Start)) / 1e6,
			HandshakeMs:  float64(sp.Handshake) / 1e6,
		})
	}
	return r
}

// Budget is the budget of one class: p95 budgets in ms (0 means none) and
// the stall-share budget.
type Budget struct {
	TFC, Gap, Tail float64
	// StallShare is the largest share (0..1) of runs that may stall over
	// 250 ms; nil means DefaultStallShare.
	StallShare *float64
}

// DefaultStallShare is the stall-share budget of a class that sets none:
// the p95 convention of every other cell, applied to runs. A share over
// 0.05 means the p95 run froze over 250 ms; with 20 runs, one stalled run
// passes and a second one fails.
const DefaultStallShare = 0.05

// BufferingShare is the share of a class's runs that must look
// proxy-buffered (probe.Record.Buffering) for the buffering row to be red:
// a buffering proxy does it to every run, while a client that was
// descheduled once can make one run look so.
const BufferingShare = 0.5

// Rows of the card, in order.
var Rows = []string{"tfc", "gap", "tail", "close", "stall_share", "buffering", "outcomes"}

// Cell is one row of one class.
type Cell struct {
	Row    string   `json:"row"`
	Sample string   `json:"sample"`
	N      int      `json:"n"`
	P50    *float64 `json:"p50_ms,omitempty"`
	P95    *float64 `json:"p95_ms,omitempty"`
	Budget *float64 `json:"budget_p95_ms,omitempty"`
	// Share is the stall share (runs with any gap over 250 ms) in the
	// stall_share row, the share of runs that look proxy-buffered in the
	// buffering row; ShareBudget is the stall-share budget.
	Share       *float64 `json:"share,omitempty"`
	ShareBudget *float64 `json:"share_budget,omitempty"`
	// Suspected counts the runs that look proxy-buffered, BurstsP50 is
	// their median burst count and FreezeMaxMs their longest freeze
	// (buffering row).
	Suspected   int      `json:"suspected,omitempty"`
	BurstsP50   *float64 `json:"bursts_p50,omitempty"`
	FreezeMaxMs *float64 `json:"freeze_max_ms,omitempty"`
	// FirstChunkAfterHeadersP50Ms is the median wait from the headers to
	// the first chunk of the suspected runs (buffering row).
	FirstChunkAfterHeadersP50Ms *float64 `json:"first_chunk_after_headers_p50_ms,omitempty"`
	// Outcomes counts the runs by outcome (outcomes row).
	Outcomes map[string]int `json:"outcomes,omitempty"`
	// FailedRun is the representative failing run (outcomes row): why
	// runs failed, as the most common way they did.
	FailedRun *FailedRun `json:"failed_run,omitempty"`
	Over      bool       `json:"over"`
	Why       string     `json:"why,omitempty"`
}

// FailedRun is the representative of a class's failing runs: the first
// run of the most common way they failed (outcome and HTTP status).
type FailedRun struct {
	Outcome    string `json:"outcome"`
	HTTPStatus int    `json:"http_status,omitempty"`
	Error      string `json:"error,omitempty"`
	Verdict    string `json:"resume_verdict,omitempty"`
	RequestID  string `json:"request_id"`
	// Like is how many of the failing runs failed the same way.
	Like int `json:"like"`
}

// String is the failing run in one line: outcome, HTTP status, error.
func (f *FailedRun) String() string {
	s := f.Outcome
	if f.HTTPStatus != 0 {
		s += fmt.Sprintf(", HTTP %d", f.HTTPStatus)
	}
	if f.Verdict != "" && f.Outcome == string(probe.Success) {
		s += ", resume verdict " + f.Verdict
	}
	if f.Error != "" {
		s += ": " + f.Error
	}
	return s + " (request_id " + f.RequestID + ")"
}

// failedRun picks the representative failing run of runs, nil when all
// passed.
func failedRun(runs []Run) *FailedRun {
	type way struct {
		o      probe.Outcome
		status int
	}
	count, first := map[way]int{}, map[way]*probe.Record{}
	var order []way
	for i := range runs {
		rec := &runs[i].Record
		if rec.Passed() {
			continue
		}
		k := way{rec.Outcome, rec.HTTPStatus}
		if count[k] == 0 {
			order = append(order, k)
			first[k] = rec
		}
		count[k]++
	}
	if len(order) == 0 {
		return nil
	}
	best := order[0]
	for _, k := range order[1:] {
		if count[k] > count[best] {
			best = k
		}
	}
	rec := first[best]
	return &FailedRun{Outcome: string(rec.Outcome), HTTPStatus: rec.HTTPStatus, Error: rec.Error,
		Verdict: string(rec.Verdict), RequestID: rec.RequestID, Like: count[best]}
}

// NoSuccessfulRun is the text of a timing cell of a class where no run
// ended as its sample intends: nothing to measure, and the outcomes row
// says why.
const NoSuccessfulRun = "no successful run"

// Drill is the result of one resume drill.
type Drill struct {
	Drill     string `json:"drill"`
	Verdict   string `json:"verdict"`
	Detail    string `json:"detail,omitempty"`
	Outcome   string `json:"outcome"`
	Error     string `json:"error,omitempty"`
	RequestID string `json:"request_id"`
	Failed    bool   `json:"failed"`
}

// Card is the scorecard of one target.
type Card struct {
	Target     string              `json:"target"`
	Samples    []string            `json:"samples"`
	Cells      []Cell              `json:"cells"`
	Drills     []Drill             `json:"drills,omitempty"`
	Triage     []string            `json:"triage,omitempty"`
	RequestIDs map[string][]string `json:"request_ids"`
	Pass       bool                `json:"pass"`

	runs   map[string][]Run
	drills []Run
}

func pcts(vals []float64) (*float64, *float64) {
	if len(vals) == 0 {
		return nil, nil
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	p50, _ := probe.Percentile(s, 50)
	p95, _ := probe.Percentile(s, 95)
	return &p50, &p95
}

func budgetPtr(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}

// Build reduces runs (by sample) and drill runs of one target. samples
// gives the column order.
func Build(target string, samples []string, runs map[string][]Run, drills []Run, budgets map[string]Budget) *Card {
	c := &Card{Target: target, Samples: samples, RequestIDs: map[string][]string{}, runs: runs, drills: drills}
	for _, s := range samples {
		b := budgets[s]
		var tfc, gaps, tail, closeMs, bursts, afterHeaders []float64
		var freezeMax *float64
		stalled, good, suspected := 0, 0, 0
		outcomes := map[string]int{}
		failed, badVerdict := 0, 0
		for _, r := range runs[s] {
			rec := r.Record
			c.RequestIDs[s] = append(c.RequestIDs[s], rec.RequestID)
			outcomes[string(rec.Outcome)]++
			if !rec.Passed() {
				failed++
				if rec.Intended() {
					badVerdict++
				}
			}
			if !rec.Intended() {
				continue
			}
			// Resumed runs never enter these cells.
			if rec.Resumed {
				continue
			}
			good++
			if rec.TFCMs != nil {
				tfc = append(tfc, *rec.TFCMs)
			}
			gaps = append(gaps, rec.Gaps.Values...)
			if rec.TailMs != nil {
				tail = append(tail, *rec.TailMs)
			}
			if rec.CloseMs != nil {
				closeMs = append(closeMs, *rec.CloseMs)
			}
			if rec.Stalls > 0 {
				stalled++
			}
			if bf, ok := rec.Buffering(); ok {
				suspected++
				bursts = append(bursts, float64(bf.Bursts))
				if bf.HeadersToFirstChunkMs != nil {
					afterHeaders = append(afterHeaders, *bf.HeadersToFirstChunkMs)
				}
				if bf.Freezes > 0 && (freezeMax == nil || bf.LongestFreezeMs > *freezeMax) {
					freezeMax = &bf.LongestFreezeMs
				}
			}
		}
		cell := func(row string, vals []float64, budget float64) {
			p50, p95 := pcts(vals)
			ce := Cell{Row: row, Sample: s, N: len(vals), P50: p50, P95: p95, Budget: budgetPtr(budget)}
			switch {
			case good == 0:
				ce.Why = NoSuccessfulRun // not red: the outcomes row is
			case ce.Budget != nil && p95 == nil:
				ce.Over, ce.Why = true, fmt.Sprintf("no value in %d successful run(s)", good)
			case ce.Budget != nil && *p95 > *ce.Budget:
				ce.Over, ce.Why = true, fmt.Sprintf("p95 %s over the %s budget", msText(*p95), msText(*ce.Budget))
			}
			c.Cells = append(c.Cells, ce)
		}
		cell("tfc", tfc, b.TFC)
		cell("gap", gaps, b.Gap)
		cell("tail", tail, b.Tail)
		cell("close", closeMs, 0)
		shareBudget := DefaultStallShare
		if b.StallShare != nil {
			shareBudget = *b.StallShare
		}
		share := Cell{Row: "stall_share", Sample: s, N: good, ShareBudget: &shareBudget}
		if good > 0 {
			v := float64(stalled) / float64(good)
			share.Share = &v
			if v > shareBudget {
				share.Over, share.Why = true, fmt.Sprintf("%d of %d runs stalled over 250 ms (%.0f%%), over the %s budget", stalled, good, v*100, pctText(shareBudget))
			}
		}
		c.Cells = append(c.Cells, share)
		buf := Cell{Row: "buffering", Sample: s, N: good, Suspected: suspected, FreezeMaxMs: freezeMax}
		if good > 0 {
			v := float64(suspected) / float64(good)
			buf.Share = &v
			buf.BurstsP50, _ = pcts(bursts)
			buf.FirstChunkAfterHeadersP50Ms, _ = pcts(afterHeaders)
			if suspected > 0 && v >= BufferingShare {
				buf.Over, buf.Why = true, fmt.Sprintf("suspected proxy buffering in %d of %d runs: %s", suspected, good, burstText(&buf))
			}
		}
		c.Cells = append(c.Cells, buf)
		oc := Cell{Row: "outcomes", Sample: s, N: len(runs[s]), Outcomes: outcomes}
		if failed > 0 {
			oc.Over, oc.Why = true, fmt.Sprintf("%d of %d runs did not end as the %s sample should", failed, len(runs[s]), s)
			if badVerdict > 0 {
				oc.Why += fmt.Sprintf(" (%d with a failing resume verdict)", badVerdict)
			}
			oc.FailedRun = failedRun(runs[s])
			oc.Why += fmt.Sprintf("; %d like this one: %s", oc.FailedRun.Like, oc.FailedRun)
		}
		c.Cells = append(c.Cells, oc)
	}
	sort.SliceStable(drills, func(i, j int) bool {
		return slices.Index(probe.DrillNames, drills[i].Record.Drill) < slices.Index(probe.DrillNames, drills[j].Record.Drill)
	})
	c.drills = drills
	for _, r := range drills {
		rec := r.Record
		d := Drill{Drill: rec.Drill, Verdict: string(rec.Verdict), Detail: rec.ResumeDetail, Outcome: string(rec.Outcome),
			RequestID: rec.RequestID, Failed: !rec.Passed()}
		if !rec.Intended() {
			d.Error = rec.Error
		}
		c.Drills = append(c.Drills, d)
	}
	c.Triage = c.triage()
	c.Pass = true
	for _, ce := range c.Cells {
		if ce.Over {
			c.Pass = false
		}
	}
	for _, d := range c.Drills {
		if d.Failed {
			c.Pass = false
		}
	}
	return c
}

// cell returns the cell of row and sample.
func (c *Card) cell(row, sample string) *Cell {
	for i := range c.Cells {
		if c.Cells[i].Row == row && c.Cells[i].Sample == sample {
			return &c.Cells[i]
		}
	}
	return nil
}

// RedCells lists the cells over budget, in card order.
func (c *Card) RedCells() []Cell {
	var out []Cell
	for _, ce := range c.Cells {
		if ce.Over {
			out = append(out, ce)
		}
	}
	return out
}

// pctText is a share as a percentage.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

// burstText describes the bursts of a buffering cell.
func burstText(ce *Cell) string {
	if ce.BurstsP50 == nil {
		return "no suspected run"
	}
	s := fmt.Sprintf("%.0f burst(s) per run (p50)", *ce.BurstsP50)
	if ce.FreezeMaxMs != nil {
		s += fmt.Sprintf(" split by freezes up to %s", msText(*ce.FreezeMaxMs))
	}
	s += fmt.Sprintf(", gaps under %d ms inside them", probe.NearZeroGapMs)
	if ce.FirstChunkAfterHeadersP50Ms != nil {
		s += fmt.Sprintf("; first chunk %s after the headers (p50)", msText(*ce.FirstChunkAfterHeadersP50Ms))
	}
	return s
}

func msText(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// triageRows are the rows the article's triage explains: a red outcomes
// row is explained by its failing run instead.
var triageRows = []string{"tfc", "gap", "tail", "close", "stall_share", "buffering"}

// triage states, for each class with a red timing cell, the article's
// checks in their fixed order, from the data the card has.
func (c *Card) triage() []string {
	var out []string
	for _, s := range c.Samples {
		red := false
		for _, row := range triageRows {
			if ce := c.cell(row, s); ce != nil && ce.Over {
				red = true
			}
		}
		if b := c.cell("buffering", s); b != nil && b.Suspected > 0 {
			out = append(out, fmt.Sprintf("%s: suspected proxy buffering in %d of %d runs: %s (check proxy_buffering / X-Accel-Buffering)", s, b.Suspected, b.N, burstText(b)))
		}
		if !red {
			continue
		}
		out = append(out, fmt.Sprintf("%s, 1. tail vs output length: %s", s, c.tokens(s)))
		out = append(out, fmt.Sprintf("%s, 2. gap p95 vs p50: %s", s, c.spread(s)))
		out = append(out, fmt.Sprintf("%s, 3. TFC vs prompt size: %s", s, c.prompt()))
		out = append(out, fmt.Sprintf("%s, 4. resume rate: %s", s, c.resumeRate(s)))
	}
	return out
}

func (c *Card) tokens(s string) string {
	var comp, tps []float64
	for _, r := range c.runs[s] {
		if r.Record.Tokens != nil && r.Record.Intended() {
			comp = append(comp, float64(r.Record.Tokens.Completion))
		}
		if r.Record.VisibleTPS != nil {
			tps = append(tps, *r.Record.VisibleTPS)
		}
	}
	if len(comp) == 0 {
		return "no token counts were reported, so a longer answer cannot be told from a slower one"
	}
	p50, _ := pcts(comp)
	msg := fmt.Sprintf("median output %.0f tokens", *p50)
	if t, _ := pcts(tps); t != nil {
		msg += fmt.Sprintf(" at %.1f visible tokens/s", *t)
	}
	return msg + "; if the output grew, the tail moved for a boring reason"
}

func (c *Card) spread(s string) string {
	g := c.cell("gap", s)
	if g == nil || g.P50 == nil {
		return "no gaps measured"
	}
	pair := fmt.Sprintf("p95 %s vs p50 %s", msText(*g.P95), msText(*g.P50))
	if b := c.cell("buffering", s); b != nil && b.Over {
		return pair + ": the gaps collapsed into bursts, and the freezes between them are a few gaps the percentiles hide; not the model: see the buffering row"
	}
	ratio := *g.P95 / max(*g.P50, 0.001)
	if ratio >= 3 {
		return fmt.Sprintf("%s (x%.1f): a wide spread is stalls", pair, ratio)
	}
	if st := c.cell("stall_share", s); st != nil && st.Over {
		return fmt.Sprintf("%s (x%.1f): narrow, yet %s of runs stalled over 250 ms: a few long freezes per run that the percentiles smooth over, not a slow model", pair, ratio, pctText(*st.Share))
	}
	if g.Over {
		return fmt.Sprintf("%s (x%.1f): narrow but high is a slow model or heavy batching", pair, ratio)
	}
	if g.Budget == nil {
		return fmt.Sprintf("%s (x%.1f): narrow, and no gap budget to call it high", pair, ratio)
	}
	return fmt.Sprintf("%s (x%.1f): narrow and within budget: the gaps are not what is red", pair, ratio)
}

func (c *Card) prompt() string {
	short, long := c.cell("tfc", "short"), c.cell("tfc", "long")
	if short == nil || long == nil || short.P50 == nil || long.P50 == nil {
		return "needs both the short and the long class measured"
	}
	ratio := *long.P50 / max(*short.P50, 0.001)
	if ratio >= 1.5 {
		return fmt.Sprintf("long p50 %s vs short p50 %s (x%.1f): TFC tracks prompt length, a prefill problem", msText(*long.P50), msText(*short.P50), ratio)
	}
	return fmt.Sprintf("long p50 %s vs short p50 %s (x%.1f): flat across prompt sizes; if high, queueing or buffering", msText(*long.P50), msText(*short.P50), ratio)
}

func (c *Card) resumeRate(s string) string {
	n, resumed := len(c.runs[s]), 0
	for _, r := range c.runs[s] {
		if r.Record.Resumed {
			resumed++
		}
	}
	msg := fmt.Sprintf("%d of %d runs resumed", resumed, n)
	failed := 0
	for _, d := range c.Drills {
		if d.Failed {
			failed++
		}
	}
	if failed > 0 {
		msg += fmt.Sprintf("; %d resume drill(s) failed: fix reconnection before tuning anything", failed)
	}
	return msg
}

// Representative picks the runs a report draws for a class: the p50 run
// by TFC and the worst run by its largest gap.
func (c *Card) Representative(s string) (p50, worst *Run) {
	var good []*Run
	for i := range c.runs[s] {
		r := &c.runs[s][i]
		if r.Record.TFCMs != nil {
			good = append(good, r)
		}
	}
	if len(good) == 0 {
		return nil, nil
	}
	sort.SliceStable(good, func(i, j int) bool { return *good[i].Record.TFCMs < *good[j].Record.TFCMs })
	idx := min(len(good)-1, int(float64(len(good)-1)/2+0.5))
	p50 = good[idx]
	worst = good[0]
	for _, r := range good {
		if maxGap(r) > maxGap(worst) {
			worst = r
		}
	}
	return p50, worst
}

func maxGap(r *Run) float64 {
	if r.Record.Gaps.MaxMs == nil {
		return 0
	}
	return *r.Record.Gaps.MaxMs
}
