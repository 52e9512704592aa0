package scorecard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/stats"
	"github.com/streamprobe/streamprobe/probe"
)

// CompareSide is one side of a comparison, a baseline or a candidate: the
// records of its plain runs by sample, and its drill runs.
type CompareSide struct {
	// Name says what the side is: a target, a URL, log files.
	Name string
	// Samples are the samples in column order.
	Samples []string
	Runs    map[string][]probe.Record
	Drills  []probe.Record
}

// CompareOptions are how a comparison is made.
type CompareOptions struct {
	// Confidence is the level at which every interval of the comparison
	// holds together (DefaultConfidence when 0); Alpha, when set, is
	// 1-Confidence (a sequential compare's look spends its part).
	Confidence float64
	// Margin is the margin of a metric (config.Config.Margin).
	Margin func(metric string) float64
	// Seed seeds the bootstrap: the same data and seed give the same
	// intervals. Resamples is the bootstrap's resamples (0:
	// stats.Resamples of each interval's alpha).
	Seed      uint64
	Resamples int
}

// The verdicts of one metric of a comparison.
const (
	Better  = "better"
	Same    = "same"
	Worse   = "worse"
	Unknown = "inconclusive"
)

// Comparison is a candidate compared with its baseline: per class and
// metric the change with its interval against the metric's margin, and
// the resume verdicts; every interval at once holds with Confidence
// (Bonferroni over the Comparisons made).
type Comparison struct {
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// Result is PASS, FAIL or INCONCLUSIVE; Pass is Result == PASS;
	// Verdict the line that says it.
	Result  string `json:"result"`
	Pass    bool   `json:"pass"`
	Verdict string `json:"verdict"`
	// Worse, Inconclusive, Better and SameCount count the metrics by
	// verdict; HardFails are the resume verdicts that fail on the
	// candidate and not on the baseline.
	Worse        int      `json:"worse"`
	Inconclusive int      `json:"inconclusive"`
	Better       int      `json:"better"`
	SameCount    int      `json:"same"`
	HardFails    []string `json:"hard_fails"`
	// Confidence holds for all the intervals together; Comparisons is
	// how many there are; IntervalConfidence the level of each
	// (1-(1-Confidence)/Comparisons).
	Confidence         float64 `json:"confidence"`
	Comparisons        int     `json:"comparisons"`
	IntervalConfidence float64 `json:"interval_confidence"`
	Seed               uint64  `json:"seed"`
	Resamples          int     `json:"bootstrap_resamples"`
	// Samples are the classes compared, in column order.
	Samples []string         `json:"samples"`
	Metrics []MetricChange   `json:"metrics"`
	Resume  []ResumeCompared `json:"resume"`

	base, cand map[string]*sideClass
}

// MetricChange is one metric of one class compared.
type MetricChange struct {
	Sample string `json:"sample"`
	Metric string `json:"metric"`
	// Unit is "ms" (Baseline and Candidate are times; Change is relative,
	// 0.2 = +20%) or "share" (shares of runs; Change is in points of
	// share, 0.05 = +5 points).
	Unit          string   `json:"unit"`
	Baseline      *float64 `json:"baseline"`
	Candidate     *float64 `json:"candidate"`
	BaselineRuns  int      `json:"baseline_runs"`
	CandidateRuns int      `json:"candidate_runs"`
	Change        *float64 `json:"change"`
	Lo            *float64 `json:"change_lo"`
	Hi            *float64 `json:"change_hi"`
	Margin        float64  `json:"margin"`
	// Method names how the interval was made: hodges-lehmann
	// (Mann-Whitney), bootstrap (runs resampled), exact (two exact
	// intervals of the difference of shares together, stats.ShareDiff).
	Method string `json:"method"`
	// PValue is Fisher's exact test that the two shares are one.
	PValue *float64 `json:"fisher_p,omitempty"`
	// Verdict is better, same, worse or inconclusive; "" when a side has
	// nothing to compare (no run measured it).
	Verdict string `json:"verdict"`
}

// ResumeCompared is one drill, or one class's resumed runs, on both
// sides: the failing runs and their verdicts.
type ResumeCompared struct {
	What              string         `json:"what"`
	BaselineRuns      int            `json:"baseline_runs"`
	BaselineFailed    int            `json:"baseline_failed"`
	BaselineVerdicts  map[string]int `json:"baseline_verdicts,omitempty"`
	CandidateRuns     int            `json:"candidate_runs"`
	CandidateFailed   int            `json:"candidate_failed"`
	CandidateVerdicts map[string]int `json:"candidate_verdicts,omitempty"`
	// HardFail is a verdict failing on the candidate that no baseline
	// run of it had.
	HardFail string `json:"hard_fail,omitempty"`
}

// sideClass is what a comparison reads of one class of one side.
type sideClass struct {
	tfc, tail  []float64   // per measured run
	gaps       [][]float64 // per measured run
	good, runs int
	stalled    int
	buffered   int
	failed     int
}

func sideClassOf(recs []probe.Record) *sideClass {
	s := &sideClass{}
	for _, r := range recs {
		s.runs++
		if !r.Passed() {
			s.failed++
		}
		if !r.Intended() || r.Resumed {
			continue
		}
		s.good++
		if r.TFCMs != nil {
			s.tfc = append(s.tfc, *r.TFCMs)
		}
		if r.TailMs != nil {
			s.tail = append(s.tail, *r.TailMs)
		}
		s.gaps = append(s.gaps, r.Gaps.Values)
		if r.Stalls > 0 {
			s.stalled++
		}
		if _, ok := r.Buffering(); ok {
			s.buffered++
		}
	}
	return s
}

// metricKind is how one compare metric is computed.
type metricKind struct {
	name  string
	share bool
	// values are a time metric's values per run (one each for tfc and
	// tail, every gap for gap); q its percentile.
	values func(*sideClass) [][]float64
	q      float64
	// count is a share metric's k of n.
	count func(*sideClass) (int, int)
}

func singles(v []float64) [][]float64 {
	out := make([][]float64, len(v))
	for i := range v {
		out[i] = v[i : i+1]
	}
	return out
}

// compareMetrics are config.CompareMetrics as computed, in their order.
var compareMetrics = []metricKind{
	{name: "tfc_p50", values: func(s *sideClass) [][]float64 { return singles(s.tfc) }, q: 0.5},
	{name: "tfc_p95", values: func(s *sideClass) [][]float64 { return singles(s.tfc) }, q: 0.95},
	{name: "gap_p50", values: func(s *sideClass) [][]float64 { return s.gaps }, q: 0.5},
	{name: "gap_p95", values: func(s *sideClass) [][]float64 { return s.gaps }, q: 0.95},
	{name: "tail_p50", values: func(s *sideClass) [][]float64 { return singles(s.tail) }, q: 0.5},
	{name: "tail_p95", values: func(s *sideClass) [][]float64 { return singles(s.tail) }, q: 0.95},
	{name: "stall_share", share: true, count: func(s *sideClass) (int, int) { return s.stalled, s.good }},
	{name: "error_share", share: true, count: func(s *sideClass) (int, int) { return s.failed, s.runs }},
	{name: "buffering_share", share: true, count: func(s *sideClass) (int, int) { return s.buffered, s.good }},
}

// has reports whether a side has anything for metric k.
func (k metricKind) has(s *sideClass) bool {
	if k.share {
		_, n := k.count(s)
		return n > 0
	}
	for _, v := range k.values(s) {
		if len(v) > 0 {
			return true
		}
	}
	return false
}

// Compare compares the candidate with the baseline, class by class (the
// samples both have) and metric by metric (config.CompareMetrics), and
// their resume verdicts. Every interval is at 1-alpha/m for m the
// metrics compared (Bonferroni): all of them hold together with
// o.Confidence, so the chance that any metric is called worse (or better,
// or same) wrongly is at most 1-o.Confidence.
func Compare(base, cand CompareSide, o CompareOptions) *Comparison {
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Margin == nil {
		o.Margin = (&config.Config{}).Margin
	}
	c := &Comparison{Baseline: base.Name, Candidate: cand.Name, Confidence: o.Confidence, Seed: o.Seed,
		base: map[string]*sideClass{}, cand: map[string]*sideClass{}, HardFails: []string{}}
	for _, s := range base.Samples {
		if slices.Contains(cand.Samples, s) {
			c.Samples = append(c.Samples, s)
			c.base[s], c.cand[s] = sideClassOf(base.Runs[s]), sideClassOf(cand.Runs[s])
		}
	}
	for _, s := range c.Samples {
		for _, k := range compareMetrics {
			if k.has(c.base[s]) && k.has(c.cand[s]) {
				c.Comparisons++
			}
		}
	}
	alpha := (1 - o.Confidence) / float64(max(1, c.Comparisons))
	c.IntervalConfidence = 1 - alpha
	c.Resamples = o.Resamples
	if c.Resamples == 0 {
		c.Resamples = stats.Resamples(alpha)
	}
	for _, s := range c.Samples {
		for i, k := range compareMetrics {
			m := c.metric(s, k, alpha, o.Margin(k.name), rand.New(rand.NewPCG(o.Seed, uint64(i)<<32|uint64(slices.Index(c.Samples, s)))))
			c.Metrics = append(c.Metrics, m)
		}
	}
	c.Resume = append([]ResumeCompared{}, compareResume(base, cand, c.Samples)...)
	for _, r := range c.Resume {
		if r.HardFail != "" {
			c.HardFails = append(c.HardFails, r.HardFail)
		}
	}
	c.conclude()
	return c
}

// metric compares one metric of class s.
func (c *Comparison) metric(s string, k metricKind, alpha, margin float64, rng *rand.Rand) MetricChange {
	b, d := c.base[s], c.cand[s]
	m := MetricChange{Sample: s, Metric: k.name, Unit: "ms", Margin: margin, BaselineRuns: b.good, CandidateRuns: d.good}
	if k.share {
		m.Unit, m.Method = "share", "exact"
		kb, nb := k.count(b)
		kc, nc := k.count(d)
		m.BaselineRuns, m.CandidateRuns = nb, nc
		if nb == 0 || nc == 0 {
			return m
		}
		vb, vc := float64(kb)/float64(nb), float64(kc)/float64(nc)
		lo, hi := stats.ShareDiff(kb, nb, kc, nc, alpha)
		p := stats.FisherExact(kb, nb, kc, nc)
		diff := vc - vb
		m.Baseline, m.Candidate, m.Change, m.Lo, m.Hi, m.PValue = &vb, &vc, &diff, &lo, &hi, &p
		m.Verdict = changeVerdict(lo, hi, margin)
		return m
	}
	pb, pc := stats.NewPooled(k.values(b)), stats.NewPooled(k.values(d))
	if pb.N() == 0 || pc.N() == 0 {
		return m
	}
	vb, _ := pb.Quantile(k.q)
	vc, _ := pc.Quantile(k.q)
	m.Baseline, m.Candidate = &vb, &vc
	var ch stats.Change
	var ok bool
	if k.q == 0.5 && k.name != "gap_p50" {
		// One value per run: the shift of the median, Hodges-Lehmann.
		m.Method = "hodges-lehmann"
		ch, ok = stats.LogShift(flat(k.values(b)), flat(k.values(d)), alpha)
	} else {
		// A p95, or the gaps (many per run): the bootstrap over runs.
		m.Method = "bootstrap"
		ch, ok = stats.BootQuantile(pb, pc, k.q, alpha, c.Resamples, rng)
	}
	if !ok {
		return m
	}
	rel := func(x float64) *float64 { v := math.Exp(x) - 1; return &v }
	m.Change, m.Lo, m.Hi = rel(ch.Est), rel(ch.Lo), rel(ch.Hi)
	m.Verdict = changeVerdict(*m.Lo, *m.Hi, margin)
	return m
}

func flat(v [][]float64) []float64 {
	var out []float64
	for _, r := range v {
		out = append(out, r...)
	}
	return out
}

// changeVerdict is a change's verdict against its margin (the change a
// candidate may have and still be the same): worse when the whole
// interval is above the margin, inconclusive when it straddles it, better
// when it is wholly under minus the margin, same otherwise (the interval's
// top within the margin).
func changeVerdict(lo, hi, margin float64) string {
	switch {
	case lo > margin:
		return Worse
	case hi > margin || math.IsNaN(lo) || math.IsNaN(hi):
		return Unknown
	case hi < -margin:
		return Better
	}
	return Same
}

// conclude counts the verdicts and sets the result: FAIL when a metric is
// worse or a resume verdict fails on the candidate only, else
// INCONCLUSIVE when a metric is, else PASS.
func (c *Comparison) conclude() {
	for _, m := range c.Metrics {
		switch m.Verdict {
		case Worse:
			c.Worse++
		case Unknown:
			c.Inconclusive++
		case Better:
			c.Better++
		case Same:
			c.SameCount++
		}
	}
	switch {
	case c.Worse > 0 || len(c.HardFails) > 0:
		c.Result = Fail
		c.Verdict = fmt.Sprintf("FAIL (%d metric(s) worse, %d resume verdict(s) failing on the candidate only, %d inconclusive)", c.Worse, len(c.HardFails), c.Inconclusive)
	case c.Inconclusive > 0:
		c.Result = Inconclusive
		c.Verdict = fmt.Sprintf("INCONCLUSIVE (%d metric(s) inconclusive, none worse)", c.Inconclusive)
	default:
		c.Result = Pass
		c.Verdict = fmt.Sprintf("PASS (none of %d metric(s) worse: %d same, %d better)", c.Comparisons, c.SameCount, c.Better)
	}
	c.Pass = c.Result == Pass
}

// Decided reports whether more runs could change the result: no metric
// is inconclusive, or one is worse or a resume verdict fails on the
// candidate only (a FAIL more runs do not undo: every interval holds
// together, whatever look the runs stop at).
func (c *Comparison) Decided() bool { return c.Result != Inconclusive }

// compareResume lines up each drill, and each class's resumed runs, on
// both sides: a verdict that fails on the candidate and on no baseline
// run of the same drill (or class) is a hard fail.
func compareResume(base, cand CompareSide, samples []string) []ResumeCompared {
	var out []ResumeCompared
	byDrill := func(recs []probe.Record) map[string][]probe.Record {
		m := map[string][]probe.Record{}
		for _, r := range recs {
			m[r.Drill] = append(m[r.Drill], r)
		}
		return m
	}
	bd, cd := byDrill(base.Drills), byDrill(cand.Drills)
	for _, d := range probe.DrillNames {
		if len(bd[d])+len(cd[d]) > 0 {
			out = append(out, resumeOf("drill "+d, bd[d], cd[d]))
		}
	}
	resumed := func(recs []probe.Record) []probe.Record {
		var out []probe.Record
		for _, r := range recs {
			if r.Verdict != "" {
				out = append(out, r)
			}
		}
		return out
	}
	for _, s := range samples {
		b, c := resumed(base.Runs[s]), resumed(cand.Runs[s])
		if len(b)+len(c) > 0 {
			out = append(out, resumeOf(s+" runs resumed", b, c))
		}
	}
	return out
}

func resumeOf(what string, b, c []probe.Record) ResumeCompared {
	r := ResumeCompared{What: what, BaselineRuns: len(b), CandidateRuns: len(c), BaselineVerdicts: map[string]int{}, CandidateVerdicts: map[string]int{}}
	baseFails := map[probe.Verdict]bool{}
	for _, x := range b {
		r.BaselineVerdicts[verdictName(x)]++
		if !x.Passed() {
			r.BaselineFailed++
			baseFails[x.Verdict] = true
		}
	}
	for _, x := range c {
		r.CandidateVerdicts[verdictName(x)]++
		if !x.Passed() {
			r.CandidateFailed++
			if !baseFails[x.Verdict] && r.HardFail == "" {
				r.HardFail = fmt.Sprintf("%s: %s on the candidate (request_id %s), never on the baseline", what, verdictName(x), x.RequestID)
			}
		}
	}
	return r
}

func verdictName(r probe.Record) string {
	if r.Verdict == "" {
		return string(probe.VerdictNone) + " (" + string(r.Outcome) + ")"
	}
	return string(r.Verdict)
}
