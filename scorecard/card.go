// Package scorecard is the acceptance check's sink: it reduces the records
// of many runs into the scorecard article's three columns (one per sample
// class), each cell a p50 and a p95 against the class budget, names the red
// cells with the article's triage, and renders the card as text, JSON,
// JUnit XML and a self-contained HTML report. Percentiles across runs come
// from the raw per-run values, never from averaging per-run percentiles.
package scorecard

import (
	"encoding/json"
	"fmt"

	"github.com/streamprobe/streamprobe/probe"
)

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
	// Verdict is the card's verdict: Fail when a cell is red or a drill
	// failed, else Inconclusive when a cell is, else Pass.
	Verdict string `json:"verdict"`
	// NoRun marks a card with no finished run, no drill either (an
	// interrupted check's): INCONCLUSIVE, never PASS (NoRunNote).
	NoRun bool `json:"no_run,omitempty"`

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
	// budgets are the card's budgets by sample (its target's), alpha the
	// alpha each class is judged at (Judge).
	budgets map[string]Budget
	alpha   func(sample string) float64
}

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

// The rows of a card, by the names the outputs key them by (JSON, the
// JUnit cases' names, the budgets' metric label).
const (
	RowTFC        = "tfc"
	RowGap        = "gap"
	RowTail       = "tail"
	RowClose      = "close"
	RowStallShare = "stall_share"
	RowBuffering  = "buffering"
	RowOutcomes   = "outcomes"
)

// Rows of the card, in order.
var Rows = []string{RowTFC, RowGap, RowTail, RowClose, RowStallShare, RowBuffering, RowOutcomes}

// TimingRows are the rows measured as times, in order: each is a
// histogram of the daemon's (streamprobe_<row>_seconds) and a
// distribution of a class.
var TimingRows = []string{RowTFC, RowGap, RowTail, RowClose}

// Cell is one row of one class: what every row has, and the figures of
// its kind in exactly one of Timing (the rows tfc, gap, tail and close),
// Stall (stall_share), Buffering (buffering) and Outcomes (outcomes).
type Cell struct {
	Row, Sample string
	// N counts what the row is taken over: a timing row's values, the
	// measured runs of the stall_share and buffering rows, every run of
	// the outcomes row.
	N int
	// Verdict is the cell's verdict against its budget (Pass, Fail,
	// Inconclusive), "" for a cell with no budget or nothing measured.
	// Over marks a red cell (Verdict Fail) and Why says why a cell is red
	// or inconclusive; a timing cell of a class with no measured run says
	// NoSuccessfulRun, and is not red.
	Verdict string
	Over    bool
	Why     string
	// Confidence is the level of the cell's intervals (0.95 for 95%), 0
	// for a cell without one.
	Confidence float64
	// Decide is, for an inconclusive cell, how many runs would decide it
	// if the data went on as they are; 0 when none would (the value sits
	// on the budget) or the cell is decided.
	Decide int
	// SmallSample notes a percentile (or, in the stall_share row, the
	// p95 convention) resting on fewer runs than it needs (SmallSample):
	// a note, never a mark.
	SmallSample string

	Timing    *TimingCell
	Stall     *StallCell
	Buffering *BufferingCell
	Outcomes  *OutcomesCell
}

// TimingCell is a timing row: the p50 and p95 of its values against the
// p95 budget.
type TimingCell struct {
	// P50 and P95 are nil when there is no value.
	P50 *float64 `json:"p50_ms,omitempty"`
	P95 *float64 `json:"p95_ms,omitempty"`
	// Budget is the p95 budget, nil when the class has none.
	Budget *float64 `json:"budget_p95_ms,omitempty"`
	// P50Bucket and P95Bucket are the histogram buckets [lo, hi] ms the
	// percentiles lie in, when they come from buckets: the value is
	// known to within its bucket.
	P50Bucket *[2]float64 `json:"p50_bucket_ms,omitempty"`
	P95Bucket *[2]float64 `json:"p95_bucket_ms,omitempty"`
	// P50Lo .. P95Hi are the percentiles' distribution-free intervals
	// (order statistics), at the cell's Confidence; a bound is nil when
	// the runs are too few to give one (no p95 upper bound under 72
	// runs at 95%).
	P50Lo *float64 `json:"p50_lo_ms,omitempty"`
	P50Hi *float64 `json:"p50_hi_ms,omitempty"`
	P95Lo *float64 `json:"p95_lo_ms,omitempty"`
	P95Hi *float64 `json:"p95_hi_ms,omitempty"`
}

// StallCell is the stall_share row: the share of the measured runs with a
// gap over 250 ms, against the stall-share budget.
type StallCell struct {
	// Share is nil when no run was measured.
	Share  *float64 `json:"share,omitempty"`
	Budget float64  `json:"share_budget"`
	// Lo and Hi are the share's exact binomial (Clopper-Pearson) interval.
	Lo *float64 `json:"share_lo,omitempty"`
	Hi *float64 `json:"share_hi,omitempty"`
}

// BufferingCell is the buffering row: the measured runs that look
// proxy-buffered.
type BufferingCell struct {
	// Share is the share of the runs that look so (nil when no run was
	// measured), Suspected counts them, BurstsP50 is their median burst
	// count and FreezeMaxMs their longest freeze.
	Share       *float64 `json:"share,omitempty"`
	Suspected   int      `json:"suspected,omitempty"`
	BurstsP50   *float64 `json:"bursts_p50,omitempty"`
	FreezeMaxMs *float64 `json:"freeze_max_ms,omitempty"`
	// FirstChunkAfterHeadersP50Ms is the median wait from the headers to
	// the first chunk of the suspected runs.
	FirstChunkAfterHeadersP50Ms *float64 `json:"first_chunk_after_headers_p50_ms,omitempty"`
	// Unknown marks a source that cannot tell (the metrics carry no
	// bursts).
	Unknown bool `json:"unknown,omitempty"`
}

// OutcomesCell is the outcomes row: the runs by outcome, and why runs
// failed.
type OutcomesCell struct {
	Counts map[string]int `json:"outcomes,omitempty"`
	// FailedRun is the representative failing run: the most common way
	// the runs failed.
	FailedRun *FailedRun `json:"failed_run,omitempty"`
	// FailedShare is the share of the runs that failed, with its exact
	// binomial interval, against Budget (the error_share budget; 0: no
	// run may fail).
	FailedShare *float64 `json:"failed_share,omitempty"`
	Lo          *float64 `json:"failed_share_lo,omitempty"`
	Hi          *float64 `json:"failed_share_hi,omitempty"`
	Budget      float64  `json:"failed_share_budget"`
}

// MarshalJSON writes the cell as one flat object: row, sample and n, the
// fields of its kind, then over and why.
func (ce Cell) MarshalJSON() ([]byte, error) {
	type head struct {
		Row    string `json:"row"`
		Sample string `json:"sample"`
		N      int    `json:"n"`
	}
	type tail struct {
		Verdict     string  `json:"verdict,omitempty"`
		Confidence  float64 `json:"confidence,omitempty"`
		Decide      int     `json:"runs_to_decide,omitempty"`
		Over        bool    `json:"over"`
		Why         string  `json:"why,omitempty"`
		SmallSample string  `json:"small_sample,omitempty"`
	}
	var kind any = struct{}{}
	switch {
	case ce.Timing != nil:
		kind = ce.Timing
	case ce.Stall != nil:
		kind = ce.Stall
	case ce.Buffering != nil:
		kind = ce.Buffering
	case ce.Outcomes != nil:
		kind = ce.Outcomes
	}
	// Each part is an object: their fields, joined, make the cell's.
	out := []byte{'{'}
	for _, part := range []any{head{ce.Row, ce.Sample, ce.N}, kind, tail{ce.Verdict, ce.Confidence, ce.Decide, ce.Over, ce.Why, ce.SmallSample}} {
		b, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		if fields := b[1 : len(b)-1]; len(fields) > 0 {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, fields...)
		}
	}
	return append(out, '}'), nil
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

// NoRunNote is what every output says of a card with no finished run.
const NoRunNote = "no run finished: nothing to judge, nothing passed"

// Budget is the budget of one class: p95 budgets in ms (0 means none) and
// the stall-share and error-share budgets.
type Budget struct {
	TFC, Gap, Tail float64
	// StallShare is the largest share (0..1) of runs that may stall over
	// 250 ms; nil means DefaultStallShare.
	StallShare *float64
	// ErrorShare is the largest share (0..1) of runs that may fail; nil
	// means 0: no run may fail.
	ErrorShare *float64
}

// Budgets are the budgets by sample, and by "target/sample" where a
// target has its own ([target.budget.<sample>], already merged over the
// global table): For picks a target's.
type Budgets map[string]Budget

// For is the budget of sample on target: the target's own, else the
// global one.
func (b Budgets) For(target, sample string) Budget {
	if own, ok := b[target+"/"+sample]; ok {
		return own
	}
	return b[sample]
}

// The verdicts of a cell, a card and a page.
const (
	Pass         = "PASS"
	Fail         = "FAIL"
	Inconclusive = "INCONCLUSIVE"
)

// DefaultConfidence is the confidence of the intervals when none is
// asked for: 95%, each verdict wrong at most 2.5% of the time either way.
const DefaultConfidence = 0.95

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

// cell returns the cell of row and sample.
func (c *Card) cell(row, sample string) *Cell {
	for i := range c.Cells {
		if c.Cells[i].Row == row && c.Cells[i].Sample == sample {
			return &c.Cells[i]
		}
	}
	return nil
}

// InconclusiveCells lists the cells whose interval straddles their
// budget, in card order.
func (c *Card) InconclusiveCells() []Cell {
	var out []Cell
	for _, ce := range c.Cells {
		if ce.Verdict == Inconclusive {
			out = append(out, ce)
		}
	}
	return out
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

// failedDrills counts the drills that failed.
func (c *Card) failedDrills() int {
	n := 0
	for _, d := range c.Drills {
		if d.Failed {
			n++
		}
	}
	return n
}
