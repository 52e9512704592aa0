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

// series is one result of an instant query.
type series struct {
	labels map[string]string
	value  float64
}

// query runs an instant query at t.
func (v VM) query(ctx context.Context, q string, t time.Time) ([]series, error) {
	u := strings.TrimRight(v.URL, "/") + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatInt(t.Unix(), 10)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	client := v.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The cause, and where it was asked: not the encoded query.
		return nil, fmt.Errorf("%w: %w (is VictoriaMetrics running at %s?)", ErrQuery, neterr.Cause(err), v.shownURL())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Status != "success" {
		msg := out.Error
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d, not a query API answer (is %s VictoriaMetrics, or vmselect's /select/0/prometheus?)", resp.StatusCode, v.shownURL())
		}
		return nil, fmt.Errorf("%w: %s", ErrQuery, oneLine(msg))
	}
	var res []series
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			continue
		}
		res = append(res, series{r.Metric, f})
	}
	return res, nil
}

// shownURL is v.URL as an error names it: without user info.
func (v VM) shownURL() string { return ShownURL(v.URL) }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

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
}

func (s *vmSums) class(region, target, sample string) *vmClass {
	k := classKey{region, target, sample}
	c := s.classes[k]
	if c == nil {
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
	var each eachSeries = func(q string, fn func(region string, s series)) error {
		res, err := v.query(ctx, fmt.Sprintf(q, w), until)
		if err != nil {
			return err
		}
		for _, s := range res {
			region := s.labels["region"]
			if region == "" {
				region = NoRegion
			}
			if !f.keep(region, s.labels["target"]) || s.value <= 0 {
				continue
			}
			seen.add(time.Time{}, bounded(s.labels["host"]), bounded(region))
			fn(region, s)
			fn("", s)
		}
		return nil
	}
	sums := &vmSums{classes: map[classKey]*vmClass{}, drills: map[drillKey]*vmDrill{}, flavours: map[cardKey]map[string]bool{}}
	if err := sums.readHistograms(each); err != nil {
		return nil, Seen{}, err
	}
	if err := sums.readCounters(each); err != nil {
		return nil, Seen{}, err
	}
	return v.cards(sums, budgets), seen.result(), nil
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
			c, target := s.class(region, sr.labels["target"], sr.labels["sample"]), sr.labels["target"]
			switch {
			case sr.labels["vmrange"] != "":
				lo, hi, ok := parseVMRange(sr.labels["vmrange"])
				if !ok {
					return
				}
				s.flavour(region, target, "vmrange")
				b := c.dists[i][sr.labels["vmrange"]]
				b.Lo, b.Hi, b.Count = lo*1000, hi*1000, b.Count+sr.value
				c.dists[i][sr.labels["vmrange"]] = b
			case sr.labels["le"] != "":
				le, err := strconv.ParseFloat(sr.labels["le"], 64)
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
		return s.class(region, sr.labels["target"], sr.labels["sample"])
	}
	for _, c := range []struct {
		query string
		add   func(region string, sr series)
	}{
		{`sum by (region,host,target,sample,outcome) (increase_pure(` + metricnames.Runs + `{` + noDrill + `}%s))`, func(region string, sr series) {
			class(region, sr).outcomes[sr.labels["outcome"]] += count(sr.value)
		}},
		{`sum by (region,target,sample) (increase_pure(` + metricnames.StalledRuns + `{` + noDrill + `}%s))`, func(region string, sr series) {
			class(region, sr).stalled += count(sr.value)
		}},
		{`sum by (region,target,sample) (increase_pure(` + metricnames.TFC + `_count{` + noDrill + `,resumed="true"}%s))`, func(region string, sr series) {
			class(region, sr).resumed += count(sr.value)
		}},
		{`sum by (region,target,sample,drill,verdict,failed) (increase_pure(` + metricnames.ResumeChecks + `%s))`, func(region string, sr series) {
			n, failed := count(sr.value), sr.labels["failed"] == "true"
			if sr.labels["drill"] == probe.DrillNone {
				c := class(region, sr)
				c.totalVerdicts += n
				if failed {
					c.badVerdicts += n
				}
				return
			}
			d := s.drill(region, sr.labels["target"], sr.labels["drill"])
			d.verdicts[sr.labels["verdict"]] += n
			if failed {
				d.failed += n
			}
		}},
		{`sum by (region,target,drill) (increase_pure(` + metricnames.Runs + `{drill!="` + probe.DrillNone + `"}%s))`, func(region string, sr series) {
			s.drill(region, sr.labels["target"], sr.labels["drill"]).runs += count(sr.value)
		}},
	} {
		if err := each(c.query, c.add); err != nil {
			return err
		}
	}
	return nil
}

// count is a counter increase as a count of runs.
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
	for k := range sums.drills {
		note(cardKey{k.region, k.target})
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
		c := scorecard.BuildClasses(ck.target, cl, sums.drillLines(ck), budgets)
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

// drillLines are the lines of the drills of a card, in drill order.
func (s *vmSums) drillLines(ck cardKey) []scorecard.Drill {
	var names []string
	for k := range s.drills {
		if k.region == ck.region && k.target == ck.target {
			names = append(names, k.drill)
		}
	}
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
