package report

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
	"github.com/streamprobe/streamprobe/textgate"
)

// LogFile is one results log (JSON lines, as the daemon's results_log
// writes them) and the region of its records that carry none.
type LogFile struct {
	Path, Region string
}

// Logs are the runs read from results logs, folded by region and target
// as each line is read: memory grows with the regions, targets and
// samples, never with the number of runs (scorecard.ClassBuilder).
type Logs struct {
	// Lines counts the lines read; Kept the runs selected; Outside the
	// runs outside the window or the filters; Bad the lines that are not
	// a record; Oversized the lines over MaxLine bytes, skipped unread;
	// NoTime the records without a readable started_at while a window was
	// asked for; Shutdown the runs cut by a daemon's shutdown (logged,
	// never counted as runs, as in the metrics).
	Lines, Kept, Outside, Bad, Oversized, NoTime, Shutdown int
	// FirstOversized names the first line over MaxLine: "FILE line N".
	FirstOversized string

	cards   map[cardKey]*cardSum
	regions map[string]bool
	seen    seen
	// pool bounds the exact values of every class together.
	pool *scorecard.Pool
	// sli counts the runs against the SLIs (ErrorBudget), each class's
	// TFC within tfcBudgetMs (by sample, or by "target/sample" for a
	// target with a budget of its own).
	sli         sliSums
	tfcBudgetMs map[string]float64
	// each, when set, is handed every record kept (compare reads the
	// runs one by one); the record's gap values are its own.
	each func(region string, rec probe.Record)
}

// MaxExactValues bounds the values a report over logs keeps exact, over
// every class together (8 MB of them): past it, the row holding the most
// folds into a histogram of log buckets (the card says so), so memory
// stays bounded whatever the number of runs and classes.
const MaxExactValues = 1_000_000

// cardKey is one card: a region and a target, region "" the fleet.
type cardKey struct{ region, target string }

// cardSum is one card's runs folded: plain runs by sample, drill runs by
// drill.
type cardSum struct {
	classes map[string]*scorecard.ClassBuilder
	drills  map[string]*scorecard.DrillSum
}

// logLine is a record as the results log holds it. Region and host are
// read when the record has them (a daemon that labels its records);
// fields a record lacks are absent, never zero.
type logLine struct {
	probe.Record
	Region string `json:"region,omitempty"`
	Host   string `json:"host,omitempty"`
}

// MaxLine bounds one line of a results log (a record with every gap of a
// long answer): a longer line is skipped and counted, never buffered.
const MaxLine = 16 << 20

// MaxText bounds each text a card shows from a log (request id, error,
// resume detail, names), after textgate.Scrub made it one line of
// printable text.
const MaxText = 1 << 10

// ReadLogs reads the results logs and folds the runs f selects. It stops
// with ctx's error when ctx ends (a SIGINT), within a few thousand lines.
func ReadLogs(ctx context.Context, files []LogFile, f Filter) (*Logs, error) {
	return ReadLogsSLO(ctx, files, f, nil)
}

// ReadLogsSLO is ReadLogs that also counts the runs against the SLIs
// (ErrorBudget), each class's TFC against its budget in tfcBudgetMs: a
// target's own ("target/sample"), else the sample's.
func ReadLogsSLO(ctx context.Context, files []LogFile, f Filter, tfcBudgetMs map[string]float64) (*Logs, error) {
	l := newLogs()
	l.tfcBudgetMs = tfcBudgetMs
	if err := l.readAll(ctx, files, f); err != nil {
		return nil, err
	}
	return l, nil
}

// ReadLogsEach is ReadLogs that also hands each record it keeps to each
// (nil: none), with the region it was kept in.
func ReadLogsEach(ctx context.Context, files []LogFile, f Filter, each func(region string, rec probe.Record)) (*Logs, error) {
	l := newLogs()
	l.each = each
	if err := l.readAll(ctx, files, f); err != nil {
		return nil, err
	}
	return l, nil
}

// readAll reads the files in turn.
func (l *Logs) readAll(ctx context.Context, files []LogFile, f Filter) error {
	for _, lf := range files {
		if err := l.read(ctx, lf, f); err != nil {
			return err
		}
	}
	return nil
}

func newLogs() *Logs {
	return &Logs{cards: map[cardKey]*cardSum{}, regions: map[string]bool{}, seen: newSeen(), pool: &scorecard.Pool{Limit: MaxExactValues}, sli: sliSums{}}
}

// Seen is what the kept runs held: the first and last start time, the
// hosts and the regions.
func (l *Logs) Seen() Seen { return l.seen.result() }

func (l *Logs) read(ctx context.Context, lf LogFile, f Filter) error {
	fh, err := os.Open(lf.Path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLog, err)
	}
	defer fh.Close()
	lr := lineReader{r: bufio.NewReaderSize(fh, 64<<10), max: MaxLine}
	var line logLine
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		b, over, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrLog, lf.Path, n, err)
		}
		l.Lines++
		if over {
			if l.Oversized == 0 {
				l.FirstOversized = fmt.Sprintf("%s line %d", lf.Path, n)
			}
			l.Oversized++
			continue
		}
		// A fresh record each line (absent fields stay absent), reusing
		// the gap values' array.
		gaps := line.Gaps.Values[:0]
		line = logLine{}
		line.Gaps.Values = gaps
		if err := json.Unmarshal(b, &line); err != nil || line.Target == "" || line.RequestID == "" {
			l.Bad++
			continue
		}
		l.keep(lf, f, line)
	}
}

// keep folds one record when f selects it.
func (l *Logs) keep(lf LogFile, f Filter, line logLine) {
	if line.Error == "cancelled by shutdown" {
		l.Shutdown++
		return
	}
	region := line.Region
	if region == "" {
		region = lf.Region
	}
	if region == "" {
		region = NoRegion
	}
	at, err := time.Parse(time.RFC3339Nano, line.StartedAt)
	if !f.Since.IsZero() || !f.Until.IsZero() {
		if err != nil {
			l.NoTime++
			return
		}
		if (!f.Since.IsZero() && at.Before(f.Since)) || (!f.Until.IsZero() && !at.Before(f.Until)) {
			l.Outside++
			return
		}
	}
	if !f.keep(region, line.Target) {
		l.Outside++
		return
	}
	if !f.known(line.Target) {
		l.seen.unknown(bounded(line.Target))
		return
	}
	region = bounded(region)
	l.add(region, line.Record)
	l.seen.add(at, bounded(line.Host), region)
	l.Kept++
}

// bounded is a text of a log as a card may show it.
func bounded(s string) string {
	if len(s) <= MaxText && plain(s) {
		return s
	}
	return textgate.Scrub(s, nil, MaxText)
}

// plain reports whether Scrub would leave s as it is: printable ASCII,
// single spaces between words.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') || c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// add folds a record kept in region into its region's card and the
// fleet's.
func (l *Logs) add(region string, rec probe.Record) {
	for _, p := range []*string{&rec.RequestID, &rec.Target, &rec.Sample, &rec.Drill, &rec.Error, &rec.ResumeDetail, (*string)(&rec.Outcome), (*string)(&rec.Verdict)} {
		*p = bounded(*p)
	}
	if l.each != nil {
		own := rec
		own.Gaps.Values = slices.Clone(rec.Gaps.Values)
		l.each(region, own)
	}
	if len(l.regions) < MaxNames {
		l.regions[region] = true
	}
	tfc, own := l.tfcBudgetMs[rec.Target+"/"+rec.Sample]
	if !own {
		tfc = l.tfcBudgetMs[rec.Sample]
	}
	l.sli.record(region, rec, tfc)
	for _, k := range []cardKey{{region, rec.Target}, {"", rec.Target}} {
		cs := l.cards[k]
		if cs == nil && len(l.cards) >= MaxClasses {
			l.seen.OverCap++
			continue
		}
		if cs == nil {
			cs = &cardSum{classes: map[string]*scorecard.ClassBuilder{}, drills: map[string]*scorecard.DrillSum{}}
			l.cards[k] = cs
		}
		if rec.Drill != "" && rec.Drill != probe.DrillNone {
			name := rec.Drill
			if _, ok := cs.drills[name]; !ok && len(cs.drills) >= scorecard.MaxKinds {
				name = "other" // a card lists at most MaxKinds drills and the rest
			}
			d := cs.drills[name]
			if d == nil {
				d = scorecard.NewDrillSum(name)
				cs.drills[name] = d
			}
			d.Add(rec)
			continue
		}
		cb := cs.classes[rec.Sample]
		if cb == nil && len(cs.classes) >= scorecard.MaxKinds {
			l.seen.OverCap++ // a card has at most MaxKinds samples
			continue
		}
		if cb == nil {
			cb = l.pool.NewClassBuilder(rec.Sample)
			cs.classes[rec.Sample] = cb
		}
		cb.Add(rec)
	}
}

// lineReader reads lines of any length: one over max bytes (its newline
// left out) is skipped, its bytes read and dropped without being kept.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next is the next line without its newline, or over when it was longer
// than max; io.EOF after the last line (which may lack its newline).
func (lr *lineReader) next() (line []byte, over bool, err error) {
	lr.buf = lr.buf[:0]
	n := 0
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += len(frag)
		end := err == nil
		if end {
			frag = frag[:len(frag)-1]
			n--
		}
		switch {
		case over:
		case n > lr.max:
			over, lr.buf = true, lr.buf[:0]
		case end && len(lr.buf) == 0:
			return frag, false, nil
		default:
			lr.buf = append(lr.buf, frag...)
		}
		switch {
		case end:
			return lr.buf, over, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF && n > 0:
			return lr.buf, over, nil
		default:
			return nil, false, err
		}
	}
}

// Regions lists the regions with runs, by name.
func (l *Logs) Regions() []string { return slices.Sorted(maps.Keys(l.regions)) }

// Cards makes one card per region and target and, when there is more than
// one region, one fleet card per target from every region's runs pooled.
func (l *Logs) Cards(budgets map[string]scorecard.Budget) []*scorecard.Card {
	var cards []*scorecard.Card
	for k, cs := range l.cards {
		if k.region == "" && len(l.regions) < 2 {
			continue
		}
		c := cs.card(k.target, budgets)
		c.Region, c.Source = k.region, "results logs"
		if k.region == "" {
			c.Fleet, c.Source = true, fmt.Sprintf("results logs of %d regions", len(l.regions))
		}
		cards = append(cards, c)
	}
	order(cards)
	return cards
}

// card builds the card of one target: its classes in sample order, its
// drills in drill order.
func (cs *cardSum) card(target string, budgets map[string]scorecard.Budget) *scorecard.Card {
	present := map[string]bool{}
	for s := range cs.classes {
		present[s] = true
	}
	var classes []scorecard.Class
	for _, s := range sampleOrder(present) {
		classes = append(classes, cs.classes[s].Class())
	}
	var drills []scorecard.Drill
	for _, d := range drillOrder(slices.Collect(maps.Keys(cs.drills))) {
		drills = append(drills, cs.drills[d].Drill())
	}
	return scorecard.BuildClasses(target, classes, drills, budgets)
}
