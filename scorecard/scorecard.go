// Package scorecard is the acceptance check's sink: it reduces the records
// of many runs into the scorecard article's three columns (one per sample
// class), each cell a p50 and a p95 against the class budget, names the red
// cells with the article's triage, and renders the card as text, JSON,
// JUnit XML and a self-contained HTML report. Percentiles across runs come
// from the raw per-run values, never from averaging per-run percentiles.
package scorecard

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

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
	// P50Bucket and P95Bucket are the histogram buckets [lo, hi] ms the
	// percentiles lie in, when they come from buckets: the value is
	// known to within its bucket.
	P50Bucket *[2]float64 `json:"p50_bucket_ms,omitempty"`
	P95Bucket *[2]float64 `json:"p95_bucket_ms,omitempty"`
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
	// Unknown marks a row the source cannot tell (buffering from
	// metrics).
	Unknown bool `json:"unknown,omitempty"`
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
	RequestID string `json:"request_id,omitempty"`
	Failed    bool   `json:"failed"`
	// Runs, FailedRuns and Verdicts sum up the runs of a drill over a
	// window (report); check has one run per drill and leaves them out.
	Runs       int            `json:"runs,omitempty"`
	FailedRuns int            `json:"failed_runs,omitempty"`
	Verdicts   map[string]int `json:"verdicts,omitempty"`
}

// SumDrill sums the runs of one drill over a window into one line: failed
// when any run failed, the verdict the most frequent failing one (else the
// most frequent), the detail, error and request id of the last run with
// that verdict.
func SumDrill(name string, runs []Run) Drill {
	sum := NewDrillSum(name)
	for i := range runs {
		sum.Add(runs[i].Record)
	}
	return sum.Drill()
}

// SumVerdicts is the line of a drill from counted verdicts (the
// metrics): runs, failed runs and runs by verdict ("none": failed before
// a verdict).
func SumVerdicts(name string, runs, failed int, verdicts map[string]int) Drill {
	d := Drill{Drill: name, Runs: runs, FailedRuns: failed, Failed: failed > 0, Verdicts: verdicts, Verdict: pickVerdict(verdicts)}
	d.Detail = fmt.Sprintf("%d of %d runs failed (%s)", failed, runs, verdictCounts(verdicts))
	return d
}

// pickVerdict is the most frequent failing verdict ("none": a run that
// failed before a verdict), else the most frequent, ties by name.
func pickVerdict(counts map[string]int) string {
	best, bestFailing := "", false
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		failing := v == "none" || probe.Verdict(v).Failed()
		switch {
		case best == "", failing && !bestFailing, failing == bestFailing && counts[v] > counts[best]:
			best, bestFailing = v, failing
		}
	}
	return best
}

func verdictCounts(counts map[string]int) string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
	}
	return strings.Join(parts, ", ")
}

// Card is the scorecard of one target.
type Card struct {
	Target     string              `json:"target"`
	Samples    []string            `json:"samples"`
	Cells      []Cell              `json:"cells"`
	Drills     []Drill             `json:"drills,omitempty"`
	Triage     []string            `json:"triage,omitempty"`
	RequestIDs map[string][]string `json:"request_ids"`
	// RequestIDsOmitted counts, per sample with more than 2*KeptIDs runs,
	// the ids left out between the first and the last KeptIDs.
	RequestIDsOmitted map[string]int `json:"request_ids_omitted,omitempty"`
	Pass              bool           `json:"pass"`

	// Region is the region of a report's card ("" for check); Fleet
	// marks the card of every region together.
	Region string `json:"region,omitempty"`
	Fleet  bool   `json:"fleet,omitempty"`
	// Source says where the numbers come from and Resolution how exact
	// they are (bucket bounds of a histogram source).
	Source     string `json:"source,omitempty"`
	Resolution string `json:"resolution,omitempty"`

	runs    map[string][]Run
	drills  []Run
	classes map[string]*Class
}

func budgetPtr(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	return &v
}

// Class is what a card needs of one sample class, whether it comes from
// runs (check, results logs: ClassOf) or from histogram buckets and
// counters (VictoriaMetrics).
type Class struct {
	Sample string
	// TFC, Gap, Tail and Close hold the values of the runs that ended as
	// the sample intends and were not resumed (every gap of them, pooled).
	TFC, Gap, Tail, Close Dist
	// Runs counts every run; Good the runs the cells measure; Stalled
	// those of Good with a gap over 250 ms; Resumed the resumed runs.
	Runs, Good, Stalled, Resumed int
	// Outcomes counts the runs by outcome; Failed the runs that did not
	// pass, BadVerdict those of them failed by a resume verdict only.
	Outcomes           map[string]int
	Failed, BadVerdict int
	// Buffering is nil when the source cannot tell (the metrics carry no
	// bursts).
	Buffering *BufferingRuns
	// Tokens are the completion tokens of the intended runs, TPS the
	// visible tokens/s of every run that had them.
	Tokens, TPS Dist
	// RequestIDs are the runs' request ids, the first and the last
	// KeptIDs when there are more; RequestIDCount counts them all.
	RequestIDs     []string
	RequestIDCount int
	// FailedRun is the most common way its runs failed (nil when the
	// source has no single runs, or none failed).
	FailedRun *FailedRun
	// Setup and SetupTFC are, for each measured run that paid for its
	// connection, DNS+TCP+TLS and its TFC, in ms.
	Setup, SetupTFC Dist
}

// BufferingRuns are the runs of a class that look proxy-buffered.
type BufferingRuns struct {
	Suspected int
	// Bursts are the suspected runs' burst counts, AfterHeaders their
	// waits from the headers to the first chunk (ms).
	Bursts, AfterHeaders Dist
	FreezeMax            *float64
}

// ClassOf reduces the runs of one sample to a Class (a ClassBuilder fed
// every run).
func ClassOf(sample string, runs []Run) Class {
	b := NewClassBuilder(sample)
	for i := range runs {
		b.Add(runs[i].Record)
	}
	return b.Class()
}

// DrillOf is the scorecard line of one drill run.
func DrillOf(r Run) Drill {
	rec := r.Record
	d := Drill{Drill: rec.Drill, Verdict: string(rec.Verdict), Detail: rec.ResumeDetail, Outcome: string(rec.Outcome),
		RequestID: rec.RequestID, Failed: !rec.Passed()}
	if !rec.Intended() {
		d.Error = rec.Error
	}
	return d
}

// Build reduces runs (by sample) and drill runs of one target. samples
// gives the column order.
func Build(target string, samples []string, runs map[string][]Run, drills []Run, budgets map[string]Budget) *Card {
	sort.SliceStable(drills, func(i, j int) bool {
		return slices.Index(probe.DrillNames, drills[i].Record.Drill) < slices.Index(probe.DrillNames, drills[j].Record.Drill)
	})
	var classes []Class
	for _, s := range samples {
		classes = append(classes, ClassOf(s, runs[s]))
	}
	var ds []Drill
	for _, r := range drills {
		ds = append(ds, DrillOf(r))
	}
	c := BuildClasses(target, classes, ds, budgets)
	c.runs, c.drills = runs, drills
	return c
}

// BuildClasses makes the card of one target from its classes (in column
// order) and drill lines: the cells against the budgets, the triage and
// the verdict. check and report share it, so a window of data gets the
// same card as a check would.
func BuildClasses(target string, classes []Class, drills []Drill, budgets map[string]Budget) *Card {
	c := &Card{Target: target, RequestIDs: map[string][]string{}, classes: map[string]*Class{}, Drills: drills}
	for i := range classes {
		cl := &classes[i]
		s := cl.Sample
		c.Samples = append(c.Samples, s)
		c.classes[s] = cl
		if cl.RequestIDs != nil {
			c.RequestIDs[s] = cl.RequestIDs
		}
		if omitted := cl.RequestIDCount - len(cl.RequestIDs); cl.RequestIDs != nil && omitted > 0 {
			if c.RequestIDsOmitted == nil {
				c.RequestIDsOmitted = map[string]int{}
			}
			c.RequestIDsOmitted[s] = omitted
		}
		b := budgets[s]
		good := cl.Good
		cell := func(row string, d Dist, budget float64) {
			p50, b50 := d.quantile(0.5)
			p95, b95 := d.quantile(0.95)
			ce := Cell{Row: row, Sample: s, N: d.N(), P50: p50, P95: p95, P50Bucket: b50, P95Bucket: b95, Budget: budgetPtr(budget)}
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
		cell("tfc", cl.TFC, b.TFC)
		cell("gap", cl.Gap, b.Gap)
		cell("tail", cl.Tail, b.Tail)
		cell("close", cl.Close, 0)
		shareBudget := DefaultStallShare
		if b.StallShare != nil {
			shareBudget = *b.StallShare
		}
		share := Cell{Row: "stall_share", Sample: s, N: good, ShareBudget: &shareBudget}
		if good > 0 {
			v := float64(cl.Stalled) / float64(good)
			share.Share = &v
			if v > shareBudget {
				share.Over, share.Why = true, fmt.Sprintf("%d of %d runs stalled over 250 ms (%.0f%%), over the %s budget", cl.Stalled, good, v*100, pctText(shareBudget))
			}
		}
		c.Cells = append(c.Cells, share)
		buf := Cell{Row: "buffering", Sample: s, N: good}
		if bf := cl.Buffering; bf != nil && good > 0 {
			v := float64(bf.Suspected) / float64(good)
			buf.Share, buf.Suspected, buf.FreezeMaxMs = &v, bf.Suspected, bf.FreezeMax
			buf.BurstsP50, _ = bf.Bursts.quantile(0.5)
			buf.FirstChunkAfterHeadersP50Ms, _ = bf.AfterHeaders.quantile(0.5)
			if bf.Suspected > 0 && v >= BufferingShare {
				buf.Over, buf.Why = true, fmt.Sprintf("suspected proxy buffering in %d of %d runs: %s", bf.Suspected, good, burstText(&buf))
			}
		} else if bf == nil {
			buf.Unknown = true
		}
		c.Cells = append(c.Cells, buf)
		oc := Cell{Row: "outcomes", Sample: s, N: cl.Runs, Outcomes: cl.Outcomes}
		if cl.Failed > 0 {
			oc.Over, oc.Why = true, fmt.Sprintf("%d of %d runs did not end as the %s sample should", cl.Failed, cl.Runs, s)
			if cl.BadVerdict > 0 {
				oc.Why += fmt.Sprintf(" (%d with a failing resume verdict)", cl.BadVerdict)
			}
			if oc.FailedRun = cl.FailedRun; oc.FailedRun != nil {
				oc.Why += fmt.Sprintf("; %d like this one: %s", oc.FailedRun.Like, oc.FailedRun)
			}
		}
		c.Cells = append(c.Cells, oc)
	}
	c.Resolution = foldedNote(classes)
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
	flat := fmt.Sprintf("long p50 %s vs short p50 %s (x%.1f): flat across prompt sizes", msText(*long.P50), msText(*short.P50), ratio)
	for _, s := range []string{"short", "long"} {
		if b := c.cell("buffering", s); b != nil && b.Over {
			return flat + "; suspected proxy buffering (see the buffering row): the TFC is when the proxy let the answer go, not when the model started"
		}
	}
	return flat + "; if high, queueing or buffering"
}

// setupMs is a run's DNS+TCP+TLS, when it paid for a connection.
func setupMs(r probe.Record) (float64, bool) {
	var sum float64
	ok := false
	for _, p := range []*float64{r.DNSMs, r.ConnectMs, r.TLSMs} {
		if p != nil {
			sum, ok = sum+*p, true
		}
	}
	return sum, ok
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
	if share >= 0.5 {
		msg += ": TFC is dominated by connecting, not by the model: look at the network path, DNS or TLS termination"
	}
	return msg
}

func (c *Card) resumeRate(s string) string {
	n, resumed := c.classes[s].Runs, c.classes[s].Resumed
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
