package report

import (
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
		return nil, fmt.Errorf("%w: %w", ErrQuery, err)
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
			msg = fmt.Sprintf("HTTP %d, not a query API answer", resp.StatusCode)
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

// Cards queries the window f selects (default: the DefaultWindow up to
// now) and makes one card per region and target, plus a fleet card per
// target from every region's buckets summed, when there is more than one
// region. The cards name the bucket resolution.
func (v VM) Cards(ctx context.Context, f Filter, budgets map[string]scorecard.Budget) ([]*scorecard.Card, error) {
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
		return nil, fmt.Errorf("%w: the window from %s to %s is empty", ErrQuery, since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	w := fmt.Sprintf("[%ds]", win)
	classes := map[classKey]*vmClass{}
	cls := func(region, target, sample string) *vmClass {
		k := classKey{region, target, sample}
		c := classes[k]
		if c == nil {
			c = &vmClass{outcomes: map[string]int{}}
			for i := range c.dists {
				c.dists[i], c.le[i] = map[string]scorecard.Bucket{}, map[float64]float64{}
			}
			classes[k] = c
		}
		return c
	}
	// add calls fn for the selected series of q, once under its region
	// and once under the fleet.
	add := func(q string, fn func(region string, s series)) error {
		res, err := v.query(ctx, q, until)
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
			fn(region, s)
			fn("", s)
		}
		return nil
	}
	// The histogram flavours found, by card ("" region: the fleet).
	flavours := map[[2]string]map[string]bool{}
	flavour := func(region, target, f string) {
		k := [2]string{region, target}
		if flavours[k] == nil {
			flavours[k] = map[string]bool{}
		}
		flavours[k][f] = true
	}
	for i, name := range []string{"tfc", "gap", "tail", "close"} {
		sel := `drill="none"`
		if name == "tfc" {
			sel += `,resumed="false"`
		}
		q := fmt.Sprintf(`sum by (region,target,sample,vmrange,le) (increase_pure(streamprobe_%s_seconds_bucket{%s}%s))`, name, sel, w)
		err := add(q, func(region string, s series) {
			c := cls(region, s.labels["target"], s.labels["sample"])
			switch {
			case s.labels["vmrange"] != "":
				lo, hi, ok := parseVMRange(s.labels["vmrange"])
				if !ok {
					return
				}
				flavour(region, s.labels["target"], "vmrange")
				b := c.dists[i][s.labels["vmrange"]]
				b.Lo, b.Hi, b.Count = lo*1000, hi*1000, b.Count+s.value
				c.dists[i][s.labels["vmrange"]] = b
			case s.labels["le"] != "":
				le, err := strconv.ParseFloat(s.labels["le"], 64)
				if err != nil {
					return
				}
				flavour(region, s.labels["target"], "le")
				c.le[i][le] += s.value
			}
		})
		if err != nil {
			return nil, err
		}
	}
	err := add(`sum by (region,target,sample,outcome) (increase_pure(streamprobe_runs_total{drill="none"}`+w+`))`, func(region string, s series) {
		cls(region, s.labels["target"], s.labels["sample"]).outcomes[s.labels["outcome"]] += count(s.value)
	})
	if err != nil {
		return nil, err
	}
	err = add(`sum by (region,target,sample) (increase_pure(streamprobe_stalled_runs_total{drill="none"}`+w+`))`, func(region string, s series) {
		cls(region, s.labels["target"], s.labels["sample"]).stalled += count(s.value)
	})
	if err != nil {
		return nil, err
	}
	err = add(`sum by (region,target,sample) (increase_pure(streamprobe_tfc_seconds_count{drill="none",resumed="true"}`+w+`))`, func(region string, s series) {
		cls(region, s.labels["target"], s.labels["sample"]).resumed += count(s.value)
	})
	if err != nil {
		return nil, err
	}
	drills := map[drillKey]*vmDrill{}
	dr := func(region, target, drill string) *vmDrill {
		k := drillKey{region, target, drill}
		if drills[k] == nil {
			drills[k] = &vmDrill{verdicts: map[string]int{}}
		}
		return drills[k]
	}
	err = add(`sum by (region,target,sample,drill,verdict,failed) (increase_pure(streamprobe_resume_checks_total`+w+`))`, func(region string, s series) {
		n := count(s.value)
		if s.labels["drill"] == probe.DrillNone {
			c := cls(region, s.labels["target"], s.labels["sample"])
			c.totalVerdicts += n
			if s.labels["failed"] == "true" {
				c.badVerdicts += n
			}
			return
		}
		d := dr(region, s.labels["target"], s.labels["drill"])
		d.verdicts[s.labels["verdict"]] += n
		if s.labels["failed"] == "true" {
			d.failed += n
		}
	})
	if err != nil {
		return nil, err
	}
	err = add(`sum by (region,target,drill) (increase_pure(streamprobe_runs_total{drill!="none"}`+w+`))`, func(region string, s series) {
		dr(region, s.labels["target"], s.labels["drill"]).runs += count(s.value)
	})
	if err != nil {
		return nil, err
	}
	return v.cards(classes, drills, flavours, budgets), nil
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
	slices.SortFunc(bs, func(a, b scorecard.Bucket) int {
		switch {
		case a.Hi < b.Hi:
			return -1
		case a.Hi > b.Hi:
			return 1
		}
		return 0
	})
	return scorecard.Dist{Buckets: bs}
}

func (v VM) cards(classes map[classKey]*vmClass, drills map[drillKey]*vmDrill, flavours map[[2]string]map[string]bool, budgets map[string]scorecard.Budget) []*scorecard.Card {
	type cardKey struct{ region, target string }
	samples := map[cardKey]map[string]bool{}
	regions := map[string]bool{}
	for k := range classes {
		ck := cardKey{k.region, k.target}
		if samples[ck] == nil {
			samples[ck] = map[string]bool{}
		}
		samples[ck][k.sample] = true
		if k.region != "" {
			regions[k.region] = true
		}
	}
	for k := range drills {
		ck := cardKey{k.region, k.target}
		if samples[ck] == nil {
			samples[ck] = map[string]bool{}
		}
		if k.region != "" {
			regions[k.region] = true
		}
	}
	var cards []*scorecard.Card
	for ck, present := range samples {
		if ck.region == "" && len(regions) < 2 {
			continue
		}
		var cl []scorecard.Class
		for _, s := range sampleOrder(present) {
			c := classes[classKey{ck.region, ck.target, s}]
			x := scorecard.Class{Sample: s, PromptSize: scorecard.PromptSize(s), TFC: c.dist(0), Gap: c.dist(1), Tail: c.dist(2), Close: c.dist(3),
				Outcomes: c.outcomes, Stalled: c.stalled, Resumed: c.resumed}
			x.Good = x.TFC.N()
			intended := string(probe.Success)
			if probe.Samples[s].Cancel {
				intended = string(probe.ClientCancelled)
			}
			for o, n := range c.outcomes {
				x.Runs += n
				if o != intended {
					x.Failed += n
				}
			}
			x.BadVerdict = c.badVerdicts
			x.Failed += c.badVerdicts
			cl = append(cl, x)
		}
		var names []string
		for k := range drills {
			if k.region == ck.region && k.target == ck.target {
				names = append(names, k.drill)
			}
		}
		var ds []scorecard.Drill
		for _, name := range drillOrder(names) {
			ds = append(ds, vmDrillLine(name, drills[drillKey{ck.region, ck.target, name}]))
		}
		c := scorecard.BuildClasses(ck.target, cl, ds, budgets)
		c.Region, c.Fleet = ck.region, ck.region == ""
		if len(cl) > 0 {
			c.Resolution = resolution(flavours[[2]string{ck.region, ck.target}])
		}
		c.Source = "VictoriaMetrics " + v.URL
		if c.Fleet {
			c.Source += fmt.Sprintf(", buckets of %d regions summed", len(regions))
		}
		cards = append(cards, c)
	}
	order(cards)
	return cards
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
		verdicts["none"] += d.runs - judged
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
