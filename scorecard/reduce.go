package scorecard

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// ExactValues is how many values one class keeps exact over all its rows
// (TFC, gaps, tail, close, and the tokens, rates and setup times of the
// triage). Past it, the row holding the most values folds into a
// histogram of log buckets HistResolution wide, then the next, so a
// class's memory stays bounded whatever the number of runs. check's runs
// stay far under it: its cards are exact.
const ExactValues = 100_000

// KeptIDs is how many request ids a class keeps at each end: the first
// KeptIDs and the last KeptIDs of its runs; the ones between are counted.
const KeptIDs = 100

// MaxKinds bounds the outcome and verdict names a class or a drill counts
// apart; past it, a new name counts as "other" (Kind).
const MaxKinds = 16

// Class is what a card needs of one sample class, whether it comes from
// runs (check, results logs: ClassOf) or from histogram buckets and
// counters (VictoriaMetrics).
type Class struct {
	Sample string
	// PromptSize is the size in bytes of the sample's prompt
	// (dialect.Sample.Prompt), 0 for a sample this binary does not know:
	// triage compares the classes' TFC by it.
	PromptSize int
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

// PromptSize is the size in bytes of the prompt of the sample called
// name, 0 for a sample this binary does not know.
func PromptSize(name string) int { return len(dialect.Samples[name].Prompt) }

// ClassOf reduces the runs of one sample to a Class (a ClassBuilder fed
// every run).
func ClassOf(sample string, runs []Run) Class {
	b := NewClassBuilder(sample)
	for i := range runs {
		b.Add(runs[i].Record)
	}
	return b.Class()
}

// ClassBuilder reduces the runs of one sample to a Class one record at a
// time, in memory bounded whatever the number of runs (ExactValues,
// KeptIDs): check (ClassOf) and report feed it.
type ClassBuilder struct {
	cl Class
	// The rows, in the order of rows().
	tfc, gap, tail, close, tokens, tps, setup, setupTFC, bursts, afterHeaders distBuilder
	// exact counts the rows' exact values.
	exact int
	// pool, when set, bounds the exact values of every class it made
	// together.
	pool *Pool
	ids  ids
	// ways are the ways of failing, with the first run of each, in the
	// order first seen.
	ways  map[way]*FailedRun
	order []way
}

// NewClassBuilder starts the class of sample.
func NewClassBuilder(sample string) *ClassBuilder {
	return &ClassBuilder{cl: Class{Sample: sample, PromptSize: PromptSize(sample), Outcomes: map[string]int{}, Buffering: &BufferingRuns{}}, ways: map[way]*FailedRun{}}
}

func (b *ClassBuilder) rows() []*distBuilder {
	return []*distBuilder{&b.tfc, &b.gap, &b.tail, &b.close, &b.tokens, &b.tps, &b.setup, &b.setupTFC, &b.bursts, &b.afterHeaders}
}

func (b *ClassBuilder) put(d *distBuilder, vals ...float64) {
	for _, v := range vals {
		if d.add(v) {
			b.exact++
			if b.pool != nil {
				b.pool.used++
			}
		}
	}
	for b.exact > ExactValues {
		b.foldBiggest()
	}
	if b.pool != nil {
		b.pool.shrink()
	}
}

// biggest is the row holding the most exact values.
func (b *ClassBuilder) biggest() *distBuilder {
	var big *distBuilder
	for _, r := range b.rows() {
		if big == nil || len(r.vals) > len(big.vals) {
			big = r
		}
	}
	return big
}

// foldBiggest folds the row holding the most exact values into its
// histogram.
func (b *ClassBuilder) foldBiggest() {
	big := b.biggest()
	n := len(big.vals)
	b.exact -= n
	if b.pool != nil {
		b.pool.used -= n
	}
	big.fold()
}

// Pool bounds the exact values of many classes together: past Limit, the
// row holding the most values among them all folds into its histogram,
// as a class's own rows do past ExactValues. report reads every class of
// a fleet's logs with one, so its memory stays bounded whatever the
// number of classes.
type Pool struct {
	Limit    int
	used     int
	builders []*ClassBuilder
}

// NewClassBuilder starts the class of sample, its values counted in p.
func (p *Pool) NewClassBuilder(sample string) *ClassBuilder {
	b := NewClassBuilder(sample)
	b.pool = p
	p.builders = append(p.builders, b)
	return b
}

// shrink folds the biggest rows of the pool's classes until it is within
// its limit.
func (p *Pool) shrink() {
	for p.used > p.Limit {
		var owner *ClassBuilder
		most := 0
		for _, b := range p.builders {
			if n := len(b.biggest().vals); n > most {
				owner, most = b, n
			}
		}
		if owner == nil {
			return
		}
		owner.foldBiggest()
	}
}

// Add folds one run's record into the class, as ClassOf counts it.
func (b *ClassBuilder) Add(rec probe.Record) {
	cl := &b.cl
	cl.Runs++
	b.ids.add(rec.RequestID)
	count(cl.Outcomes, string(rec.Outcome))
	if rec.Resumed {
		cl.Resumed++
	}
	if rec.VisibleTPS != nil {
		b.put(&b.tps, *rec.VisibleTPS)
	}
	if !rec.Passed() {
		cl.Failed++
		if rec.Intended() {
			cl.BadVerdict++
		}
		w := wayOf(rec)
		if f := b.ways[w]; f != nil {
			f.Like++
		} else {
			b.ways[w] = &FailedRun{Outcome: string(rec.Outcome), HTTPStatus: rec.HTTPStatus, Error: rec.Error,
				Verdict: string(rec.Verdict), RequestID: rec.RequestID, Like: 1}
			b.order = append(b.order, w)
		}
	}
	if !rec.Intended() {
		return
	}
	if rec.Tokens != nil {
		b.put(&b.tokens, float64(rec.Tokens.Completion))
	}
	// Resumed runs never enter these cells.
	if rec.Resumed {
		return
	}
	cl.Good++
	if rec.TFCMs != nil {
		b.put(&b.tfc, *rec.TFCMs)
		if setup, ok := setupMs(rec); ok {
			b.put(&b.setup, setup)
			b.put(&b.setupTFC, *rec.TFCMs)
		}
	}
	b.put(&b.gap, rec.Gaps.Values...)
	if rec.TailMs != nil {
		b.put(&b.tail, *rec.TailMs)
	}
	if rec.CloseMs != nil {
		b.put(&b.close, *rec.CloseMs)
	}
	if rec.Stalls > 0 {
		cl.Stalled++
	}
	if bf, ok := rec.Buffering(); ok {
		buf := cl.Buffering
		buf.Suspected++
		b.put(&b.bursts, float64(bf.Bursts))
		if bf.HeadersToFirstChunkMs != nil {
			b.put(&b.afterHeaders, *bf.HeadersToFirstChunkMs)
		}
		if bf.Freezes > 0 && (buf.FreezeMax == nil || bf.LongestFreezeMs > *buf.FreezeMax) {
			v := bf.LongestFreezeMs
			buf.FreezeMax = &v
		}
	}
}

// Class is the class of the runs added so far. The builder may go on
// adding: what Class returned does not change.
func (b *ClassBuilder) Class() Class {
	cl := b.cl
	cl.Outcomes = maps.Clone(b.cl.Outcomes)
	buf := *b.cl.Buffering
	cl.Buffering = &buf
	cl.TFC, cl.Gap, cl.Tail, cl.Close = b.tfc.dist(), b.gap.dist(), b.tail.dist(), b.close.dist()
	cl.Tokens, cl.TPS, cl.Setup, cl.SetupTFC = b.tokens.dist(), b.tps.dist(), b.setup.dist(), b.setupTFC.dist()
	buf.Bursts, buf.AfterHeaders = b.bursts.dist(), b.afterHeaders.dist()
	if b.ids.n > 0 {
		cl.RequestIDs = b.ids.list()
	}
	cl.RequestIDCount = b.ids.n
	if len(b.order) > 0 {
		best := b.order[0]
		for _, w := range b.order[1:] {
			if b.ways[w].Like > b.ways[best].Like {
				best = w
			}
		}
		f := *b.ways[best]
		cl.FailedRun = &f
	}
	return cl
}

// retained counts what the builder holds: exact values, histogram counts,
// request ids, ways of failing and outcome names. Tests bound it.
func (b *ClassBuilder) retained() int {
	n := 0
	for _, r := range b.rows() {
		n += len(r.vals)
		if r.h != nil {
			n += len(r.h.counts)
		}
	}
	return n + len(b.ids.first) + len(b.ids.last) + len(b.ways) + len(b.order) + len(b.cl.Outcomes)
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

// distBuilder is one row's values: exact until its class folds it.
type distBuilder struct {
	vals []float64
	h    *logHist
}

// add adds v and reports whether it was kept exact.
func (d *distBuilder) add(v float64) bool {
	if d.h != nil {
		d.h.add(v)
		return false
	}
	d.vals = append(d.vals, v)
	return true
}

func (d *distBuilder) fold() {
	d.h = &logHist{}
	for _, v := range d.vals {
		d.h.add(v)
	}
	d.vals = nil
}

func (d *distBuilder) dist() Dist {
	if d.h == nil {
		if d.vals == nil {
			return Dist{Values: []float64{}}
		}
		return Dist{Values: d.vals}
	}
	return Dist{Buckets: d.h.buckets(), ranked: true}
}

// way is how a run failed: its outcome and HTTP status, both bounded to
// the names and codes a run can have.
type way struct {
	outcome string
	status  int
}

// wayOf is the way of rec: an unknown outcome is "other", a status
// outside 100..599 is -1 (0 stays: no response).
func wayOf(rec probe.Record) way {
	w := way{string(rec.Outcome), rec.HTTPStatus}
	if !slices.Contains(probe.Outcomes, rec.Outcome) {
		w.outcome = "other"
	}
	if w.status != 0 && (w.status < 100 || w.status > 599) {
		w.status = -1
	}
	return w
}

// ids keeps the first and the last KeptIDs request ids and counts them
// all.
type ids struct {
	first, last []string
	next, n     int
}

func (k *ids) add(id string) {
	k.n++
	switch {
	case len(k.first) < KeptIDs:
		k.first = append(k.first, id)
	case len(k.last) < KeptIDs:
		k.last = append(k.last, id)
	default:
		k.last[k.next] = id
		k.next = (k.next + 1) % KeptIDs
	}
}

func (k *ids) list() []string {
	if len(k.last) == 0 {
		return slices.Clone(k.first)
	}
	return slices.Concat(k.first, k.last[k.next:], k.last[:k.next])
}

// count adds one to m[name] (Kind).
func count(m map[string]int, name string) { m[Kind(m, name)]++ }

// Kind is name as a count by kind (an outcome, a verdict) keeps it:
// "other" when counts holds MaxKinds names already and not this one.
func Kind(counts map[string]int, name string) string {
	if _, ok := counts[name]; !ok && len(counts) >= MaxKinds {
		return "other"
	}
	return name
}

// foldedNote is the resolution of a card with folded rows, "" when every
// cell is exact.
func foldedNote(classes []Class) string {
	var rows []string
	for _, cl := range classes {
		for _, r := range []struct {
			name string
			d    Dist
		}{{rowNames[RowTFC], cl.TFC}, {rowNames[RowGap], cl.Gap}, {rowNames[RowTail], cl.Tail}, {rowNames[RowClose], cl.Close}} {
			if r.d.ranked {
				rows = append(rows, cl.Sample+" "+r.name)
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: over %d values per class, counted in log buckets %.1f%% wide: each percentile is within %.1f%% of the exact one (p50_bucket_ms, p95_bucket_ms in -json); the other cells are exact",
		strings.Join(rows, ", "), ExactValues, HistResolution*100, HistResolution*100)
}
