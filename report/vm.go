package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/metricnames"
	"github.com/streamprobe/streamprobe/internal/neterr"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
	"github.com/streamprobe/streamprobe/textgate"
)

// VM reads the series the daemons pushed (daemon/metrics.go) from the
// query API of VictoriaMetrics (single node, or vmselect's
// /select/0/prometheus), over a window ending at Until.
type VM struct {
	// URL is the query API's base: http://host:8428, or
	// http://vmselect:8481/select/0/prometheus.
	URL  string
	HTTP *http.Client
}

// DefaultWindow is the window of a report that gives no -since: a day.
const DefaultWindow = 24 * time.Hour

// vmrangeWidth is the width of a VictoriaMetrics/metrics histogram
// bucket: 18 buckets per decade.
var vmrangeWidth = math.Pow(10, 1.0/18)

// series is one result of an instant query: the labels report reads
// (each value through the gate, as every string VictoriaMetrics sends;
// others are not read) and its value.
type series struct {
	labels labelSet
	value  float64
}

// labelSet is what report reads of a series' labels.
type labelSet struct {
	Region  string `json:"region"`
	Host    string `json:"host"`
	Target  string `json:"target"`
	Sample  string `json:"sample"`
	Outcome string `json:"outcome"`
	Drill   string `json:"drill"`
	Verdict string `json:"verdict"`
	Failed  string `json:"failed"`
	VMRange string `json:"vmrange"`
	Le      string `json:"le"`
}

// Bounds of what report reads from VictoriaMetrics, whatever it answers:
// a window's answer is read as it streams in, one series at a time, and
// folded into classes; the classes, the buckets of a row and the drills
// and verdicts of a card are bounded, so memory stays small whatever the
// number of series (bench/README.md has the figures).
const (
	// MaxAnswer bounds the bytes of one query's answer.
	MaxAnswer = 256 << 20
	// MaxClasses bounds the classes (region, target, sample) and drills
	// (region, target, drill) of a report; series of others are counted
	// and skipped.
	MaxClasses = 10_000
	// MaxBuckets bounds the buckets of one row of one class: a histogram
	// the daemon wrote has at most a few hundred.
	MaxBuckets = 4096
	// MaxLabel bounds a label value a card shows (a target, a region).
	MaxLabel = 256
	// maxRuns is the largest counter increase read as a count of runs: a
	// larger one (1e308, +Inf: an overflowed or forged counter) is bad
	// data, never judged.
	maxRuns = 1e12
)

// query runs an instant query at t and calls fn with each series of the
// answer as it is read; the answer is never held whole.
func (v VM) query(ctx context.Context, q string, t time.Time, fn func(series)) error {
	u := strings.TrimRight(v.URL, "/") + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatInt(t.Unix(), 10)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrQuery, v.gate(err.Error(), MaxAnswerText))
	}
	client := v.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The cause, and where it was asked: not the encoded query.
		return fmt.Errorf("%w: %s (is VictoriaMetrics running at %s?)", ErrQuery, v.gate(neterr.Cause(err).Error(), MaxAnswerText), v.shownURL())
	}
	defer resp.Body.Close()
	a := answer{ctx: ctx, gate: v.gate, labels: &labelGate{secrets: v.secrets(), seen: map[string]string{}}, fn: fn}
	if err := a.read(io.LimitReader(resp.Body, MaxAnswer)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if a.status == "" {
			return fmt.Errorf("%w: HTTP %d, not a query API answer (is %s VictoriaMetrics, or vmselect's /select/0/prometheus?)", ErrQuery, resp.StatusCode, v.shownURL())
		}
		return fmt.Errorf("%w: reading the answer: %s", ErrQuery, v.gate(err.Error(), MaxAnswerText))
	}
	if a.status != "success" {
		msg := a.err
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d, not a query API answer (is %s VictoriaMetrics, or vmselect's /select/0/prometheus?)", resp.StatusCode, v.shownURL())
		}
		return fmt.Errorf("%w: %s", ErrQuery, msg)
	}
	return nil
}

// MaxAnswerText bounds a text of VictoriaMetrics' (an error message) an
// error quotes.
const MaxAnswerText = 200

// gate is a string VictoriaMetrics sent as report may show it: the
// credentials of v's URL and of the environment's proxies redacted in
// every form, control characters made visible, then bounded to limit
// bytes (never cut before the scrub).
func (v VM) gate(s string, limit int) string {
	return textgate.Scrub(s, v.secrets(), limit)
}

// secrets are what v's answers may echo: its URL's credentials and the
// proxies'.
func (v VM) secrets() []string {
	return append(textgate.URLSecrets(v.URL), textgate.ProxySecrets()...)
}

// labelGate gates label values, keeping what it gave for the values it
// saw last (label values repeat across the series of an answer).
type labelGate struct {
	secrets []string
	seen    map[string]string
}

// maxGateCache bounds the label values a labelGate remembers.
const maxGateCache = 4096

func (g *labelGate) gate(s string) string {
	if s == "" {
		return s
	}
	if v, ok := g.seen[s]; ok {
		return v
	}
	v := textgate.Scrub(s, g.secrets, MaxLabel)
	if len(g.seen) >= maxGateCache {
		clear(g.seen)
	}
	g.seen[s] = v
	return v
}

// gateLabels gates every label value of l.
func (g *labelGate) gateLabels(l *labelSet) {
	for _, p := range []*string{&l.Region, &l.Host, &l.Target, &l.Sample, &l.Outcome, &l.Drill, &l.Verdict, &l.Failed, &l.VMRange, &l.Le} {
		*p = g.gate(*p)
	}
}

// answer reads a query API answer ({"status","error","data":{"result":
// [...]}}, keys in any order) as a stream: each result is decoded alone,
// its labels gated, and handed to fn.
type answer struct {
	ctx         context.Context
	gate        func(string, int) string
	labels      *labelGate
	fn          func(series)
	status, err string
}

func (a *answer) read(r io.Reader) error {
	dec := json.NewDecoder(r)
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		switch key {
		case "status", "error":
			var v string
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if key == "status" {
				a.status = a.gate(v, MaxLabel)
			} else {
				a.err = a.gate(v, MaxAnswerText)
			}
		case "data":
			if err := a.data(dec); err != nil {
				return err
			}
		default:
			if err := skip(dec); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *answer) data(dec *json.Decoder) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "result" {
			if err := skip(dec); err != nil {
				return err
			}
			continue
		}
		if err := delim(dec, '['); err != nil {
			return err
		}
		for n := 0; dec.More(); n++ {
			if n%1024 == 0 && a.ctx.Err() != nil {
				return a.ctx.Err()
			}
			var r struct {
				Metric labelSet `json:"metric"`
				Value  [2]any   `json:"value"`
			}
			if err := dec.Decode(&r); err != nil {
				return err
			}
			v, _ := r.Value[1].(string)
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				f = math.NaN() // bad data: counted by the reader
			}
			a.labels.gateLabels(&r.Metric)
			a.fn(series{r.Metric, f})
		}
		if _, err := dec.Token(); err != nil { // ]
			return err
		}
	}
	_, err := dec.Token() // }
	return err
}

// delim reads the next token, which must be d.
func delim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("want %s, got %v", d, t)
	}
	return nil
}

// skip reads past the next value, whatever it is, a token at a time.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// shownURL is v.URL as an error names it: without user info.
func (v VM) shownURL() string { return ShownURL(v.URL) }

// classKey names one class of one target in one region ("" region: the
// fleet).
type classKey struct{ region, target, sample string }

// vmClass is a class summed from counters and buckets.
type vmClass struct {
	dists                                        [4]map[string]scorecard.Bucket // tfc, gap, tail, close by bucket name
	le                                           [4]map[float64]float64         // cumulative le buckets
	outcomes                                     map[string]int
	stalled, resumed, badVerdicts, totalVerdicts int
}

type drillKey struct{ region, target, drill string }

type vmDrill struct {
	runs     int
	verdicts map[string]int
	failed   int
}

// vmSums are the classes and drill runs of a window, each series summed
// under its region and under the fleet (region ""), and the histogram
// flavours found per card.
type vmSums struct {
	classes  map[classKey]*vmClass
	drills   map[drillKey]*vmDrill
	flavours map[cardKey]map[string]bool
	// drillsOf counts the drills of each card: past scorecard.MaxKinds,
	// a new drill name is "other"; samplesOf counts its samples: past
	// scorecard.MaxKinds, a new one is skipped.
	drillsOf, samplesOf map[cardKey]int
}

func (s *vmSums) class(region, target, sample string) *vmClass {
	k := classKey{region, target, sample}
	c := s.classes[k]
	if c == nil {
		s.samplesOf[cardKey{region, target}]++
		c = &vmClass{outcomes: map[string]int{}}
		for i := range c.dists {
			c.dists[i], c.le[i] = map[string]scorecard.Bucket{}, map[float64]float64{}
		}
		s.classes[k] = c
	}
	return c
}

func (s *vmSums) drill(region, target, drill string) *vmDrill {
	k := drillKey{region, target, drill}
	if s.drills[k] == nil {
		ck := cardKey{region, target}
		if s.drillsOf[ck] >= scorecard.MaxKinds {
			k.drill = "other"
			if d := s.drills[k]; d != nil {
				return d
			}
		}
		s.drillsOf[ck]++
		s.drills[k] = &vmDrill{verdicts: map[string]int{}}
	}
	return s.drills[k]
}

func (s *vmSums) flavour(region, target, f string) {
	k := cardKey{region, target}
	if s.flavours[k] == nil {
		s.flavours[k] = map[string]bool{}
	}
	s.flavours[k][f] = true
}

// window is the range of the queries, "[86400s]", and the time they are
// taken at: the window f selects, by default the DefaultWindow up to now.
func window(f Filter) (string, time.Time, error) {
	until := f.Until
	if until.IsZero() {
		until = time.Now()
	}
	since := f.Since
	if since.IsZero() {
		since = until.Add(-DefaultWindow)
	}
	win := int64(until.Sub(since).Seconds())
	if win < 1 {
		return "", until, fmt.Errorf("%w: the window from %s to %s is empty", ErrQuery, since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	return fmt.Sprintf("[%ds]", win), until, nil
}

// Cards queries the window f selects (default: the DefaultWindow up to
// now) and makes one card per region and target, plus a fleet card per
// target from every region's buckets summed, when there is more than one
// region. The cards name the bucket resolution.
func (v VM) Cards(ctx context.Context, f Filter, budgets map[string]scorecard.Budget) ([]*scorecard.Card, error) {
	cards, _, err := v.CardsSeen(ctx, f, budgets)
	return cards, err
}

// CardsSeen is Cards, and the hosts and regions of the series read (the
// buckets hold no run's start time: Seen's First and Last stay zero).
func (v VM) CardsSeen(ctx context.Context, f Filter, budgets map[string]scorecard.Budget) ([]*scorecard.Card, Seen, error) {
	w, until, err := window(f)
	if err != nil {
		return nil, Seen{}, err
	}
	seen := newSeen()
	sums := &vmSums{classes: map[classKey]*vmClass{}, drills: map[drillKey]*vmDrill{}, flavours: map[cardKey]map[string]bool{}, drillsOf: map[cardKey]int{}, samplesOf: map[cardKey]int{}}
	var each eachSeries = func(q string, fn func(region string, s series)) error {
		return v.query(ctx, fmt.Sprintf(q, w), until, func(s series) {
			region := s.labels.Region
			if region == "" {
				region = NoRegion
			}
			switch {
			case !f.keep(region, s.labels.Target):
				return
			case !f.known(s.labels.Target):
				seen.unknown(s.labels.Target)
				return
			case math.IsNaN(s.value) || s.value < 0 || s.value > maxRuns:
				seen.Bad++
				return
			case s.value == 0:
				return
			}
			if !sums.fits(region, s.labels) {
				seen.OverCap++
				return
			}
			seen.add(time.Time{}, s.labels.Host, region)
			fn(region, s)
			fn("", s)
		})
	}
	if err := sums.readHistograms(each); err != nil {
		return nil, Seen{}, err
	}
	if err := sums.readCounters(each); err != nil {
		return nil, Seen{}, err
	}
	return v.cards(sums, budgets), seen.result(), nil
}

// fits reports whether a series of region with labels may be folded: its
// class, drill and buckets are already kept, or within the bounds.
func (s *vmSums) fits(region string, labels labelSet) bool {
	target, sample, drill := labels.Target, labels.Sample, labels.Drill
	if drill != "" && drill != probe.DrillNone {
		if _, ok := s.drills[drillKey{region, target, drill}]; !ok && len(s.drills) >= MaxClasses {
			return false
		}
		return true
	}
	c, ok := s.classes[classKey{region, target, sample}]
	if !ok {
		return len(s.classes) < MaxClasses && s.samplesOf[cardKey{region, target}] < scorecard.MaxKinds &&
			s.samplesOf[cardKey{"", target}] < scorecard.MaxKinds
	}
	if r := labels.VMRange; r != "" {
		for i := range c.dists {
			if _, ok := c.dists[i][r]; !ok && len(c.dists[i]) >= MaxBuckets {
				return false
			}
		}
	}
	return true
}

// eachSeries runs a query over the window (its range a %s in q) and
// calls fn for each series the filter selects: once under the series'
// region, once under the fleet.
type eachSeries func(q string, fn func(region string, s series)) error

// noDrill selects the series of plain runs (no drill).
const noDrill = `drill="` + probe.DrillNone + `"`

// readHistograms sums the buckets of the four timing rows, in either
// flavour: vmrange (VictoriaMetrics) or le (Prometheus).
func (s *vmSums) readHistograms(each eachSeries) error {
	for i, name := range scorecard.TimingRows {
		sel := noDrill
		if name == scorecard.RowTFC {
			sel += `,resumed="false"`
		}
		q := `sum by (region,target,sample,vmrange,le) (increase_pure(` + metricnames.Timing(name) + `_bucket{` + sel + `}%s))`
		err := each(q, func(region string, sr series) {
			c, target := s.class(region, sr.labels.Target, sr.labels.Sample), sr.labels.Target
			switch {
			case sr.labels.VMRange != "":
				lo, hi, ok := parseVMRange(sr.labels.VMRange)
				if !ok {
					return
				}
				s.flavour(region, target, "vmrange")
				b := c.dists[i][sr.labels.VMRange]
				b.Lo, b.Hi, b.Count = lo*1000, hi*1000, b.Count+sr.value
				c.dists[i][sr.labels.VMRange] = b
			case sr.labels.Le != "":
				le, err := strconv.ParseFloat(sr.labels.Le, 64)
				if err != nil {
					return
				}
				s.flavour(region, target, "le")
				c.le[i][le] += sr.value
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readCounters sums the counters: the runs by outcome, the stalled and
// the resumed runs of each class, the resume verdicts of its runs and of
// the drills, and the drill runs.
func (s *vmSums) readCounters(each eachSeries) error {
	class := func(region string, sr series) *vmClass {
		return s.class(region, sr.labels.Target, sr.labels.Sample)
	}
	for _, c := range []struct {
		query string
		add   func(region string, sr series)
	}{
		{`sum by (region,host,target,sample,outcome) (increase_pure(` + metricnames.Runs + `{` + noDrill + `}%s))`, func(region string, sr series) {
			c := class(region, sr)
			c.outcomes[scorecard.Kind(c.outcomes, sr.labels.Outcome)] += count(sr.value)
		}},
		{`sum by (region,target,sample) (increase_pure(` + metricnames.StalledRuns + `{` + noDrill + `}%s))`, func(region string, sr series) {
			class(region, sr).stalled += count(sr.value)
		}},
		{`sum by (region,target,sample) (increase_pure(` + metricnames.TFC + `_count{` + noDrill + `,resumed="true"}%s))`, func(region string, sr series) {
			class(region, sr).resumed += count(sr.value)
		}},
		{`sum by (region,target,sample,drill,verdict,failed) (increase_pure(` + metricnames.ResumeChecks + `%s))`, func(region string, sr series) {
			n, failed := count(sr.value), sr.labels.Failed == "true"
			if sr.labels.Drill == probe.DrillNone {
				c := class(region, sr)
				c.totalVerdicts += n
				if failed {
					c.badVerdicts += n
				}
				return
			}
			d := s.drill(region, sr.labels.Target, sr.labels.Drill)
			d.verdicts[scorecard.Kind(d.verdicts, sr.labels.Verdict)] += n
			if failed {
				d.failed += n
			}
		}},
		{`sum by (region,target,drill) (increase_pure(` + metricnames.Runs + `{drill!="` + probe.DrillNone + `"}%s))`, func(region string, sr series) {
			s.drill(region, sr.labels.Target, sr.labels.Drill).runs += count(sr.value)
		}},
	} {
		if err := each(c.query, c.add); err != nil {
			return err
		}
	}
	return nil
}

// count is a counter increase as a count of runs (at most maxRuns: a
// larger value was counted as bad data before it got here).
func count(v float64) int { return int(math.Round(v)) }

// parseVMRange reads a vmrange label ("1.000e-01...1.136e-01") in
// seconds.
func parseVMRange(s string) (lo, hi float64, ok bool) {
	a, b, found := strings.Cut(s, "...")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseFloat(a, 64)
	hi, err2 := strconv.ParseFloat(b, 64)
	return lo, hi, err1 == nil && err2 == nil
}

// dist turns the summed buckets of one row into a scorecard.Dist.
func (c *vmClass) dist(i int) scorecard.Dist {
	var bs []scorecard.Bucket
	for _, b := range c.dists[i] {
		if b.Count > 0 {
			bs = append(bs, b)
		}
	}
	les := slices.Sorted(maps.Keys(c.le[i]))
	prevLe, prevCum := 0.0, 0.0
	for _, le := range les {
		cum := c.le[i][le]
		if n := cum - prevCum; n > 0 {
			bs = append(bs, scorecard.Bucket{Lo: prevLe * 1000, Hi: le * 1000, Count: n})
		}
		prevLe, prevCum = le, max(prevCum, cum)
	}
	slices.SortFunc(bs, func(a, b scorecard.Bucket) int { return cmp.Compare(a.Hi, b.Hi) })
	return scorecard.Dist{Buckets: bs}
}

// cards makes the card of each region and target, and of each target's
// fleet when there is more than one region.
func (v VM) cards(sums *vmSums, budgets map[string]scorecard.Budget) []*scorecard.Card {
	samples := map[cardKey]map[string]bool{}
	regions := map[string]bool{}
	note := func(k cardKey) map[string]bool {
		if samples[k] == nil {
			samples[k] = map[string]bool{}
		}
		if k.region != "" {
			regions[k.region] = true
		}
		return samples[k]
	}
	for k := range sums.classes {
		note(cardKey{k.region, k.target})[k.sample] = true
	}
	drillNames := map[cardKey][]string{}
	for k := range sums.drills {
		note(cardKey{k.region, k.target})
		drillNames[cardKey{k.region, k.target}] = append(drillNames[cardKey{k.region, k.target}], k.drill)
	}
	var cards []*scorecard.Card
	for ck, present := range samples {
		if ck.region == "" && len(regions) < 2 {
			continue
		}
		var cl []scorecard.Class
		for _, s := range sampleOrder(present) {
			cl = append(cl, sums.classes[classKey{ck.region, ck.target, s}].asClass(s))
		}
		c := scorecard.BuildClasses(ck.target, cl, sums.drillLines(ck, drillNames[ck]), budgets)
		c.Region, c.Fleet = ck.region, ck.region == ""
		if len(cl) > 0 {
			c.Resolution = resolution(sums.flavours[ck])
		}
		c.Source = "VictoriaMetrics " + ShownURL(v.URL)
		if c.Fleet {
			c.Source += fmt.Sprintf(", buckets of %d regions summed", len(regions))
		}
		cards = append(cards, c)
	}
	order(cards)
	return cards
}

// asClass is the scorecard class of the sample: its rows from the summed
// buckets, its runs from the counters; a run counts as failed when its
// outcome is not the one its sample intends, or its resume verdict
// failed.
func (c *vmClass) asClass(sample string) scorecard.Class {
	x := scorecard.Class{Sample: sample, PromptSize: scorecard.PromptSize(sample), TFC: c.dist(0), Gap: c.dist(1), Tail: c.dist(2), Close: c.dist(3),
		Outcomes: c.outcomes, Stalled: c.stalled, Resumed: c.resumed, BadVerdict: c.badVerdicts, Failed: c.badVerdicts}
	x.Good = x.TFC.N()
	intended := string(probe.Success)
	if dialect.Samples[sample].Cancel {
		intended = string(probe.ClientCancelled)
	}
	for o, n := range c.outcomes {
		x.Runs += n
		if o != intended {
			x.Failed += n
		}
	}
	return x
}

// drillLines are the lines of the drills of a card, in drill order, from
// the names of its drills (drillNames).
func (s *vmSums) drillLines(ck cardKey, names []string) []scorecard.Drill {
	var ds []scorecard.Drill
	for _, name := range drillOrder(names) {
		ds = append(ds, vmDrillLine(name, s.drills[drillKey{ck.region, ck.target, name}]))
	}
	return ds
}

// vmDrillLine sums a drill's verdict counters into its card line; runs
// without a verdict (a 5xx, a timeout before the drop) count as failed.
func vmDrillLine(name string, d *vmDrill) scorecard.Drill {
	judged := 0
	for _, n := range d.verdicts {
		judged += n
	}
	verdicts := maps.Clone(d.verdicts)
	failed := d.failed
	if d.runs > judged {
		verdicts[string(probe.VerdictNone)] += d.runs - judged
		failed += d.runs - judged
	}
	runs := max(d.runs, judged)
	line := scorecard.SumVerdicts(name, runs, failed, verdicts)
	return line
}

// resolution says how exact the cells are, from the histogram flavours
// found.
func resolution(flavours map[string]bool) string {
	var parts []string
	if flavours["vmrange"] {
		parts = append(parts, fmt.Sprintf("VictoriaMetrics vmrange buckets, 18 per decade (each %.1f%% wider than the one below)", (vmrangeWidth-1)*100))
	}
	if flavours["le"] {
		parts = append(parts, "Prometheus le buckets at 5, 10, 25, 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30, 60, 120, 300 s")
	}
	if len(parts) == 0 {
		return "no histogram buckets in the window"
	}
	return strings.Join(parts, " and ") + "; a percentile is known to within its bucket (p50_bucket_ms, p95_bucket_ms in -json), interpolated inside it as histogram_quantile does"
}
