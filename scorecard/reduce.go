package scorecard

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/probe"
)

// ExactValues is how many values one class keeps exact over all its rows
// (TFC, gaps, tail, close, and the tokens, rates and setup times of the
// triage). Past it, the row holding the most values folds into a
// histogram of log buckets HistResolution wide, then the next, so a
// class's memory stays bounded whatever the number of runs. check's runs
// stay far under it: its cards are exact.
const ExactValues = 100_000

// HistResolution is the relative width of a folded row's buckets: each
// bucket's upper bound is 0.1% over its lower one, so a percentile from
// them is within 0.1% of the exact one.
const HistResolution = 0.001

// KeptIDs is how many request ids a class keeps at each end: the first
// KeptIDs and the last KeptIDs of its runs; the ones between are counted.
const KeptIDs = 100

// histFloor and histCeil (ms) bound the log buckets: the values under
// histFloor (0 and the sub-microsecond) share one bucket up to it, those
// over histCeil (11 days) the top bucket up to the largest value.
const histFloor, histCeil = 1e-3, 1e9

// maxKinds bounds the outcome and verdict names a class or a drill counts
// apart; past it, a new name counts as "other".
const maxKinds = 16

var (
	logGamma       = math.Log1p(HistResolution)
	minIdx, maxIdx = bucketIdx(histFloor), bucketIdx(histCeil)
)

// bucketIdx is the log bucket of v: bucket i holds (gamma^(i-1), gamma^i].
func bucketIdx(v float64) int { return int(math.Ceil(math.Log(v) / logGamma)) }

// logHist counts values in log buckets; it holds at most maxIdx-minIdx+1
// counts (27,646) whatever it is fed.
type logHist struct {
	base     int // the bucket of counts[0]
	counts   []uint64
	under    uint64 // values under histFloor
	n        uint64
	min, max float64
}

func (h *logHist) add(v float64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	if !(v >= histFloor) {
		h.under++
		return
	}
	i := min(bucketIdx(v), maxIdx)
	h.cover(i)
	h.counts[i-h.base]++
}

// cover grows counts to hold bucket i, with room to spare on that side so
// that a rising or falling series grows it a few times, not once a value.
func (h *logHist) cover(i int) {
	if len(h.counts) == 0 {
		h.base, h.counts = i, make([]uint64, 1)
		return
	}
	lo, hi := h.base, h.base+len(h.counts)
	if i >= lo && i < hi {
		return
	}
	slack := max(len(h.counts)/2, 64)
	nlo, nhi := lo, hi
	if i < lo {
		nlo = max(minIdx, i-slack)
	} else {
		nhi = min(maxIdx+1, i+1+slack)
	}
	c := make([]uint64, nhi-nlo)
	copy(c[lo-nlo:], h.counts)
	h.base, h.counts = nlo, c
}

// buckets are the non-empty buckets, the outer ones narrowed to the
// smallest and largest value.
func (h *logHist) buckets() []Bucket {
	var bs []Bucket
	if h.under > 0 {
		bs = append(bs, Bucket{Lo: h.min, Hi: min(histFloor, h.max), Count: float64(h.under)})
	}
	for k, n := range h.counts {
		if n == 0 {
			continue
		}
		i := h.base + k
		lo, hi := math.Exp(float64(i-1)*logGamma), math.Exp(float64(i)*logGamma)
		if i == maxIdx {
			hi = max(hi, h.max)
		}
		bs = append(bs, Bucket{Lo: max(lo, h.min), Hi: min(hi, h.max), Count: float64(n)})
	}
	return bs
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
	switch rec.Outcome {
	case probe.Success, probe.ClientCancelled, probe.UpstreamError, probe.Timeout, probe.ProtocolError:
	default:
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

// count adds one to m[name], or to m["other"] when m already counts
// maxKinds names and not this one.
func count(m map[string]int, name string) {
	if _, ok := m[name]; !ok && len(m) >= maxKinds {
		name = "other"
	}
	m[name]++
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
	ids   ids
	// ways are the ways of failing, with the first run of each, in the
	// order first seen.
	ways  map[way]*FailedRun
	order []way
}

// NewClassBuilder starts the class of sample.
func NewClassBuilder(sample string) *ClassBuilder {
	return &ClassBuilder{cl: Class{Sample: sample, Outcomes: map[string]int{}, Buffering: &BufferingRuns{}}, ways: map[way]*FailedRun{}}
}

func (b *ClassBuilder) rows() []*distBuilder {
	return []*distBuilder{&b.tfc, &b.gap, &b.tail, &b.close, &b.tokens, &b.tps, &b.setup, &b.setupTFC, &b.bursts, &b.afterHeaders}
}

func (b *ClassBuilder) put(d *distBuilder, vals ...float64) {
	for _, v := range vals {
		if d.add(v) {
			b.exact++
		}
	}
	for b.exact > ExactValues {
		var big *distBuilder
		for _, r := range b.rows() {
			if big == nil || len(r.vals) > len(big.vals) {
				big = r
			}
		}
		b.exact -= len(big.vals)
		big.fold()
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

// DrillSum sums the runs of one drill over a window one record at a time,
// in memory bounded whatever the number of runs: counts per verdict, and
// per verdict the line of its last run and of its last failing run.
type DrillSum struct {
	name         string
	runs, failed int
	verdicts     map[string]int
	last         map[string]*[2]*Drill // per verdict: last run, last failing run
}

// NewDrillSum starts the sum of the drill name.
func NewDrillSum(name string) *DrillSum {
	return &DrillSum{name: name, verdicts: map[string]int{}, last: map[string]*[2]*Drill{}}
}

// Add counts one run of the drill.
func (s *DrillSum) Add(rec probe.Record) {
	s.runs++
	v := string(rec.Verdict)
	if v == "" {
		v = "none"
	}
	if _, ok := s.verdicts[v]; !ok && len(s.verdicts) >= maxKinds {
		v = "other"
	}
	s.verdicts[v]++
	one := DrillOf(Run{Record: rec})
	l := s.last[v]
	if l == nil {
		l = &[2]*Drill{}
		s.last[v] = l
	}
	l[0] = &one
	if !rec.Passed() {
		s.failed++
		l[1] = &one
	}
}

// Drill is the drill's line: failed when any run failed, the verdict the
// most frequent failing one (else the most frequent), the detail, error
// and request id of the last run with that verdict (the last failing one
// when any failed).
func (s *DrillSum) Drill() Drill {
	d := Drill{Drill: s.name, Runs: s.runs, FailedRuns: s.failed, Failed: s.failed > 0, Verdicts: maps.Clone(s.verdicts)}
	d.Verdict = pickVerdict(d.Verdicts)
	if l := s.last[d.Verdict]; l != nil {
		one := l[0]
		if d.Failed {
			one = l[1]
		}
		if one != nil {
			d.Detail, d.Error, d.Outcome, d.RequestID = one.Detail, one.Error, one.Outcome, one.RequestID
		}
	}
	sum := fmt.Sprintf("%d of %d runs failed (%s)", d.FailedRuns, d.Runs, verdictCounts(d.Verdicts))
	if d.Detail != "" {
		sum += "; last: " + d.Detail
	}
	d.Detail = sum
	return d
}

// foldedNote is the resolution of a card with folded rows, "" when every
// cell is exact.
func foldedNote(classes []Class) string {
	var rows []string
	for _, cl := range classes {
		for _, r := range []struct {
			name string
			d    Dist
		}{{"TFC", cl.TFC}, {"gap", cl.Gap}, {"tail", cl.Tail}, {"close", cl.Close}} {
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
