package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/scorecard"
)

// LogFile is one results log (JSON lines, as the daemon's results_log
// writes them) and the region of its records that carry none.
type LogFile struct {
	Path, Region string
}

// Logs are the runs read from results logs, by region and target.
type Logs struct {
	Runs map[string]map[string][]scorecard.Run
	// Lines counts the lines read; Kept the runs selected; Outside the
	// runs outside the window or the filters; Bad the lines that are not
	// a record; NoTime the records without a readable started_at while a
	// window was asked for; Shutdown the runs cut by a daemon's shutdown
	// (logged, never counted as runs, as in the metrics).
	Lines, Kept, Outside, Bad, NoTime, Shutdown int
}

// logLine is a record as the results log holds it. Region and host are
// read when the record has them (a daemon that labels its records);
// fields a record lacks are absent, never zero.
type logLine struct {
	probe.Record
	Region string `json:"region,omitempty"`
	Host   string `json:"host,omitempty"`
}

// maxLine bounds one line: a record with every gap of a long answer.
const maxLine = 16 << 20

// ReadLogs reads the results logs and keeps the runs f selects.
func ReadLogs(files []LogFile, f Filter) (*Logs, error) {
	l := &Logs{Runs: map[string]map[string][]scorecard.Run{}}
	for _, lf := range files {
		if err := l.read(lf, f); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *Logs) read(lf LogFile, f Filter) error {
	fh, err := os.Open(lf.Path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLog, err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		l.Lines++
		var line logLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Target == "" || line.RequestID == "" {
			l.Bad++
			continue
		}
		if line.Error == "cancelled by shutdown" {
			l.Shutdown++
			continue
		}
		region := line.Region
		if region == "" {
			region = lf.Region
		}
		if region == "" {
			region = NoRegion
		}
		if !f.Since.IsZero() || !f.Until.IsZero() {
			at, err := time.Parse(time.RFC3339Nano, line.StartedAt)
			if err != nil {
				l.NoTime++
				continue
			}
			if (!f.Since.IsZero() && at.Before(f.Since)) || (!f.Until.IsZero() && !at.Before(f.Until)) {
				l.Outside++
				continue
			}
		}
		if !f.keep(region, line.Target) {
			l.Outside++
			continue
		}
		if l.Runs[region] == nil {
			l.Runs[region] = map[string][]scorecard.Run{}
		}
		l.Runs[region][line.Target] = append(l.Runs[region][line.Target], scorecard.Run{Record: line.Record})
		l.Kept++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s line %d: %w", ErrLog, lf.Path, l.Lines+1, err)
	}
	return nil
}

// Regions lists the regions with runs, by name.
func (l *Logs) Regions() []string { return slices.Sorted(maps.Keys(l.Runs)) }

// Cards makes one card per region and target and, when there is more than
// one region, one fleet card per target from every region's runs pooled.
func (l *Logs) Cards(budgets map[string]scorecard.Budget) []*scorecard.Card {
	var cards []*scorecard.Card
	fleet := map[string][]scorecard.Run{}
	for _, region := range l.Regions() {
		for target, runs := range l.Runs[region] {
			c := card(target, runs, budgets)
			c.Region = region
			c.Source = "results logs"
			cards = append(cards, c)
			fleet[target] = append(fleet[target], runs...)
		}
	}
	if len(l.Runs) > 1 {
		for target, runs := range fleet {
			c := card(target, runs, budgets)
			c.Fleet, c.Source = true, fmt.Sprintf("results logs of %d regions", len(l.Runs))
			cards = append(cards, c)
		}
	}
	order(cards)
	return cards
}

// card builds the card of one target's runs: plain runs by sample, drill
// runs summed per drill.
func card(target string, runs []scorecard.Run, budgets map[string]scorecard.Budget) *scorecard.Card {
	bySample, byDrill := map[string][]scorecard.Run{}, map[string][]scorecard.Run{}
	present := map[string]bool{}
	for _, r := range runs {
		if r.Record.Drill != "" && r.Record.Drill != probe.DrillNone {
			byDrill[r.Record.Drill] = append(byDrill[r.Record.Drill], r)
			continue
		}
		bySample[r.Record.Sample] = append(bySample[r.Record.Sample], r)
		present[r.Record.Sample] = true
	}
	var classes []scorecard.Class
	for _, s := range sampleOrder(present) {
		classes = append(classes, scorecard.ClassOf(s, bySample[s]))
	}
	var drills []scorecard.Drill
	for _, d := range drillOrder(slices.Collect(maps.Keys(byDrill))) {
		drills = append(drills, scorecard.SumDrill(d, byDrill[d]))
	}
	return scorecard.BuildClasses(target, classes, drills, budgets)
}
